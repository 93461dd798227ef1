"""Model providers (settings page): saving, verifying, choosing the default one and removing
one. Keys go to the key store and are never sent back."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.ui.common import Count, Shape, SubmissionId, UiMessage

ProviderName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class ProvidersSave(UiMessage, tag="providers.save", kw_only=True):
    """Add or replace a provider. The key goes to the key store and is never sent back;
    omitted, the stored key stays."""

    submission_id: SubmissionId
    name: ProviderName
    kind: Literal["openai", "anthropic"]
    base_url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    api_key: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    make_default: bool = False


class ProvidersVerify(UiMessage, tag="providers.verify", kw_only=True):
    """Send one small real request to the provider (answered with `providers.verified`)."""

    submission_id: SubmissionId
    name: ProviderName


Detail = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class UserDetailsSave(UiMessage, tag="userDetails.save", kw_only=True):
    """Replace the user's own details (engine.json `userDetails`): their name, e-mail addresses,
    phone, postal address, their accounts and those accounts' sites. Each is the user's words in
    every task."""

    submission_id: SubmissionId
    details: Annotated[list[Detail], msgspec.Meta(max_length=50)] = []


class ProvidersSetDefault(UiMessage, tag="providers.setDefault", kw_only=True):
    submission_id: SubmissionId
    name: ProviderName


class ProvidersRemove(UiMessage, tag="providers.remove", kw_only=True):
    """Remove a provider and its stored key; removing the default one leaves no default."""

    submission_id: SubmissionId
    name: ProviderName


class LeftOutTool(Shape, kw_only=True):
    """A tool the provider's last request could not offer (a limit or a schema it cannot take)."""

    name: str
    reason: str


class ProviderEntry(Shape, kw_only=True):
    name: str
    kind: str
    base_url: str
    model: str
    is_default: bool = False
    key: Literal["stored", "env", "none"] = "none"
    # The tools the provider's last request in this host had to leave out, and why.
    left_out: list[LeftOutTool] = []


class ProvidersVerified(UiMessage, tag="providers.verified", kw_only=True):
    submission_id: SubmissionId
    name: str
    ok: bool
    message: str
    model: str = ""
    error_kind: str | None = None
    elapsed_ms: Count = 0
