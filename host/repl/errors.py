"""Mistakes in how a REPL helper was called: shown as one line, without a traceback."""


from protocol.errors import TabwardenError


class UsageError(TabwardenError, ValueError):
    """A `tw` helper was called wrongly; the message says how to call it."""

    code = "usage"
