"""The generated extension contract is current, and the schema hash tracks the Structs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from protocol import generate, generate_content, generate_roles
from protocol.schema import canonical_json, document, schema_hash

ROOT = Path(__file__).resolve().parents[2]


def test_generated_protocol_js_is_not_stale():
    current = generate.OUTPUT.read_text(encoding="utf-8")
    assert current == generate.render(), "extension/generated/protocol.js is stale: run `make generate`"


def test_check_mode_reports_staleness(tmp_path, monkeypatch):
    stale = tmp_path / "protocol.js"
    stale.write_text("// old\n")
    monkeypatch.setattr(generate, "OUTPUT", stale)
    assert generate.main(["--check"]) == 1
    assert generate.main([]) == 0
    assert generate.main(["--check"]) == 0


def test_hash_covers_message_shapes():
    doc = document()
    changed = msgspec.json.decode(canonical_json(doc))
    changed["$defs"]["ContentCall"]["properties"]["tool"]["maxLength"] = 999
    assert canonical_json(changed) != canonical_json(doc)
    assert len(schema_hash()) == 64


def test_hash_is_stable_across_processes():
    out = subprocess.run([sys.executable, "-c", "from protocol.schema import schema_hash; print(schema_hash())"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == schema_hash()


def test_schema_export_is_valid_json():
    out = subprocess.run([sys.executable, "-m", "protocol.generate", "--schema"], capture_output=True, check=True, cwd=ROOT)
    doc = msgspec.json.decode(out.stdout)
    assert doc["protocol"] == "tabwarden/native-v1"
    assert "content.call" in doc["hostMessages"] and "hello" in doc["extensionMessages"]


def test_generated_content_protocol_js_is_not_stale():
    current = generate.CONTENT_OUTPUT.read_text(encoding="utf-8")
    assert current == generate_content.render(), "extension/generated/content-protocol.js is stale: run `make generate`"


def test_check_mode_covers_the_content_scripts_file(tmp_path, monkeypatch):
    monkeypatch.setattr(generate, "OUTPUT", tmp_path / "protocol.js")
    monkeypatch.setattr(generate, "CONTENT_OUTPUT", tmp_path / "content-protocol.js")
    assert generate.main([]) == 0
    assert generate.main(["--check"]) == 0
    (tmp_path / "content-protocol.js").write_text("// old\n")
    assert generate.main(["--check"]) == 1


def test_generated_roles_js_is_not_stale():
    current = generate.ROLES_OUTPUT.read_text(encoding="utf-8")
    assert current == generate_roles.render(), "extension/generated/roles.js is stale: run `make generate`"


def test_roles_js_carries_every_table_the_deep_read_uses():
    from protocol.roles import tables

    text = generate_roles.render()
    for key, roles in tables().items():
        assert f"{key}: new Set(" in text and all(f'"{role}"' in text for role in roles)
