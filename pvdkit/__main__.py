"""``python -m pvdkit`` runs the ``pvdkit`` command line."""

import sys

from pvdkit.cli import main

sys.exit(main())
