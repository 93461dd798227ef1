"""Skills and plugins from the REPL (`tw.skills`), typed at the console against a real host over
its control socket: install, list, show, switch, approve a changed copy, refusals with the
host's code, and a plugin reviewed, installed and removed."""

from __future__ import annotations

from tests.skills.builders import SAMPLE_PLUGIN, SAMPLE_SKILL


def test_a_skill_from_install_to_removal(tw_console, tw_home):
    out = tw_console(f"tw.skills.add({str(SAMPLE_SKILL)!r})", "tw.skills.list()")
    assert "installed price-compare (2 files, sha256 " in out
    assert "price-compare" in out and " ok " in out and "characters of the model's instructions" in out
    out = tw_console("tw.skills.show('price-compare')")
    assert "# Comparing a product's price across shops" in out and "references/report-template.md" in out
    out = tw_console(f"tw.skills.add({str(SAMPLE_SKILL)!r})")
    assert "error invalid_message:" in out and "'reason': 'skill_exists'" in out
    listed = tw_console.call("skills.list")
    folder = tw_home / "data" / "extensions" / "skills" / "price-compare"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\nAnother step.\n")
    out = tw_console("tw.skills.list()")
    assert "changed on disk (SKILL.md)" in out
    out = tw_console("tw.skills.approve('price-compare')", "tw.skills.enable('price-compare', False)")
    assert "price-compare is used again at sha256" in out and "price-compare is off" in out
    after = tw_console.call("skills.list")["skills"][0]
    assert after["status"] == "ok" and after["contentHash"] != listed["skills"][0]["contentHash"]
    assert "removed price-compare" in tw_console("tw.skills.remove('price-compare')")
    assert tw_console.call("skills.list").get("skills", []) == []


def test_a_plugin_is_shown_whole_then_installed_and_removed(tw_console):
    out = tw_console(f"tw.skills.review_plugin({str(SAMPLE_PLUGIN)!r})")
    assert "It would add:" in out and "skills: checkout-review" in out and "rule: effect:pay @ * -> ask" in out
    assert tw_console.call("skills.list").get("plugins", []) == []
    out = tw_console(f"tw.skills.install_plugin({str(SAMPLE_PLUGIN)!r})")
    assert "installed plugin careful-shopper" in out
    rules = tw_console.call("gatekeeper.rules")
    assert any(r.get("provenance") == "injected:plugin:careful-shopper" for r in rules)
    assert "removed plugin careful-shopper" in tw_console("tw.skills.remove_plugin('careful-shopper')")
    assert not any(r.get("provenance", "").startswith("injected:plugin") for r in tw_console.call("gatekeeper.rules"))
