"""Every decision, answer and outcome of a turn lands in the gatekeeper's audit log, and
`tabwarden audit` lists, filters and exports them (JSON Lines) and verifies the chain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[2]


def audit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "host", "audit", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)


async def test_a_turn_leaves_a_filterable_verifiable_trail(tmp_path):
    with FakeOpenAI([Reply(tool_calls=[("read_page", {}), ("click", {"ref": "s1_1_2", "element": "Buy"})]),
                     Reply(text="declined, stopping")]) as server:
        h = Harness(tmp_path, server.url)
        await h.start()
        try:
            thread = await h.new_thread()
            await h.submit(thread, "buy")
            request = await h.recorder.wait_for("approval.request")
            await h.answer(request["approvalId"], "decline", note="not now")
            await h.turn_done()
        finally:
            await h.stop()
    db = str(tmp_path / "db.sqlite3")
    exported = audit("export", "--db", db, "--thread", thread)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    trail = [(r["kind"], r["tool"], r.get("verdict") or r.get("approval_decision") or r.get("tool_outcome"))
             for r in rows]
    assert trail == [("decision", "read_page", "allow"),  # judged the same just before it ran: one row
                     ("outcome", "read_page", "ok"), ("decision", "click", "ask"), ("approval", "click", "decline"),
                     ("outcome", "click", "declined")]
    assert {r["turn_id"] for r in rows} == {rows[0]["turn_id"]} and all(r["call_id"] for r in rows)
    asks = audit("export", "--db", db, "--thread", thread, "--verdict", "ask", "--tool", "click", "--since", "1h")
    assert [json.loads(line)["code"] for line in asks.stdout.splitlines()] == ["policy_default"]
    before = audit("export", "--db", db, "--thread", thread, "--until", "1h")
    assert before.returncode == 0 and before.stdout == ""  # nothing is older than an hour
    window = audit("export", "--db", db, "--thread", thread, "--since", "1h", "--until", str(rows[3]["at"]),
                   "--limit", "2")
    assert [json.loads(line)["seq"] for line in window.stdout.splitlines()] == [rows[0]["seq"], rows[1]["seq"]]
    listed = audit("list", "--db", db, "--thread", thread)
    assert "user: decline" in listed.stdout and "outcome: declined" in listed.stdout
    verified = audit("verify", "--db", db)
    assert verified.returncode == 0 and "audit log ok" in verified.stdout
