"""Errors the graph raises for bad requests or inputs, each saying what to do."""


class RequestError(ValueError):
    """The request or its inputs cannot be planned or run as given."""
