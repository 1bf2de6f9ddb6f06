"""``python -m graph_agent.cli``."""

from graph_agent.cli import console_main

console_main()
