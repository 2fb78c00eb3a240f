"""``python -m acpref.echo [OPTIONS]``: the same as ``acpref echo [OPTIONS]``."""

import sys

from .._cli import main

sys.exit(main(["echo", *sys.argv[1:]]))
