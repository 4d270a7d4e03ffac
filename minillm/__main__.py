"""``python -m minillm …`` is the same program as the ``minillm`` console script."""
from minillm.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
