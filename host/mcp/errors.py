"""MCP failures with stable codes, and the mapping from what the SDK and HTTP stack raise.

    mcp_not_configured  no such server in mcp.json, or the file is invalid
    mcp_disabled        the server is configured with "enabled": false
    mcp_unreachable     no connection (refused, DNS, TLS, reset)
    mcp_auth_failed     the server answered 401 or 403
    mcp_timeout         no answer in time (the call was cancelled)
    mcp_protocol_error  the server broke the protocol or answered a JSON-RPC error
    mcp_unavailable     the SDK is missing or the credentials cannot be read
    mcp_token_origin_changed  the stored token was given for another origin than the server's now
    mcp_session_expired the server no longer knows the session (HTTP 404, or 400 "no valid
                        session"): the request was refused unprocessed; start a new session
    mcp_tool_changed    the server changed the tool's definition since the call was judged
    unsupported         the server asked for something the host does not do (sampling...)
"""

from __future__ import annotations

import asyncio
from typing import Iterable

from protocol.errors import TabwardenError

CONNECTION_CLOSED = -32000  # the SDK's JSON-RPC code for a session whose transport ended
PARSE_ERROR = -32700  # JSON-RPC: the answer was not JSON (or not JSON-RPC)
MAX_DETAIL = 300
SESSION_STATUSES = (400, 404)  # how servers refuse a session they do not know


class McpFailure(TabwardenError):
    """Something went wrong talking to a server; `code` is one of the codes above."""

    def __init__(self, code: str, message: str, *, sent: bool = False):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.sent = sent  # the request had reached the server: the call may have taken effect


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order; the exception itself otherwise.
    The SDK runs its transport in task groups, so one refused connection arrives wrapped twice."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def classify(exc: BaseException, server: str, statuses: Iterable[int] = ()) -> McpFailure:
    """What `exc`, raised while talking to `server`, means for the user. `statuses` are the
    HTTP statuses seen on the connection: the SDK turns a 401 into a generic JSON-RPC error."""
    found = leaves(exc)
    if any(isinstance(leaf, McpFailure) for leaf in found):
        return next(leaf for leaf in found if isinstance(leaf, McpFailure))  # type: ignore[return-value]
    statuses = list(statuses)
    if session_lost(found[0], statuses):
        status = next(s for s in reversed(statuses) if s in SESSION_STATUSES)
        return McpFailure("mcp_session_expired", f"MCP server {server!r} no longer knows this session (HTTP {status})")
    denied = [s for s in statuses if s in (401, 403)]
    if denied:
        return McpFailure("mcp_auth_failed", f"MCP server {server!r} refused the credentials (HTTP {denied[-1]}); "
                                             "check its bearer token (mcp.set_token) or headers")
    names = {type(leaf).__name__ for leaf in found}
    if any(isinstance(leaf, (TimeoutError, asyncio.TimeoutError)) for leaf in found) or \
            names & {"ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout"}:
        return McpFailure("mcp_timeout", f"MCP server {server!r} did not answer in time")
    if names & {"ConnectError", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "OSError",
                "ConnectionError", "ClosedResourceError", "BrokenResourceError", "EndOfStream"} or \
            any(isinstance(leaf, OSError) for leaf in found):
        detail = next((str(leaf) for leaf in found if str(leaf)), type(found[0]).__name__)
        return McpFailure("mcp_unreachable", f"cannot reach MCP server {server!r}: {detail}")
    leaf = found[0]
    code = getattr(leaf, "code", None)
    if code == CONNECTION_CLOSED:
        return McpFailure("mcp_unreachable", f"MCP server {server!r} closed the connection")
    if code == PARSE_ERROR or _validation_errors(leaf) is not None:
        return McpFailure("mcp_protocol_error", f"MCP server {server!r} sent a malformed answer: {_what(leaf)}")
    suffix = f" (JSON-RPC error {code})" if isinstance(code, int) else f" ({type(leaf).__name__})"
    return McpFailure("mcp_protocol_error", f"MCP server {server!r}: {_what(leaf)}{suffix}")


def _validation_errors(leaf: BaseException) -> list[dict] | None:
    errors = getattr(leaf, "errors", None)  # a pydantic ValidationError: the answer had the wrong shape
    if not callable(errors) or type(leaf).__name__ != "ValidationError":
        return None
    try:
        found = errors(include_input=False, include_url=False)
    except Exception:
        return None
    return found if isinstance(found, list) else None


def _what(leaf: BaseException) -> str:
    """What was wrong, in one bounded line: where the answer broke its schema, else the first
    line of the error (the SDK's messages run to pages, with the server's bytes in them)."""
    errors = _validation_errors(leaf)
    if errors:
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '$'}: {e.get('msg', '?')}" for e in errors[:3]]
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        return f"{'; '.join(parts)}{more}"[:MAX_DETAIL]
    text = str(getattr(leaf, "message", None) or leaf or type(leaf).__name__)
    first = text.strip().splitlines()[0] if text.strip() else type(leaf).__name__
    return first if len(first) <= MAX_DETAIL else first[:MAX_DETAIL - 1] + "…"


def session_lost(leaf: BaseException, statuses: list[int]) -> bool:
    """Whether `leaf` is the server refusing an unknown session: the SDK's "Session terminated"
    stand-in for a 404, or a JSON-RPC error about the session carried by a 404 or a 400 (some
    servers answer 400 "No valid session ID provided" after a restart)."""
    message = str(getattr(leaf, "message", None) or leaf).lower()
    # Recent statuses, not only the last: a concurrent request may have answered since.
    if not any(s in SESSION_STATUSES for s in statuses[-4:]) or getattr(leaf, "code", None) is None:
        return False
    return message == "session terminated" or "session" in message
