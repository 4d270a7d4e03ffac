"""Running a command in-process: ``main(argv)`` -> (exit code, stdout, stderr)."""
from minillm.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
