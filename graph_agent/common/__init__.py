"""Leaves every layer may import: they import nothing of graph_agent themselves.

``first_imports`` serialises the first import of heavy libraries across threads;
``redact`` keeps secrets out of errors and logs. Tools, the card index, planning, nodes and
the CLI all use them, so they sit below all of them (an import-linter contract holds it).
"""
