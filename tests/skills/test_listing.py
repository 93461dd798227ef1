"""The Skills section of the model's instructions: names and descriptions only, within a stated
budget, with a clear cut-off."""

from __future__ import annotations

import random

from host.skills.model_text import DESCRIPTION_CHARS, MIN_DESCRIPTION_CHARS, PROMPT_BUDGET, listing
from host.skills.storage import SkillRow


def row(name: str, description: str) -> SkillRow:
    return SkillRow(name=name, description=description, folder=f"skills/{name}", content_hash="0" * 64, file_hashes={})


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(["form", "invoice", "table", "report", "browser", "search", "careful", "a", "the"])
                    for _ in range(n))


def described(made) -> dict[str, str]:
    return {line[2:].split(": ", 1)[0]: line.split(": ", 1)[1] for line in made.text.splitlines()
            if line.startswith("- ") and ": " in line and not line.startswith("- More skills")
            and not line.startswith(("- The user", "- load_skill"))}


def test_no_skills_no_section():
    made = listing([])
    assert (made.text, made.listed, made.unlisted) == ("", (), 0)


def test_a_few_skills_keep_their_descriptions_up_to_the_cap():
    rows = [row("short-one", "Fills a form."), row("long-one", "word " * 100)]
    made = listing(rows)
    texts = described(made)
    assert texts["short-one"] == "Fills a form." and len(texts["long-one"]) <= DESCRIPTION_CHARS
    assert texts["long-one"].endswith("…") and made.text.index("long-one") < made.text.index("short-one")


def test_fifty_skills_are_all_listed_with_descriptions_however_long():
    rng = random.Random(3)
    for length in (22, 200):  # about 130 characters each, and far over the cap
        rows = [row(f"skill-number-{i:02d}", words(rng, length)) for i in range(50)]
        made = listing(rows)
        texts = described(made)
        assert len(made.text) <= PROMPT_BUDGET and made.unlisted == 0 and len(made.listed) == 50
        assert len(texts) == 50 and all(len(t) >= min(MIN_DESCRIPTION_CHARS, len(r.description))
                                        for t, r in zip(texts.values(), rows))


def test_past_the_budget_skills_are_named_then_counted():
    rng = random.Random(5)
    rows = [row(f"very-long-skill-name-number-{i:03d}", words(rng, 200)) for i in range(300)]
    made = listing(rows)
    assert len(made.text) <= PROMPT_BUDGET
    lines = made.text.splitlines()
    assert "More skills, by name only" in made.text
    assert made.unlisted == 300 - len(made.listed) > 0
    assert f"{made.unlisted} more skills are installed but not listed" in lines[-1] and str(PROMPT_BUDGET) in lines[-1]


def test_when_descriptions_cannot_all_fit_every_name_still_does():
    rng = random.Random(9)
    rows = [row(f"s-{i:03d}", words(rng, 60)) for i in range(120)]
    made = listing(rows)
    assert len(made.text) <= PROMPT_BUDGET and made.unlisted == 0 and len(made.listed) == 120
    assert 0 < len(described(made)) < 120


def test_a_small_budget_is_kept_too():
    rows = [row(f"s{i}", "x" * 100) for i in range(40)]
    made = listing(rows, budget=1500)
    assert len(made.text) <= 1500 and made.unlisted == 0 and "More skills, by name only" in made.text
    rows = [row(f"skill-{i:03d}", "x" * 100) for i in range(200)]
    made = listing(rows, budget=1500)
    assert len(made.text) <= 1500 and made.unlisted > 0 and made.text.endswith("names them all.\n")
