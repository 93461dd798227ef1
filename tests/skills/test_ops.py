"""The settings page's skill and plugin ops against the engine: changes acknowledged then sent
to every page as `skills.state`, refusals with the problem's code and nothing changed, a plugin
reviewed before it is installed, and its list entries shown as the plugin's."""

from __future__ import annotations

import base64

from tests.skills.builders import SAMPLE_PLUGIN, SAMPLE_SKILL, zip_members, zip_of


async def test_install_list_switch_and_remove_a_skill(harness):
    ack = await harness.op({"type": "skills.install", "source": {"path": str(SAMPLE_SKILL)}})
    assert ack["type"] == "command.ack", ack
    state = harness.recorder.of("skills.state")[-1]
    [skill] = state["skills"]
    assert (skill["name"], skill["status"], skill["enabled"], skill["listed"]) == ("price-compare", "ok", True, True)
    assert 0 < state["promptChars"] <= state["promptBudget"] == 8000
    await harness.op({"type": "skills.setEnabled", "name": "price-compare", "enabled": False})
    listed = await harness.op({"type": "skills.list"})
    assert listed["type"] == "skills.state" and listed["skills"][0]["enabled"] is False and listed.get("promptChars", 0) == 0
    detail = await harness.op({"type": "skills.get", "name": "price-compare"})
    assert detail["type"] == "skills.detail" and detail["body"].startswith("# Comparing")
    assert [f["path"] for f in detail["files"]] == ["SKILL.md", "references/report-template.md"]
    await harness.op({"type": "skills.remove", "name": "price-compare"})
    assert (await harness.op({"type": "skills.list"})).get("skills", []) == []


async def test_a_zip_from_the_page_and_its_refusals(harness):
    data = base64.b64encode(zip_of(SAMPLE_SKILL, prefix="price-compare/")).decode()
    ack = await harness.op({"type": "skills.install", "source": {"zipName": "pc.zip", "zipData": data}})
    assert ack["type"] == "command.ack"
    again = await harness.op({"type": "skills.install", "source": {"zipName": "pc.zip", "zipData": data}})
    assert (again["type"], again["code"]) == ("command.rejected", "skill_exists")
    bad = base64.b64encode(zip_members([("x/SKILL.md", b"---\nname: x\ndescription: d\n---\n"),
                                        ("x/../evil", b"!")])).decode()
    refused = await harness.op({"type": "skills.install", "source": {"zipName": "bad.zip", "zipData": bad}})
    assert refused["code"] == "unsafe_path" and "x/../evil" in refused["message"]
    both = await harness.op({"type": "skills.install", "source": {"path": "/x", "zipData": data}})
    assert both["code"] == "unreadable_source"
    assert [s["name"] for s in (await harness.op({"type": "skills.list"}))["skills"]] == ["price-compare"]


async def test_approve_needs_the_hash_the_page_showed(harness):
    await harness.op({"type": "skills.install", "source": {"path": str(SAMPLE_SKILL)}})
    skill_md = harness.skills.library.root / "skills" / "price-compare" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nNew step.\n")
    [skill] = (await harness.op({"type": "skills.list"}))["skills"]
    assert skill["status"] == "changed" and skill["changedFiles"] == ["SKILL.md"] and not skill.get("listed")
    wrong = await harness.op({"type": "skills.approve", "name": "price-compare", "contentHash": "a" * 64})
    assert wrong["code"] == "hash_mismatch"
    ok = await harness.op({"type": "skills.approve", "name": "price-compare", "contentHash": skill["currentHash"]})
    assert ok["type"] == "command.ack"
    assert (await harness.op({"type": "skills.list"}))["skills"][0]["status"] == "ok"


async def test_a_plugin_is_reviewed_then_installed_then_removed(harness):
    review = await harness.op({"type": "plugins.review", "source": {"path": str(SAMPLE_PLUGIN)}})
    assert review["type"] == "plugins.reviewed" and review["name"] == "careful-shopper"
    assert [s["name"] for s in review["skills"]] == ["checkout-review"]
    assert review["guarded"] == ["*.klarna.com", "*.afterpay.com", "*.affirm.com"]
    assert (await harness.op({"type": "skills.list"})).get("plugins", []) == []
    ack = await harness.op({"type": "plugins.install", "reviewId": review["reviewId"],
                            "contentHash": review["contentHash"]})
    assert ack["type"] == "command.ack"
    state = await harness.op({"type": "skills.list"})
    [plugin] = state["plugins"]
    assert plugin["skills"] == ["checkout-review"] and [r["verdict"] for r in plugin["rules"]] == ["ask", "ask"]
    settings = await harness.op({"type": "settings.get"})
    guarded = [e for e in settings["state"]["guarded"] if e["origin"] == "plugin"]
    assert [(e["pattern"], e["plugin"], e["removable"]) for e in guarded][0] == \
        ("*.klarna.com", "careful-shopper", False)
    removal = await harness.op({"type": "skills.remove", "name": "checkout-review"})
    assert removal["code"] == "skill_of_plugin"
    await harness.op({"type": "plugins.remove", "name": "careful-shopper"})
    state = await harness.op({"type": "skills.list"})
    assert state.get("plugins", []) == [] and state.get("skills", []) == []
