"""`tabwarden skill` and `tabwarden plugin` with no host running: changes go to the profile's
store, refusals exit non-zero with their code, and a plugin is never installed unseen."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.skills.builders import SAMPLE_PLUGIN, SAMPLE_SKILL, zip_members


def tabwarden(home, *args, stdin=subprocess.DEVNULL):
    env = {**os.environ, "TABWARDEN_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "host", *args], capture_output=True, text=True, env=env,
                          stdin=stdin, timeout=60)


def test_skill_add_list_show_disable_remove(tmp_path):
    home = tmp_path / "home"
    added = tabwarden(home, "skill", "add", str(SAMPLE_SKILL))
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("installed price-compare (2 files, sha256 ")
    assert (home / "data" / "extensions" / "skills" / "price-compare" / "SKILL.md").is_file()
    listed = tabwarden(home, "skill", "list")
    assert "price-compare" in listed.stdout and "ok" in listed.stdout and "characters of the model's" in listed.stdout
    shown = tabwarden(home, "skill", "show", "price-compare")
    assert "# Comparing a product's price across shops" in shown.stdout
    again = tabwarden(home, "skill", "add", str(SAMPLE_SKILL))
    assert again.returncode == 1 and "skill_exists" in again.stderr
    assert tabwarden(home, "skill", "disable", "price-compare").stdout.strip() == "price-compare is off"
    assert " off " in tabwarden(home, "skill", "list").stdout
    assert tabwarden(home, "skill", "remove", "price-compare").returncode == 0
    assert "no skills installed" in tabwarden(home, "skill", "list").stdout


def test_a_bad_zip_is_refused_with_its_code(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(zip_members([("x/SKILL.md", b"---\nname: x\ndescription: d\n---\n"), ("x/../../evil", b"!")]))
    result = tabwarden(tmp_path / "home", "skill", "add", str(bad))
    assert result.returncode == 1 and "unsafe_path" in result.stderr
    assert not (tmp_path / "evil").exists()


def test_a_changed_skill_is_approved_from_the_command_line(tmp_path):
    home = tmp_path / "home"
    tabwarden(home, "skill", "add", str(SAMPLE_SKILL))
    skill_md = home / "data" / "extensions" / "skills" / "price-compare" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more step.\n")
    listed = tabwarden(home, "skill", "list").stdout
    assert "changed on disk (SKILL.md)" in listed
    assert tabwarden(home, "skill", "approve", "price-compare").returncode == 0
    assert "changed" not in tabwarden(home, "skill", "list").stdout


def test_plugin_add_shows_the_review_and_needs_a_yes(tmp_path):
    home = tmp_path / "home"
    unseen = tabwarden(home, "plugin", "add", str(SAMPLE_PLUGIN))
    assert unseen.returncode == 2 and "--yes" in unseen.stderr
    assert "It would add:" in unseen.stdout and "rule: effect:pay @ * -> ask" in unseen.stdout
    assert "guarded: *.klarna.com, *.afterpay.com, *.affirm.com" in unseen.stdout
    assert "careful-shopper" not in tabwarden(home, "plugin", "list").stdout.split("listing:")[0]
    done = tabwarden(home, "plugin", "add", str(SAMPLE_PLUGIN), "--yes")
    assert done.returncode == 0 and "installed plugin careful-shopper (skills: checkout-review)" in done.stdout
    listed = tabwarden(home, "plugin", "list").stdout
    assert "plugin careful-shopper 1.0.0" in listed and "checkout-review" in listed
    gone = tabwarden(home, "plugin", "remove", "careful-shopper")
    assert gone.returncode == 0 and "checkout-review" not in tabwarden(home, "skill", "list").stdout
