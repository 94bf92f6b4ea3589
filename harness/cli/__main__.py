"""``python -m harness.cli``: the ``pit-harness`` command."""

import sys

from harness.cli import main

sys.exit(main())
