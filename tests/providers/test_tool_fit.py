"""Tool schemas fitted to each provider: a server's tool with a top-level combinator, `$ref` or
a name the APIs refuse never breaks a request; tools past OpenAI's limit are left out (the
server's first, the built-ins kept) and every tool left out says why."""

from __future__ import annotations

import pytest

from host.providers.model import Message, ModelRequest, Text, ToolSchema
from host.providers.tool_fit import fit_schema, fit_tools
from tests.support.replay_server import Answer, ReplayServer, transcript
from tests.providers.test_dialects import client

ONE_OF = {"oneOf": [
    {"type": "object", "properties": {"url": {"type": "string"}, "mode": {"type": "string"}}, "required": ["url", "mode"]},
    {"type": "object", "properties": {"query": {"type": "string"}, "mode": {"type": "string"}}, "required": ["query", "mode"]}],
    "description": "Find a page"}


def test_a_top_level_one_of_objects_becomes_one_object_requiring_what_every_form_requires():
    fitted, _ = fit_schema(ONE_OF)
    assert fitted["type"] == "object" and set(fitted["properties"]) == {"url", "query", "mode"}
    assert fitted["required"] == ["mode"] and "oneOf" not in fitted
    assert "Requires one of these forms: mode, url; mode, query" in fitted["description"]


def test_all_of_parts_merge_and_require_everything_they_require():
    fitted, _ = fit_schema({"allOf": [{"type": "object", "properties": {"a": {}}, "required": ["a"]},
                                      {"properties": {"b": {}}, "required": ["b"]}]})
    assert fitted == {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}


def test_a_top_level_ref_is_resolved():
    fitted, _ = fit_schema({"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object", "properties": {"x": {}}}}})
    assert fitted["type"] == "object" and fitted["properties"] == {"x": {}} and "$defs" in fitted


@pytest.mark.parametrize("schema,why", [
    ({"type": "string"}, "'string', not an object"),
    ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "not all objects"),
    ({"$ref": "#/$defs/Missing"}, "does not define"),
    ([1, 2], "not a JSON object"),
])
def test_what_cannot_be_fitted_is_left_out_with_its_reason(schema, why):
    kept, left = fit_tools((ToolSchema("mcp__s__bad", "Bad", schema), ToolSchema("click", "Click", {"type": "object"})),
                           "anthropic")
    assert [t.name for t in kept] == ["click"]
    assert [item.name for item in left] == ["mcp__s__bad"] and why in left[0].reason


def test_past_openais_limit_the_builtins_stay_and_the_servers_tools_past_it_are_named():
    builtins = [ToolSchema(f"tool_{n}", "", {"type": "object"}) for n in range(44)]
    served = [ToolSchema(f"mcp__s__t{n}", "", {"type": "object"}) for n in range(85)]
    kept, left = fit_tools(tuple(served[:40] + builtins + served[40:]), "openai")
    assert len(kept) == 128 and all(t in kept for t in builtins)
    assert [item.name for item in left] == ["mcp__s__t84"] and "limit of 128" in left[0].reason
    assert len(fit_tools(tuple(builtins + served), "anthropic")[0]) == 129


def test_a_name_the_apis_refuse_is_left_out():
    _, left = fit_tools((ToolSchema("mcp__s__" + "x" * 80, "", {"type": "object"}),), "openai")
    assert "name" in left[0].reason


@pytest.mark.parametrize("kind,fixture", [("anthropic", "anthropic-no-final-blank-line.sse"),
                                          ("openai", "openai-text.sse")])
async def test_the_request_carries_the_fitted_schema_and_not_the_unfit_tool(kind, fixture):
    tools = (ToolSchema("mcp__s__find", "Find", ONE_OF), ToolSchema("mcp__s__word", "Word", {"type": "string"}))
    request = ModelRequest(model="", system="", messages=(Message("user", (Text("go"),)),), tools=tools)
    with ReplayServer(Answer(transcript(fixture))) as server:
        provider = client(kind, server)
        [event async for event in provider.stream(request)]
        await provider.aclose()
        body = server.requests[0]
    sent = body["tools"]
    assert len(sent) == 1
    schema = sent[0]["input_schema"] if kind == "anthropic" else sent[0]["function"]["parameters"]
    assert schema["type"] == "object" and "oneOf" not in schema
    assert [item.name for item in provider.left_out] == ["mcp__s__word"]


# Playwright MCP's screenshot tool as the server declares it (a validator's output type: the
# defaulted `scale` listed as required).
SCREENSHOT = {"type": "object", "properties": {
    "type": {"type": "string", "enum": ["png", "jpeg", "webp"]}, "filename": {"type": "string"},
    "scale": {"default": "css", "type": "string", "enum": ["css", "device"]}},
    "required": ["scale"], "additionalProperties": False}


def test_a_parameter_with_a_default_is_optional_and_keeps_its_default():
    fitted, _ = fit_schema(SCREENSHOT)
    assert "required" not in fitted and fitted["properties"] == SCREENSHOT["properties"]
    assert fitted["additionalProperties"] is False
    # Only the defaulted ones leave `required`; the original is not changed.
    mixed = {**SCREENSHOT, "required": ["filename", "scale"]}
    assert fit_schema(mixed)[0]["required"] == ["filename"] and mixed["required"] == ["filename", "scale"]
    # After the other transformations too: a merged form and a resolved reference.
    merged, _ = fit_schema({"anyOf": [SCREENSHOT, {**SCREENSHOT, "required": ["scale", "type"]}]})
    assert "required" not in merged and merged["properties"]["scale"]["default"] == "css"
    resolved, _ = fit_schema({"$ref": "#/$defs/Shot", "$defs": {"Shot": SCREENSHOT}})
    assert "required" not in resolved


def test_the_parameter_check_lets_a_defaulted_parameter_be_left_out():
    from host.mcp.params import problems

    assert problems(SCREENSHOT, {}) == []
    assert problems({**SCREENSHOT, "required": ["filename", "scale"]}, {}) == ["$.filename: required"]
