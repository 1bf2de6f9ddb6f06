"""Graph nodes. Nodes orchestrate: models run in ``graph_agent.tools``, cards live in
``graph_agent.retrieval_index``."""
