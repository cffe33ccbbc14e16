"""``python -m gpubench.report``: the report's command line."""

import sys

from gpubench.report import main

sys.exit(main())
