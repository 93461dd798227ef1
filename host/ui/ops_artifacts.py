"""artifact.download: the browser saves a thread's artifact into the downloads folder; the ack
comes once the browser took the download. An unknown artifact is refused (and the refusal
stored); a missing or failing browser is refused without a receipt, so the same op may succeed
once the browser is back."""

from __future__ import annotations

from typing import Any

from protocol import ui

from host.ui.client import Client
from host.ui.op_context import OpContext


async def artifact_download(ctx: OpContext, client: Client, op: ui.ArtifactDownload, mark: str) -> Any:
    """artifact.download: the browser saves the artifact into the downloads folder."""
    from host.tools.failure import ToolFailure
    from host.builtins.artifacts import offer
    from host.engine.store import NotFound

    engine = ctx.engine
    try:
        row = engine.store.attachment(op.artifact_id, content=True)
    except NotFound:
        return ctx.reject(client, op, mark, "artifact_not_found", f"no artifact {op.artifact_id!r}")
    builtins = engine.tools.services.get("builtins")
    if builtins is None or builtins.bridge is None:
        return ui.CommandRejected(submission_id=op.submission_id, code="browser_unavailable",
                                  message="no browser is connected to save the file")
    try:
        await offer(builtins.bridge, row)
    except ToolFailure as failure:
        # Not stored: once the browser is back, the same op may succeed.
        return ui.CommandRejected(submission_id=op.submission_id, code="browser_unavailable",
                                  message=f"the browser did not take the download: {failure.message}",
                                  thread_id=row.thread_id)
    return ctx.commit(client, op, mark, lambda conn: ctx.ack(op, thread_id=row.thread_id))
