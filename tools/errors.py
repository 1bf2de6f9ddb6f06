"""Errors a tool raises when it cannot do its job, each saying what to do about it."""


class ToolError(RuntimeError):
    """A tool failed on this input with this model; another candidate model may succeed."""


class InputFileError(ValueError):
    """An input file is missing or is not the kind of media the step needs."""


class ModelUnavailableError(RuntimeError):
    """The model's weights are not on this machine and nothing may be downloaded."""
