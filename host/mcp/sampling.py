"""An MCP server's request for a model answer (sampling), for a server whose settings allow it:
the exact request (its messages, its system prompt, the token cap) is shown to the user on a
card with the server's name; only once allowed is it sent, with the thread's own model
connection (host/engine/tool_sampling.py), and the answer goes back to the server alone. Text
messages only; a request with images, audio or tools, one over the limits, or one no one can
allow (the REPL), is refused with an error the server can tell."""

from __future__ import annotations

import logging
from typing import Any

from host.tools.asking import Asker, Sampler

log = logging.getLogger("tabwarden.mcp")

MAX_MESSAGES = 20
MAX_TEXT = 8000
MAX_TOKENS = 4096  # the most a server's request may ask for; its own cap if lower


class SamplingRefused(Exception):
    """Why the request was not sent to a model, in words for the server."""


def request_of(server_id: str, params: Any) -> dict[str, Any]:
    """The card's request from the SDK's CreateMessageRequestParams; raises SamplingRefused."""
    if getattr(params, "tools", None):
        raise SamplingRefused("requests with tools are not supported")
    messages = []
    for message in list(getattr(params, "messages", None) or ())[:MAX_MESSAGES + 1]:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        if not blocks or any(getattr(block, "type", None) != "text" for block in blocks):
            raise SamplingRefused("only text messages are supported")
        text = "\n".join(block.text for block in blocks)
        if len(text) > MAX_TEXT:
            raise SamplingRefused(f"a message is over {MAX_TEXT} characters")
        messages.append({"role": "assistant" if message.role == "assistant" else "user", "text": text})
    if not messages or len(messages) > MAX_MESSAGES or messages[-1]["role"] != "user":
        raise SamplingRefused(f"1 to {MAX_MESSAGES} messages are needed, the last one the user's")
    system = getattr(params, "system_prompt", None) or ""
    if len(system) > MAX_TEXT:
        raise SamplingRefused(f"the system prompt is over {MAX_TEXT} characters")
    tokens = max(1, min(int(getattr(params, "max_tokens", MAX_TOKENS) or MAX_TOKENS), MAX_TOKENS))
    return {"kind": "sampling", "server": server_id, "messages": messages, "system": system, "maxTokens": tokens}


async def sample_for_server(asker: Asker | None, sampler: Sampler | None, server_id: str, params: Any) -> Any:
    """The SDK's answer to `sampling/createMessage`: a CreateMessageResult once allowed and
    answered, else an ErrorData saying why."""
    from mcp_types import CreateMessageResult, ErrorData, TextContent

    if asker is None or sampler is None:
        return ErrorData(code=-1, message="no one can allow this request here")
    try:
        request = request_of(server_id, params)
    except SamplingRefused as why:
        return ErrorData(code=-1, message=f"Tabwarden refused the request: {why}")
    answer = await asker(request)
    if not isinstance(answer, dict) or answer.get("kind") != "submit":
        return ErrorData(code=-1, message="User rejected sampling request")
    try:
        made = await sampler(request)
    except Exception as exc:  # the model connection failed: the server hears that, not the details
        log.info("sampling for MCP server %s failed: %s", server_id, exc)
        return ErrorData(code=-1, message="the model did not answer")
    stop = {"end": "endTurn", "max_tokens": "maxTokens"}.get(made.get("stop"), "endTurn")
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text=made["text"]),
                               model=str(made.get("model") or ""), stop_reason=stop)
