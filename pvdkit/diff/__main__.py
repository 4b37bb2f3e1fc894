"""``python3 -m pvdkit.diff A B …``: the diff command without the ``pvdkit`` front end."""

import sys

from pvdkit.diff.cli import main

sys.exit(main())
