"""One declaration per tool: every declared tool has a runner its service can run, the
extension's copy is generated from the declarations, and a new tool is one declaration plus
one runner — its provider schemas (both APIs), the page executor's checks, the approval card
and the REPL's list all follow from it."""

from __future__ import annotations

import inspect
from types import MappingProxyType
from typing import Annotated

import msgspec
import pytest

from host.builtins.service import BuiltinTools
from host.calls.router import Router, load_runner
from host.engine.interaction_kinds import Kind
from host.tools import catalog, generate
from host.tools.call import ToolCall
from host.tools.params import PageParams
from host.tools.result import ToolResult
from host.tools.schema import describe, provider_schema
from host.tools.spec import SERVICES, Runner, ToolSpec
from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeAnthropic, FakeOpenAI, Reply, last_tool_result_text

@pytest.mark.parametrize("name", sorted(catalog.CATALOG))
def test_every_declared_tool_has_a_runner_its_service_can_run(name):
    spec = catalog.CATALOG[name]
    assert spec.runner is not None and spec.runner.service in SERVICES, name
    assert spec.params_type is not None, name
    runner = load_runner(spec.runner)
    if spec.runner.service == "interactions":
        assert isinstance(runner, Kind) and spec.interaction, name
    else:
        assert inspect.iscoroutinefunction(runner), name
        assert list(inspect.signature(runner).parameters)[:1] == ["call"], name


def test_an_mcp_tool_is_declared_with_the_mcp_runner():
    spec = catalog.lookup("mcp__github__list_issues")
    assert spec is not None and spec.runner == catalog.MCP_RUNNER
    assert inspect.iscoroutinefunction(load_runner(spec.runner))


def test_the_generated_extension_copy_is_not_stale():
    assert generate.OUTPUT.read_text(encoding="utf-8") == generate.render(), \
        "extension/generated/tools.js is stale: run `make generate`"


def test_check_mode_reports_staleness(tmp_path, monkeypatch):
    stale = tmp_path / "tools.js"
    stale.write_text("// old\n")
    monkeypatch.setattr(generate, "OUTPUT", stale)
    assert generate.main(["--check"]) == 1
    assert generate.main([]) == 0
    assert generate.main(["--check"]) == 0


# -- a new tool: one declaration, one runner --------------------------------------------------


class StampParams(PageParams, kw_only=True):
    element: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    word: Annotated[str, msgspec.Meta(min_length=1, max_length=12, description="The stamp's text.")]


async def run_stamp(call: ToolCall, builtins: BuiltinTools) -> ToolResult:
    return ToolResult(ok=True, tool=call.tool, text=f"stamped {call.params.word!r}")


STAMP = ToolSpec(name="stamp", label="Stamp the page", level="L1", effects="write", category="fill",
                 description="Put a rubber stamp on the page.", params_type=StampParams,
                 runner=Runner("builtins", f"{__name__}:run_stamp"), page_executor=True)


@pytest.fixture
def stamp(monkeypatch):
    monkeypatch.setattr(catalog, "CATALOG", MappingProxyType({**catalog.CATALOG, "stamp": STAMP}))
    return STAMP


def test_the_extension_copy_of_a_new_tool_comes_from_its_declaration(stamp):
    content = generate.content_schema(stamp)
    assert content["properties"]["word"] == {"type": "string", "minLength": 1, "maxLength": 12}
    assert "tabId" not in content["properties"] and "element" not in content["properties"]
    assert content["required"] == ["word"] and content["additionalProperties"] is False
    document = generate.document()
    assert document["tools"]["stamp"] == {"label": "Stamp the page", "level": "L1", "effects": "write",
                                          "category": "fill"}
    assert document["content"]["stamp"] == content


def test_the_repl_lists_a_new_tool_from_its_declaration(stamp):
    router = Router({"builtins": BuiltinTools()})
    listed = {spec.name: describe(spec) for spec in router.offered()}
    assert listed["stamp"]["label"] == "Stamp the page"
    assert listed["stamp"]["parameters"] == provider_schema(stamp)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_new_tool_runs_through_the_loop_from_its_declaration_alone(stamp, tmp_path, kind):
    with (FakeOpenAI() if kind == "openai" else FakeAnthropic()) as server:
        server.add(Reply(tool_calls=[("stamp", {"element": "the header", "word": "PAID"})]), Reply(text="Stamped."))
        harness = Harness(tmp_path, server.url, kind=kind, services={"builtins": BuiltinTools()})
        await harness.start()
        try:
            thread = await harness.new_thread()
            await harness.submit(thread, "stamp it")
            request = await harness.recorder.wait_for("approval.request")
            card = request["request"]
            assert (card["tool"], card["label"], card["level"]) == ("stamp", "Stamp the page", "L1")
            assert card["params"] == {"element": "the header", "word": "PAID"}
            await harness.answer(request["approvalId"], "accept")
            await harness.turn_done()
        finally:
            await harness.stop()
        first, last = server.requests[0]["body"], server.requests[-1]["body"]
        if kind == "openai":
            offered = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
        else:
            offered = {t["name"]: t["input_schema"] for t in first["tools"]}
        assert offered["stamp"] == provider_schema(stamp)
        assert offered["stamp"]["properties"]["word"]["maxLength"] == 12
        assert "stamped 'PAID'" in last_tool_result_text(last)
