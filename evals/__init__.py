"""graph-agent package."""
