"""The Skills section of the model's instructions: names and descriptions only, within a stated
budget, with a clear cut-off; and what `load_skill` returns, marked as installed text."""

from __future__ import annotations

import random

from host.skills.model_text import DESCRIPTION_CHARS, PROMPT_BUDGET, listing
from host.skills.storage import SkillRow


def row(name: str, description: str) -> SkillRow:
    return SkillRow(name=name, description=description, folder=f"skills/{name}", content_hash="0" * 64, file_hashes={})


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(["form", "invoice", "table", "report", "browser", "search", "careful", "a", "the"])
                    for _ in range(n))


def test_no_skills_no_section():
    made = listing([])
    assert (made.text, made.listed, made.unlisted) == ("", (), 0)


def test_fifty_typical_skills_all_fit_with_their_descriptions():
    rng = random.Random(3)
    rows = [row(f"skill-{i:02d}", words(rng, 22)) for i in range(50)]  # about 150 characters each
    made = listing(rows)
    assert len(made.text) <= PROMPT_BUDGET and made.unlisted == 0
    assert all(f"- skill-{i:02d}: " in made.text for i in range(50))
    assert made.text.index("skill-07") < made.text.index("skill-08")  # by name


def test_long_descriptions_are_cut_and_past_the_budget_names_then_a_count():
    rng = random.Random(5)
    rows = [row(f"very-long-skill-name-number-{i:03d}", words(rng, 200)) for i in range(300)]
    made = listing(rows)
    assert len(made.text) <= PROMPT_BUDGET
    lines = made.text.splitlines()
    described = [l for l in lines if l.startswith("- very-long")]
    assert described and all(len(l) <= DESCRIPTION_CHARS + 50 and l.endswith("…") for l in described)
    assert "More skills, by name only" in made.text
    assert made.unlisted == 300 - len(made.listed) > 0
    assert f"{made.unlisted} more skills are installed but not listed" in lines[-1]
    assert str(PROMPT_BUDGET) in lines[-1]


def test_a_small_budget_is_kept_too():
    rows = [row(f"s{i}", "x" * 100) for i in range(40)]
    made = listing(rows, budget=1500)
    assert len(made.text) <= 1500 and made.unlisted > 0
