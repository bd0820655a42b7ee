"""``python -m cxreval``: the command line."""

from cxreval.cli.main import run

if __name__ == "__main__":
    run()
