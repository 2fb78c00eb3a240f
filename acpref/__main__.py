"""``python -m acpref``: the same as the ``acpref`` command."""

import sys

from ._cli import main

sys.exit(main())
