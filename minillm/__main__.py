"""``python -m minillm …`` is the same program as the ``minillm`` console script.

``main()`` first makes BLAS use one thread unless the user chose (``minillm/cli/_threads.py``).
"""
from minillm.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
