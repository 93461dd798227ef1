"""Provider failures with clear attribution: whose fault (auth, rate limit, network, model),
whether retrying can help, and what the provider said."""

from __future__ import annotations

from typing import Any

from protocol.errors import TabwardenError

# kind -> (readable cause, retryable)
KINDS: dict[str, tuple[str, bool]] = {
    "auth": ("the provider refused the API key", False),
    "rate_limit": ("the provider is rate limiting requests", True),
    "network": ("the provider could not be reached", True),
    "bad_model": ("the provider does not know this model", False),
    "bad_request": ("the provider rejected the request", False),
    "server": ("the provider had an internal error", True),
    "overloaded": ("the provider is overloaded", True),
    "protocol": ("the provider's answer could not be understood", False),
    "refused": ("the model refused to answer", False),
    "not_configured": ("no model provider is configured", False),
}


class ProviderError(TabwardenError):
    """One failed model call. `kind` is one of `KINDS`; `provider` names the configured
    connection, `status` the HTTP status when there was one."""

    def __init__(self, kind: str, message: str, *, provider: str = "", status: int | None = None,
                 retry_after: float | None = None, details: dict[str, Any] | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown provider error kind {kind!r}")
        self.kind = kind
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        self.details = dict(details or {})
        super().__init__(self.describe())

    @property
    def code(self) -> str:  # type: ignore[override]
        """The kind, as a code (`rate_limited`, `auth`...)."""
        return self.kind

    @property
    def retryable(self) -> bool:
        """Whether trying again later may succeed."""
        return KINDS[self.kind][1]

    def describe(self) -> str:
        """`provider "x": the provider refused the API key (HTTP 401): <their message>`; for
        `not_configured` the message alone, which already says what to do."""
        if self.kind == "not_configured":
            return self.message
        who = f'provider "{self.provider}": ' if self.provider else ""
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{who}{KINDS[self.kind][0]}{status}: {self.message}"

    def wire_details(self) -> dict[str, Any]:
        """JSON-ready facts for the UI's error card."""
        out: dict[str, Any] = {"provider": self.provider, "kind": self.kind}
        if self.status is not None:
            out["status"] = self.status
        if self.retry_after is not None:
            out["retryAfter"] = self.retry_after
        out.update(self.details)
        return out


def _mentions_model(text: str) -> bool:
    lowered = text.lower()
    return "model" in lowered and any(w in lowered for w in ("not found", "does not exist", "unknown", "invalid",
                                                               "not exist", "unsupported", "no such"))


def classify_status(status: int, message: str, *, provider: str = "", retry_after: float | None = None,
                    details: dict[str, Any] | None = None) -> ProviderError:
    """The ProviderError for an HTTP error status and the provider's message."""
    if status in (401, 403):
        kind = "auth"
    elif status == 429:
        kind = "rate_limit"
    elif status == 529:
        kind = "overloaded"
    elif status == 404:
        kind = "bad_model" if _mentions_model(message) or "model" in message.lower() else "bad_request"
    elif status in (400, 422):
        kind = "bad_model" if _mentions_model(message) else "bad_request"
    elif status >= 500:
        kind = "server"
    else:
        kind = "bad_request"
    return ProviderError(kind, message or f"HTTP {status}", provider=provider, status=status,
                         retry_after=retry_after, details=details)
