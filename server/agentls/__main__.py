"""`python -m agentls` runs the console script."""

import sys

from agentls.cli import main

sys.exit(main())
