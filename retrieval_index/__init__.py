"""Model cards and the retrieval index over them. Imported as ``graph_agent.retrieval_index``.

The index knows cards and vectors, not pipelines: it says which model to use and why, and
the tools run it.
"""

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.search import Candidate, Constraints, Selection, select

__all__ = ["Candidate", "Catalog", "Constraints", "ModelCard", "Selection", "select"]
