"""``python -m viewer [FILE ...]`` — the same as ``pvdkit view``."""

import sys

from viewer.cli import main

sys.exit(main())
