"""``python -m graph_agent.cli``."""

import sys

from graph_agent.cli import main

sys.exit(main())
