"""The service worker <-> content script messages: the generated table is the Structs' own
declaration, and a field the browser-side check could not test stops the generator."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from protocol import content, generate_content


def test_every_declared_message_is_in_the_generated_table_with_its_fields():
    table = generate_content.messages()
    declared = content.TO_PAGE + content.TO_WORKER
    assert sorted(table) == sorted(cls.__struct_config__.tag for cls in declared)
    execute = table["executor.execute"]
    assert set(execute) == {"requestId", "tool", "params", "deadlineAt", "expectUrl", "afterLoad"}
    assert execute["expectUrl"]["required"] is False
    assert execute["afterLoad"]["required"] is False
    assert execute["requestId"] == {"kind": "string", "required": True, "minLength": 1, "maxLength": 64}
    assert execute["params"] == {"kind": "any", "required": True}
    assert table["timer.sleep"]["ms"] == {"kind": "number", "required": True, "minimum": 0, "maximum": content.MAX_SLEEP_MS}
    assert table["indicator.action"]["action"] == {"kind": "enum", "required": True, "values": ["pause", "stop"]}
    assert table["indicator.show"] == {}


def test_tags_become_constant_names():
    assert generate_content.constant_name("takeover.manualInput") == "TAKEOVER_MANUAL_INPUT"
    assert generate_content.constant_name("executor.ping") == "EXECUTOR_PING"


class _Listy(content.ContentMessage, tag="test.listy", kw_only=True):
    items: list[str]


class _Nested(content.ContentMessage, tag="test.nested", kw_only=True):
    inner: dict[str, Any] | None = None


@pytest.mark.parametrize("bad", [_Listy, _Nested])
def test_a_field_the_browser_check_cannot_test_stops_the_generator(monkeypatch, bad):
    monkeypatch.setattr(generate_content, "TO_WORKER", content.TO_WORKER + (bad,))
    with pytest.raises(ValueError, match="cannot test"):
        generate_content.render()


def test_the_structs_decode_what_the_extension_sends():
    decoder = msgspec.json.Decoder(content.ToPage)
    sent = decoder.decode(b'{"type": "executor.execute", "requestId": "r1", "tool": "click", "params": {}, "deadlineAt": 5}')
    assert isinstance(sent, content.ExecutorExecute) and sent.deadline_at == 5
    with pytest.raises(msgspec.ValidationError):
        decoder.decode(b'{"type": "executor.ping", "requestId": ""}')
