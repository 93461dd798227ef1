"""A running tool's request for a model answer (an MCP server's sampling), made with the thread's
own model connection once the user allowed the exact request on a card. Nothing of it enters
the conversation: the answer goes back to the server only, and its tokens count in the turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol import ui

if TYPE_CHECKING:
    from host.engine.parts import TurnContext


async def sample(runner: "TurnContext", request: dict[str, Any]) -> dict[str, Any]:
    """`request` {system, messages [{role, text}], maxTokens}: the model's answer {text, model,
    stop}, its usage added to the run's tokens."""
    from contextlib import aclosing

    from host.providers.model import Completion, Message, ModelRequest, Text

    engine = runner.engine
    model = (getattr(runner, "overrides", None) or {}).get("model") or {}
    provider = engine.providers.get(model.get("connectionId"))
    messages = tuple(Message(m["role"], (Text(m["text"]),)) for m in request["messages"])
    asked = ModelRequest(model=model.get("modelId") or "", system=request.get("system") or "", messages=messages,
                         tools=(), max_tokens=int(request["maxTokens"]))
    completion: Completion | None = None
    async with aclosing(provider.stream(asked)) as events:
        async for event in events:
            if isinstance(event, Completion):
                completion = event
    if completion is None:
        raise RuntimeError("the model's stream ended without an answer")
    usage = completion.usage
    with engine.store.transaction() as conn:
        current = engine.store.run(runner.run_id, conn)
        engine.store.update_run(conn, runner.run_id, tokens_used=current.tokens_used + usage.input + usage.output)
    engine.bus.emit(ui.TokenUsage, runner.thread_id, turn_id=runner.turn_id,
                    usage=ui.Usage(input=usage.input, output=usage.output, cache_read=usage.cache_read,
                                   cache_write=usage.cache_write))
    return {"text": completion.text, "model": model.get("modelId") or getattr(provider, "model", ""),
            "stop": completion.stop_reason}
