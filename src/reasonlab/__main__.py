"""``python -m reasonlab``: the command line without its installed entry point (e.g. run from a source tree)."""

from reasonlab.cli import main

main()
