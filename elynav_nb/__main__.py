"""``python -m elynav_nb`` is the ``elynav`` console script."""

import sys

from elynav_nb.cli import main

sys.exit(main())
