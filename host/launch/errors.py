"""The one exception family of `launch`: each message says what went wrong and what to do."""


class LaunchError(Exception):
    """The launch cannot go on."""
