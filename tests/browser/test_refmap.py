"""The host-side ref map: hints per tab, prior refs, and the facts the gatekeeper gets."""

import msgspec

from host.browser.refmap import MAX_PRIOR, RefMap, target_facts
from host.browser.wire import SnapshotRef


def wire(*raw: dict) -> list[SnapshotRef]:
    return msgspec.convert(list(raw), list[SnapshotRef])


def hints(token: str, snap: int, count: int, **extra):
    return wire(*({"ref": f"s{token}_{snap}_{i}", "role": "textbox", "name": f"Field {i}", "tag": "input", **extra}
                  for i in range(1, count + 1)))


def test_record_and_lookup_with_input_types():
    refs = RefMap()
    refs.record(1, "doc", 1, hints("doc", 1, 2, inputType="password"), "text")
    hint = refs.lookup(1, "sdoc_1_2")
    assert hint is not None and hint.input_type == "password" and hint.snapshot == "sdoc_1"
    assert refs.is_current(1, "sdoc_1_1")
    assert refs.lookup(2, "sdoc_1_1") is None
    assert refs.last_text(1) == ("doc", "text")


def test_older_refs_become_prior_hints_and_stay_bounded():
    refs = RefMap()
    for snap in range(1, 4):
        refs.record(1, "doc", snap, hints("doc", snap, 300))
    assert refs.is_current(1, "sdoc_3_1") and not refs.is_current(1, "sdoc_2_1")
    assert refs.lookup(1, "sdoc_2_300") is not None  # recent past
    assert refs.lookup(1, "sdoc_1_1") is None  # evicted: only MAX_PRIOR kept
    assert refs.describe(1)["prior"] == MAX_PRIOR


def test_a_new_document_forgets_the_old_one():
    refs = RefMap()
    refs.record(1, "old", 1, hints("old", 1, 2))
    refs.record(1, "new", 1, hints("new", 1, 1))
    assert refs.lookup(1, "sold_1_1") is None
    assert refs.current_snapshot(1) == "snew_1"


def test_late_older_snapshots_and_refs_of_other_snapshots_are_ignored():
    refs = RefMap()
    refs.record(1, "doc", 5, hints("doc", 5, 1))
    refs.record(1, "doc", 4, hints("doc", 4, 1))
    assert refs.current_snapshot(1) == "sdoc_5"
    refs.record(1, "doc", 6, wire({"ref": "sother_6_1", "role": "button"}, {"ref": "sdoc_7_1", "role": "button"},
                                  {"ref": "sdoc_6_2", "role": "link"}))
    assert [h.ref for h in refs.hints(1)] == ["sdoc_6_2"]


def test_a_snapshot_may_keep_refs_an_earlier_one_of_its_document_gave():
    refs = RefMap()
    refs.record(1, "doc", 5, hints("doc", 5, 2))
    refs.record(1, "doc", 6, wire({"ref": "sdoc_5_1", "role": "button"}, {"ref": "sdoc_6_3", "role": "link"}))
    assert [h.ref for h in refs.hints(1)] == ["sdoc_5_1", "sdoc_6_3"] and refs.is_current(1, "sdoc_5_1")
    assert not refs.is_current(1, "sdoc_5_2") and refs.lookup(1, "sdoc_5_2") is not None  # went: a prior ref
    # A host started since the ref was given takes it as the page's executor gives it.
    fresh = RefMap()
    fresh.record(1, "doc", 9, wire({"ref": "sdoc_1_4", "role": "button"}, {"ref": "sdoc_9_5", "role": "link"}))
    assert [h.ref for h in fresh.hints(1)] == ["sdoc_1_4", "sdoc_9_5"]


def test_malformed_hints_are_refused_at_the_wire_boundary():
    import pytest

    for bad in ({"role": "button"}, {"ref": "sdoc_1_1", "role": "button", "name": 3}, {"ref": "x" * 65, "role": "b"},
                {"ref": "sdoc_1_1", "role": "textbox", "credential": True, "value": "secret"}):
        with pytest.raises(msgspec.ValidationError):
            wire(bad)


def test_tabs_move_and_are_forgotten():
    refs = RefMap()
    refs.record(1, "doc", 1, hints("doc", 1, 1))
    refs.move(1, 9)
    assert refs.lookup(9, "sdoc_1_1") is not None and refs.lookup(1, "sdoc_1_1") is None
    refs.forget(9)
    assert refs.hints(9) == []


def test_target_facts_name_password_fields():
    refs = RefMap()
    refs.record(1, "doc", 1, hints("doc", 1, 1, inputType="password") + wire(
        {"ref": "sdoc_1_9", "role": "button", "name": "Go", "tag": "button"}))
    facts = target_facts([refs.lookup(1, "sdoc_1_1")])
    assert facts["input_type"] == "password" and facts["input_types"] == ["password"]
    facts = target_facts([refs.lookup(1, "sdoc_1_9"), None])
    assert "input_type" not in facts and facts["hints"][0]["name"] == "Go"


def test_field_values_follow_the_element_across_snapshots_and_never_credentials():
    refs = RefMap()
    refs.record(1, "doc", 1, wire({"ref": "sdoc_1_1", "role": "textbox", "elementKey": "e1", "value": "4111 "},
                                  {"ref": "sdoc_1_2", "role": "textbox", "elementKey": "e2", "credential": True,
                                   "autocomplete": "current-password", "fieldName": "passwd"}))
    refs.record(1, "doc", 2, wire({"ref": "sdoc_2_1", "role": "textbox", "elementKey": "e1", "value": "4111 1111 "}))
    old = refs.lookup(1, "sdoc_1_1")
    assert old is not None and refs.value_of(1, old) == "4111 1111 "  # the older ref finds the latest value
    secret = refs.lookup(1, "sdoc_1_2")
    assert secret is not None and secret.credential and secret.field_name == "passwd"
    assert refs.value_of(1, secret) is None
    facts = target_facts([old], {old.ref: "4111 1111 "})
    assert facts["values"] == {"sdoc_1_1": "4111 1111 "}
    assert all("value" not in hint for hint in facts["hints"])  # hints are shown; values are not in them
    assert "4111" not in str(refs.describe(1))


def test_the_values_of_the_fields_around_one_are_known_in_document_order():
    refs = RefMap()
    refs.record(1, "doc", 1, wire(*({"ref": f"sdoc_1_{i}", "role": "textbox", "elementKey": f"e{i}", "value": v}
                                    for i, v in enumerate(["a", "4111", "1111", "", "9"], start=1)),
                                  {"ref": "sdoc_1_9", "role": "button"}))
    hint = refs.lookup(1, "sdoc_1_4")
    assert hint is not None and refs.neighbour_values(1, hint) == (["a", "4111", "1111"], ["9"])
