"""The one exception family of `launch`: each message says what went wrong and what to do."""


from protocol.errors import TabwardenError


class LaunchError(TabwardenError):
    """The launch cannot go on."""

    code = "launch_failed"
