"""Tool parameter types: the declared bounds, structured errors with paths, and what the page
executor gets (host-only keys stripped)."""

from __future__ import annotations

import msgspec
import pytest

from host.calls.router import Router
from host.calls.service import ToolService
from host.tools.catalog import CATALOG, lookup
from host.tools.failure import ToolFailure
from host.tools.params import content_params
from host.tools.schema import provider_schema

REF = "sabc123_4_5"
ROUTER = Router({"browser": ToolService()})  # decoding needs no live service
BROWSER_TOOLS = [name for name, spec in CATALOG.items() if spec.runner.service == "browser"]


def decode_params(tool: str, raw: object):
    return ROUTER.decode("t", tool, raw).params


def bad(tool: str, raw: object) -> ToolFailure:
    with pytest.raises(ToolFailure) as info:
        decode_params(tool, raw)
    return info.value


def test_every_tool_is_in_the_catalog_with_a_schema():
    for name in BROWSER_TOOLS:
        spec = lookup(name)
        assert spec is not None, name
        assert spec.level in ("L0", "L1", "L2"), name
        schema = provider_schema(spec)
        assert schema["type"] == "object", name


def test_read_page_defaults_and_bounds():
    params = decode_params("read_page", {})
    assert params.max_tokens == 3000 and params.mode == "snapshot"
    assert decode_params("read_page", {"maxTokens": 0}).max_tokens == 0
    assert decode_params("read_page", {"maxTokens": 6000}).max_tokens == 6000
    failure = bad("read_page", {"maxTokens": 6001})
    assert failure.code == "invalid_params" and "$.maxTokens" in failure.message
    assert "$.mode" in bad("read_page", {"mode": "everything"}).message


@pytest.mark.parametrize("ref", ["e12", "s1_1", "S1a_2_3", "sabc_1", "sabc_1_2_3", "sabc_x_1", "s" + "a" * 40 + "_1_1"])
def test_foreign_ref_shapes_decode_so_that_resolving_them_can_say_stale(ref):
    assert decode_params("click", {"element": "the button", "ref": ref}).ref == ref
    assert decode_params("screenshot", {"target": ref}).target == ref


@pytest.mark.parametrize("ref", ["", "s" * 81])
def test_empty_or_oversized_refs_are_refused(ref):
    failure = bad("click", {"element": "the button", "ref": ref})
    assert failure.code == "invalid_params"
    assert "$.ref" in failure.message


def test_click_needs_element_and_ref_and_knows_no_other_keys():
    assert "$.element" in bad("click", {"ref": REF}).message or "element" in bad("click", {"ref": REF}).message
    assert "unknown field" in bad("click", {"element": "x", "ref": REF, "force": True}).message.lower()
    assert "$.button" in bad("click", {"element": "x", "ref": REF, "button": "middle"}).message


def test_oversized_values_are_refused():
    assert "$.text" in bad("type", {"element": "x", "ref": REF, "text": "a" * 100_001}).message
    assert decode_params("type", {"element": "x", "ref": REF, "text": "a" * 100_000}).text
    assert "$.element" in bad("click", {"element": "e" * 501, "ref": REF}).message
    assert "$.values" in bad("select_option", {"element": "x", "ref": REF, "values": ["v"] * 101}).message
    assert "$.query" in bad("find_in_page", {"query": "q" * 501}).message
    assert "$.url" in bad("navigate", {"url": "https://a.example/" + "p" * 9000}).message


def test_params_must_be_an_object():
    failure = bad("read_page", ["maxTokens", 3])
    assert failure.code == "invalid_params" and "expected an object" in failure.message


def test_unknown_tool():
    assert bad("teleport", {}).code == "unknown_tool"
    assert bad("clik", {}).message == "there is no tool named 'clik'; did you mean 'click'?"


def test_wait_for_takes_exactly_one_mode():
    assert decode_params("wait_for", {"text": "Done"}).text == "Done"
    assert decode_params("wait_for", {"text": "Busy", "textGone": True}).text_gone is True
    assert decode_params("wait_for", {"textGone": "Busy"}).text_gone == "Busy"
    assert decode_params("wait_for", {"timeMs": 500}).time_ms == 500
    assert "not both" in bad("wait_for", {"text": "a", "textGone": "b"}).message
    assert "needs text" in bad("wait_for", {"textGone": True}).message
    assert "give text" in bad("wait_for", {}).message
    assert "$.timeMs" in bad("wait_for", {"timeMs": 30_001}).message


def test_scroll_amounts():
    assert decode_params("scroll", {"direction": "down"}).amount == "page"
    assert decode_params("scroll", {"direction": "down", "amount": 300}).amount == 300
    assert decode_params("scroll", {"direction": "up", "amount": "end"}).amount == "end"
    assert "$.amount" in bad("scroll", {"direction": "down", "amount": -1}).message
    assert "$.direction" in bad("scroll", {"direction": "sideways"}).message


def test_batch_actions_are_one_to_four_tagged_actions():
    actions = [{"action": "click", "element": "a", "ref": REF}, {"action": "type", "element": "b", "ref": REF, "text": "hi"},
               {"action": "select_option", "element": "c", "ref": REF, "values": ["x"]}]
    params = decode_params("batch_actions", {"actions": actions})
    assert [type(a).__name__ for a in params.actions] == ["BatchClick", "BatchType", "BatchSelect"]
    assert "$.actions" in bad("batch_actions", {"actions": actions + actions[:2]}).message
    assert "$.actions" in bad("batch_actions", {"actions": []}).message
    assert bad("batch_actions", {"actions": [{"action": "hover", "element": "a", "ref": REF}]}).code == "invalid_params"
    # allowRecovery is the host's business, never the model's
    assert bad("batch_actions", {"actions": [{**actions[0], "allowRecovery": True}]}).code == "invalid_params"
    assert bad("click", {"element": "a", "ref": REF, "allowRecovery": True}).code == "invalid_params"


def test_content_params_strip_host_only_keys():
    params = decode_params("click", {"element": "the save button", "ref": REF, "tabId": 7})
    assert content_params(params) == {"ref": REF}
    batch = decode_params("batch_actions", {"tabId": 3, "actions": [{"action": "type", "element": "e", "ref": REF, "text": "t"}]})
    assert content_params(batch) == {"actions": [{"action": "type", "ref": REF, "text": "t"}]}
    extract = decode_params("extract", {"fromChar": 8000, "scope": REF})
    assert content_params(extract) == {"scope": REF}


def test_a_write_carries_the_element_the_host_expects_beside_each_ref():
    shown = {REF: {"role": "button", "name": "Save"}, "sabc123_4_6": {"role": "textbox", "name": "Name"}}
    click = decode_params("click", {"element": "the save button", "ref": REF})
    assert content_params(click, ref_recovery=True, expect=shown) == {
        "ref": REF, "allowRecovery": True, "expect": {"role": "button", "name": "Save"}}
    batch = decode_params("batch_actions", {"actions": [{"action": "type", "element": "e", "ref": "sabc123_4_6", "text": "t"},
                                                        {"action": "click", "element": "s", "ref": REF}]})
    assert [a["expect"] for a in content_params(batch, expect=shown)["actions"]] == [
        {"role": "textbox", "name": "Name"}, {"role": "button", "name": "Save"}]
    assert content_params(decode_params("press_key", {"key": "Enter"}), expect={}) == {"key": "Enter"}
    # Where the element leads, as judged, goes with it for the page executor to compare.
    leads = {REF: {"role": "link", "name": "Pay", "leads": {"url": "https://pay.example/go", "method": "post"}}}
    assert content_params(click, expect=leads)["expect"] == {
        "role": "link", "name": "Pay", "leads": {"url": "https://pay.example/go", "method": "post", "newTab": False}}
    # A ref the host cannot say anything about is refused before anything is sent.
    with pytest.raises(ToolFailure) as refused:
        content_params(batch, expect={REF: shown[REF]})
    assert refused.value.code == "stale_ref" and refused.value.details["dispatched"] is False
    # The model cannot send an expectation of its own: it is the host's, like allowRecovery.
    assert bad("click", {"element": "a", "ref": REF, "expect": {"role": "button", "name": "Save"}}).code == "invalid_params"
    assert bad("batch_actions", {"actions": [{"action": "click", "element": "a", "ref": REF,
                                              "expect": {"role": "button", "name": "x"}}]}).code == "invalid_params"


def test_the_page_executor_schema_requires_the_expectation_with_every_write_ref():
    from host.tools.generate import content_schema

    click = content_schema(lookup("click"))
    assert click["required"] == ["ref", "expect"]
    assert click["properties"]["expect"]["required"] == ["role", "name"]
    assert click["properties"]["expect"]["additionalProperties"] is False
    batch = content_schema(lookup("batch_actions"))
    assert all("expect" in d["required"] for d in batch["$defs"].values() if "ref" in d["properties"])
    press = content_schema(lookup("press_key"))  # an optional ref: a rule ties the two together
    assert "expect" not in press["required"]
    assert {"kind": "needs", "fields": ["ref", "expect"], "message": "a ref needs the element the host expects there",
            "when": {}} in press["rules"]
    for read in ("read_page", "scroll", "extract", "find_in_page"):  # reads expect nothing
        assert "expect" not in content_schema(lookup(read))["properties"]


def test_tab_group_update_needs_a_change():
    assert "at least one" in bad("tab_group_update", {"groupId": 1}).message
    assert decode_params("tab_group_update", {"groupId": 1, "color": "blue"}).color == "blue"
    assert "$.color" in bad("tab_group_update", {"groupId": 1, "color": "teal"}).message


def test_schemas_round_trip_through_json():
    for name in BROWSER_TOOLS:
        msgspec.json.encode(provider_schema(lookup(name)))
