"""Mistakes in how a REPL helper was called: shown as one line, without a traceback."""


class UsageError(ValueError):
    """A `tw` helper was called wrongly; the message says how to call it."""
