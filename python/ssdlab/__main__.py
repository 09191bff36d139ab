"""``python -m ssdlab``: the command line."""

import sys

from ssdlab._entry import main

sys.exit(main())
