"""``python -m ssdlab``: the command line."""

import sys

from ssdlab.cli import main

sys.exit(main())
