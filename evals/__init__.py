"""Evaluation: datasets, metrics and LangSmith runners. Imported as ``graph_agent.evals``."""
