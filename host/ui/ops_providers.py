"""Provider ops from the settings page: save a provider (its key into the key store), choose the
default, remove one (with its key), and verify one with a real request.

Keys travel from the page to the host once and are never sent back: the page only learns
whether a key is stored. Verification runs beside the op queue (a slow provider must not hold up
other ops) and answers with `providers.verified` when the request is done.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from protocol import ui

from host.ui.client import Client
from host.ui.op_context import OpContext
from host.ui.ops_settings import change
from host.config_files import EditRefused

log = logging.getLogger("tabwarden.engine")

VERIFY_TIMEOUT_S = 30.0
VERIFY_PROMPT = "Reply with the single word OK."
_verifying: set[asyncio.Task[None]] = set()


def _update(edit) -> None:
    from host.config_files import ConfigFileError
    from host.providers.config import load_config, parse_config, save_config

    try:
        current = load_config().model_dump(by_alias=True, exclude_defaults=True)
        updated = parse_config(edit(current))
    except ConfigFileError as exc:
        problems = "; ".join(f"{path}: {message}" for path, message in exc.problems)
        raise EditRefused("invalid_provider", problems or str(exc)) from None
    save_config(updated)


def providers_save(ctx: OpContext, client: Client, op: ui.ProvidersSave, mark: str) -> Any:
    """providers.save: add or replace a provider in engine.json; its key goes to the key store."""
    def save() -> None:
        def edit(current: dict[str, Any]) -> dict[str, Any]:
            entry = dict(current.get("providers", {}).get(op.name, {}))
            entry.update(kind=op.kind, baseUrl=op.base_url, model=op.model)
            current.setdefault("providers", {})[op.name] = entry
            if op.make_default:
                current["defaultProvider"] = op.name
            return current

        _update(edit)
        if op.api_key:
            try:
                ctx.engine.providers.key_store().set(op.name, op.api_key)
            except Exception as exc:  # SecretError: the provider is saved, its key is not
                raise EditRefused("invalid_provider", f"the provider was saved but its key could not be "
                                                          f"stored: {exc}") from None

    return change(ctx, client, op, mark, save)


def providers_set_default(ctx: OpContext, client: Client, op: ui.ProvidersSetDefault, mark: str) -> Any:
    """providers.setDefault: the provider (and so the model) new turns use."""
    def choose() -> None:
        def edit(current: dict[str, Any]) -> dict[str, Any]:
            if op.name not in current.get("providers", {}):
                raise EditRefused("provider_not_found", f"there is no provider named {op.name!r} - at `$.name`")
            current["defaultProvider"] = op.name
            return current

        _update(edit)

    return change(ctx, client, op, mark, choose)


def user_details_save(ctx: OpContext, client: Client, op: ui.UserDetailsSave, mark: str) -> Any:
    """userDetails.save: the user's own details, the user's words in every task from then on."""
    def save() -> None:
        def edit(current: dict[str, Any]) -> dict[str, Any]:
            details = [d.strip() for d in op.details if d.strip()]
            if details:
                current["userDetails"] = details
            else:
                current.pop("userDetails", None)
            return current

        _update(edit)

    return change(ctx, client, op, mark, save)


def providers_remove(ctx: OpContext, client: Client, op: ui.ProvidersRemove, mark: str) -> Any:
    """providers.remove: the provider and its stored key (host/providers/removal.py)."""
    from host.providers.removal import remove_provider

    return change(ctx, client, op, mark, lambda: remove_provider(op.name, ctx.engine.providers.key_store()))


def providers_verify(ctx: OpContext, client: Client, op: ui.ProvidersVerify, mark: str) -> None:
    """providers.verify: one small real request to the provider; the answer comes when it is done."""
    task = asyncio.ensure_future(_verify(ctx.engine, op))
    _verifying.add(task)

    def done(finished: asyncio.Task[ui.ProvidersVerified]) -> None:
        _verifying.discard(finished)
        if not finished.cancelled() and finished.exception() is None:
            client.send(finished.result())

    task.add_done_callback(done)
    return None


async def _verify(engine: Any, op: ui.ProvidersVerify) -> ui.ProvidersVerified:
    from host.providers.errors import ProviderError
    from host.providers.model import Completion, Message, ModelRequest, Text

    started = time.monotonic()

    def answer(ok: bool, message: str, model: str = "", kind: str | None = None) -> ui.ProvidersVerified:
        return ui.ProvidersVerified(submission_id=op.submission_id, name=op.name, ok=ok, message=message[:2000],
                                    model=model, error_kind=kind, elapsed_ms=int((time.monotonic() - started) * 1000))

    try:
        provider = engine.providers.get(op.name)
    except ProviderError as exc:
        return answer(False, exc.describe(), kind=exc.kind)
    request = ModelRequest(model=provider.model, system="You check that a connection works.",
                           messages=(Message("user", (Text(VERIFY_PROMPT),)),), max_tokens=16)

    async def ask() -> str:
        async for event in provider.stream(request):
            if isinstance(event, Completion):
                return event.text
        return ""

    try:
        text = await asyncio.wait_for(ask(), VERIFY_TIMEOUT_S)
    except ProviderError as exc:
        return answer(False, exc.describe(), provider.model, exc.kind)
    except asyncio.TimeoutError:
        return answer(False, f"no answer within {VERIFY_TIMEOUT_S:g} seconds", provider.model, "network")
    except Exception as exc:  # a bug in an adapter must still answer the page
        log.warning("verifying provider %s failed", op.name, exc_info=True)
        return answer(False, f"{type(exc).__name__}: {exc}", provider.model, "protocol")
    shown = " ".join(text.split())[:200] or "(an empty answer)"
    return answer(True, f"{provider.model} answered: {shown}", provider.model)
