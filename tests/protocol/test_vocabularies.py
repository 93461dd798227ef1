"""Each vocabulary of the contract is declared once: the Python code imports it or derives it
from its Literal, and the extension's pages read it from the generated protocol.js. A new hand
copy (a list, tuple, set or Literal of all of a vocabulary's names, anywhere else) fails here,
and so does a page string missing for a name the pages show."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from protocol import permissions, tools, ui
from protocol.generate import ui_export

ROOT = Path(__file__).resolve().parents[2]

# name -> (its names, the file holding its one declaration, or None when no literal declares it)
VOCABULARIES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "permission policies": (permissions.PERMISSION_POLICIES, "protocol/permissions.py"),
    "verdicts": (permissions.VERDICTS, "protocol/permissions.py"),
    "origin lists": (permissions.ORIGIN_LISTS, "protocol/permissions.py"),
    # Declared in the wire order; the card's display order names the same constants.
    "approval flags": (permissions.APPROVAL_FLAGS, "protocol/permissions.py"),
    "decision kinds": (ui.DECISION_KINDS, None),  # the tags of the decision Structs
    "tool levels": (tools.TOOL_LEVELS, "protocol/tools.py"),
    "tool effects": (tools.TOOL_EFFECTS, "protocol/tools.py"),
    "run states": (ui.RUN_STATES, "protocol/ui/turns.py"),
    "stop reasons": (ui.STOP_REASONS, "protocol/ui/turns.py"),
    "item kinds": (ui.ITEM_KINDS, "protocol/ui/turns.py"),
    "audit kinds": (ui.AUDIT_KINDS, "protocol/ui/settings.py"),
    "UI error codes": (ui.ERROR_CODES, "protocol/ui/session.py"),
}

# Copies in code other work owns today: (file, vocabulary). The list may only shrink; an entry
# that no longer happens fails, so that it is deleted at once.
KNOWN_COPIES: frozenset[tuple[str, str]] = frozenset()


def _python_files() -> list[Path]:
    return sorted(p for package in ("host", "protocol", "install") for p in (ROOT / package).rglob("*.py"))


def _string_sets(tree: ast.AST) -> list[tuple[int, set[str]]]:
    """The string members of every tuple, list, set and Literal[...] literal in a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            strings = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if strings:
                found.append((node.lineno, strings))
    return found


def _copies(sets: list[tuple[int, set[str]]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for line, strings in sets:
        for name, (names, _) in VOCABULARIES.items():
            if len(names) > 1 and set(names) <= strings:
                out.setdefault(name, []).append(line)
    return out


def test_python_declares_each_vocabulary_once():
    problems, seen_known = [], set()
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        for name, lines in _copies(_string_sets(ast.parse(path.read_text(encoding="utf-8")))).items():
            source = VOCABULARIES[name][1]
            allowed = 1 if rel == source else 0
            if (rel, name) in KNOWN_COPIES:
                seen_known.add((rel, name))
                continue
            if len(lines) > allowed:
                problems.append(f"{rel}:{lines} spells out the {name}; import them from {source or 'protocol.ui'}")
    assert not problems, "\n".join(problems)
    assert seen_known == KNOWN_COPIES, f"no longer copied, delete from KNOWN_COPIES: {KNOWN_COPIES - seen_known}"


def test_each_declaration_is_where_the_table_says():
    for name, (names, source) in VOCABULARIES.items():
        if source is None:
            continue
        tree = ast.parse((ROOT / source).read_text(encoding="utf-8"))
        assert name in _copies(_string_sets(tree)), f"{name} are not declared in {source}"


_JS_ARRAY = re.compile(r"\[([^\[\]]*)\]")
_JS_STRING = re.compile(r"\"([^\"\\]*)\"|'([^'\\]*)'")


def _extension_files() -> list[Path]:
    return sorted(p for p in (ROOT / "extension").rglob("*.js") if "generated" not in p.parts)


def test_the_extension_reads_each_vocabulary_from_the_generated_contract():
    problems = []
    for path in _extension_files():
        text = path.read_text(encoding="utf-8")
        for match in _JS_ARRAY.finditer(text):
            strings = {a or b for a, b in _JS_STRING.findall(match.group(1))}
            line = text.count("\n", 0, match.start()) + 1
            for name in _copies([(line, strings)]):
                problems.append(f"{path.relative_to(ROOT)}:{line} spells out the {name}; read them from "
                                f"UI in generated/protocol.js")
    assert not problems, "\n".join(problems)


def test_the_ui_export_keeps_the_declared_orders():
    export = ui_export()
    assert export["permissionPolicies"] == list(permissions.PERMISSION_POLICIES)
    assert export["verdicts"] == list(permissions.VERDICTS)
    assert export["auditKinds"] == list(ui.AUDIT_KINDS)
    assert export["defaultPolicy"] in permissions.PERMISSION_POLICIES
    # The card lists every flag, each once.
    assert sorted(export["approvalFlagOrder"]) == sorted(permissions.APPROVAL_FLAGS)
    assert len(set(export["approvalFlagOrder"])) == len(permissions.APPROVAL_FLAGS)


def test_the_flag_names_stand_for_the_flags_they_name():
    # Unpacked from ApprovalFlag in its order: a reordered declaration must fail here, not swap two.
    for name in ("SENSITIVE_PAYLOAD", "ESCALATION_L2", "HOST_PERMISSION", "GUARDED_ORIGIN", "CREDENTIAL_TARGET"):
        assert getattr(permissions, f"FLAG_{name}") == name.lower()


def _page_strings() -> set[str]:
    text = (ROOT / "extension" / "ui" / "strings.js").read_text(encoding="utf-8")
    return set(re.findall(r"^\s*\"([^\"]+)\":", text, re.MULTILINE))


@pytest.mark.parametrize("prefix, names, suffix", [
    ("policy.", permissions.PERMISSION_POLICIES, ""),
    ("policy.", permissions.PERMISSION_POLICIES, ".hint"),
    ("verdict.", permissions.VERDICTS, ""),
    ("flag.", permissions.APPROVAL_FLAGS, ""),
    ("settings.audit.kind.", ui.AUDIT_KINDS, ""),
])
def test_the_pages_have_a_string_for_each_name_and_none_for_others(prefix, names, suffix):
    keys = {k for k in _page_strings() if k.startswith(prefix) and k.endswith(suffix)
            and "." not in k[len(prefix):len(k) - len(suffix)]}
    assert keys == {f"{prefix}{name}{suffix}" for name in names}


def test_the_pages_name_each_policy_as_the_host_does():
    text = _js("strings.js")
    named = dict(re.findall(r'^\s*"policy\.([a-z]+)": "([^"]+)",$', text, re.MULTILINE))
    assert named == permissions.POLICY_LABELS


def test_the_pages_have_a_string_for_each_decision():
    keys = _page_strings()
    assert {f"tool.decision.{kind}" for kind in ui.DECISION_KINDS} <= keys


def _js(name: str) -> str:
    return (ROOT / "extension" / "ui" / name).read_text(encoding="utf-8")


def _found(pattern: str, text: str) -> set[str]:
    found = set(re.findall(pattern, text, re.DOTALL))
    assert found, f"nothing matches {pattern!r}: the code the test reads has moved"
    return found


def _quoted(texts: set[str]) -> set[str]:
    return {name for text in texts for name in re.findall(r"\"(\w+)\"", text)}


def test_the_run_states_stop_reasons_and_item_kinds_the_chat_names_are_declared():
    model, view = _js("chat-model.js"), _js("chat-view.js")
    states = _quoted(_found(r"const ACTIVE = new Set\(\[([^\]]*)\]\)", model))
    states |= _found(r"state [!=]== \"(\w+)\"", model)
    reasons = _quoted(_found(r"\[([^\]]*)\]\.includes\(event\.stopReason\)", model))
    reasons |= set(re.findall(r"(\w+): \"chat\.turn", " ".join(_found(r"t\(\{(.*?)\}\[reason\]", view))))
    kinds = _found(r"event\.kind === \"(\w+)\"", model)
    assert states - set(ui.RUN_STATES) == set()
    assert reasons - set(ui.STOP_REASONS) == set()
    assert kinds - set(ui.ITEM_KINDS) == set()


def test_the_approval_card_offers_every_decision_and_no_other():
    card = _js("approval-card.js")
    offered = _quoted(_found(r"KEY_ACTIONS = \{([^}]*)\}", card)) | _found(r"button\(\"(\w+)\"", card)
    offered |= _found(r"answer\(\"(\w+)\"\)", card)
    # "note" opens the note box, whose answer is a decline; "confirmSite" opens the confirmation
    # of the lasting rule, whose answer is acceptForSite.
    assert offered - {"note", "confirmSite"} == set(ui.DECISION_KINDS)
