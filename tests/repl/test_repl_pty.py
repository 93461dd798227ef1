"""The REPL as a person uses it: a pseudo-terminal, a real host, top-level await, completion,
Ctrl-C and Ctrl-D; browser calls go through the host's gateway and gatekeeper."""

from __future__ import annotations

import asyncio
import re

from host.control.client import ControlClient
from tests.support.stdio_host import TAB


def test_banner_names_the_host_and_ctrl_d_leaves_with_0(repl, stdio_host):
    assert f"attached to host pid {stdio_host.pid}" in repl.output.decode()
    repl.end_of_input()
    assert repl.wait() == 0


def test_top_level_await_multi_line_statements_and_plain_python(repl):
    repl.line("import asyncio")
    repl.expect("tw> ")
    repl.line("await asyncio.sleep(0, result=6 * 7)")
    assert "42" in repl.expect("tw> ")
    repl.line("for i in range(2):")
    repl.expect("... ")
    repl.line("    print('line', i)")
    repl.expect("... ")
    repl.line("")
    out = repl.expect("tw> ")
    assert "line 0" in out and "line 1" in out


def test_a_bare_coroutine_is_awaited_and_shown_pretty(repl, stdio_host):
    repl.line("tw.info()")
    out = repl.expect("tw> ")
    assert f"pid               {stdio_host.pid}" in out
    assert "browserSessionId  repl-test-session" in out


def test_a_tool_runs_through_the_gatekeeper_and_prints_its_snapshot(repl):
    repl.line("await tw.snapshot(tab=%d)" % TAB["id"])
    out = repl.expect("tw> ")
    assert "ok read_page [tab 7]  gatekeeper ALLOW (read_allowed)" in out
    assert '- button "Pay" [ref=sdoc_1_1]' in out
    repl.line("tw.refs()")  # the last tab used
    out = repl.expect("tw> ")
    assert "sdoc_1_2  textbox  Card" in out
    repl.line("tw.audit(3, tool='read_page')")
    assert "read_page @ https://shop.example  ALLOW (read_allowed)" in repl.expect("tw> ")


def test_a_denial_is_a_structured_result_not_a_crash(repl):
    repl.line("await tw.deny('click', 'https://shop.example')")
    repl.expect("tw> ")
    repl.line("tw.run('click', tab=7, ref='sdoc_1_1', element='Pay button', policy='auto')")
    out = repl.expect("tw> ")
    assert "failed click [tab 7]: denied (phase authorize)" in out
    assert "gatekeeper DENY (rule_deny): a permission rule denies it - denied by rule click @ https://shop.example" in out
    # The rule by its id, and where to change it.
    assert re.search(r"id rule:[0-9a-f-]+; to change that, delete it in Settings → Permission rules, or run\s+"
                     r"tw\.remove_rule\('rule:[0-9a-f-]+'\) at the REPL", out), out
    repl.line("tw.explain('click', tab=7, ref='sdoc_1_1', element='Pay button')")
    out = repl.expect("tw> ")
    assert "click @ https://shop.example -> DENY (rule_deny)" in out
    assert re.search(r"\d\. rule_deny +HIT +denied by click @ https://shop.example", out), out


def test_use_refuses_a_tab_that_is_not_open_and_names_the_open_ones(repl):
    repl.line("tw.use(70)")
    out = repl.expect("tw> ")
    assert "there is no tab 70; the open tabs are:" in out and "  7  Cart  https://shop.example/cart" in out, out
    repl.line("tw.use(7)")
    out = repl.expect("tw> ")
    assert "{" not in out and "Traceback" not in out, out  # readable lines, not a dict


def test_the_scope_lock_and_the_audit_speak_in_words(repl):
    repl.line("tw.lock('https://elsewhere.example', thread='locked')")
    assert "Thread locked may change things only on: https://elsewhere.example." in repl.expect("tw> ")
    repl.line("tw.run('type', tab=7, ref='sdoc_1_2', element='Card', text='x', thread='locked', policy='auto')")
    out = repl.expect("tw> ")
    assert "gatekeeper DENY (scope_lock): outside this task's scope lock" in out
    assert "edit the lock in Settings → Scope lock, or run tw.unlock() at the REPL" in " ".join(out.split())
    repl.line("tw.unlock(thread='locked')")
    assert "Thread locked has no scope lock." in repl.expect("tw> ")
    repl.line("await tw.snapshot(tab=7, thread='once')")
    repl.expect("tw> ")
    repl.line("tw.audit(10, thread_id='once')")
    out = repl.expect("tw> ")
    # A read is judged again just before it runs; the same decision is written once.
    assert out.count("ALLOW (read_allowed): it only reads") == 1, out
    assert "outcome ok (done)" in out


def test_host_errors_print_one_line_with_their_code(repl):
    repl.line("tw.call('no.such_method')")
    assert "error not_found: no control method 'no.such_method'" in repl.expect("tw> ")
    repl.line("tw.call('gatekeeper.add_rule', tool='click', origin='https://x.example', verdict='maybe')")
    assert "error invalid_message: invalid params: Invalid enum value 'maybe' - at `$.verdict`" in repl.expect("tw> ")


def test_ctrl_c_cancels_a_running_statement_and_the_prompt_comes_back(repl):
    repl.line("import asyncio; print('sleeping', 'now'); await asyncio.sleep(600)")
    repl.expect("sleeping now")  # the statement is running
    repl.interrupt()
    repl.expect("cancelled")
    repl.expect("tw> ")
    repl.line("'still here'")
    assert "'still here'" in repl.expect("tw> ")


def test_ctrl_c_at_the_prompt_drops_the_line(repl):
    repl.send("half typed")
    repl.expect("half typed")
    repl.interrupt_until("KeyboardInterrupt")
    repl.expect("tw> ")
    repl.line("1 + 1")
    out = repl.expect("tw> ")
    assert "2" in out and "half typed" not in out


def test_completion_of_tw_attributes_and_tool_names(repl):
    repl.send("tw.snaps\t")
    repl.expect("tw.snapshot")
    repl.send("\x15")  # clear the line
    repl.send("tw.run('read_p\t")
    repl.expect("read_page")  # ambiguous with read_page_deep: completed to the common prefix
    repl.send("\x15")
    repl.send("tw.run('read_page_d\t")
    repl.expect("read_page_deep")
    repl.send("\x15")
    repl.line("")
    repl.expect("tw> ")


def test_history_is_saved_for_the_next_session(repl, tw_home):
    repl.line("'remember me'")
    repl.expect("tw> ")
    repl.end_of_input()
    assert repl.wait() == 0
    history = (tw_home / "data" / "repl_history").read_text()
    assert "'remember me'" in history


def test_lines_with_secrets_stay_out_of_the_history_which_is_private(repl, tw_home):
    repl.line("my_token = 'hunter2-abc'")
    repl.expect("tw> ")
    repl.line("'kept line'")
    repl.expect("tw> ")
    repl.end_of_input()
    assert repl.wait() == 0
    path = tw_home / "data" / "repl_history"
    history = path.read_text()
    assert "'kept line'" in history and "hunter2" not in history
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_mcp_token_is_asked_without_echo(repl):
    repl.line("tw.mcp_token('nowhere')")
    repl.expect("(not shown): ")
    repl.send("s3cret-typed\r")
    out = repl.expect("tw> ")
    assert "s3cret-typed" not in out  # neither echoed nor in the answer
    assert "nowhere" in out and "no server" in out  # the host refuses a token for an unknown server


def test_watch_prints_events_while_a_second_client_works(repl, stdio_host):
    # Five denials in one thread make the gatekeeper raise an alert, which the host broadcasts;
    # the denials come from a second client attached at the same time as the REPL.
    repl.line("tw.watch('alert', count=1, timeout=60)")
    repl.expect("tw.watch(")
    asyncio.run(_deny_five_times(stdio_host.pid))
    out = repl.expect("tw> ")
    assert '[alert] {"threadId": "burst"' in out
    assert "\n1\n" in out  # watch returns how many events it printed


async def _deny_five_times(pid: int) -> None:
    other = await ControlClient.connect(pid=pid, client="second")
    try:
        status = await other.call("control.status")
        assert {"repl", "second"} <= {c["client"] for c in status["clients"]}
        await other.call("gatekeeper.add_rule", tool="click", origin="https://shop.example", verdict="deny")
        snapshot = await other.call("tools.call", tool="read_page", tab_id=7, thread_id="burst")
        assert snapshot["ok"], snapshot
        for _ in range(5):
            result = await other.call("tools.call", tool="click", tab_id=7, thread_id="burst", policy="auto",
                                      params={"ref": "sdoc_1_1", "element": "Pay button"})
            assert result["error"]["code"] == "denied", result
    finally:
        await other.close()


def test_list_names_the_running_host_and_no_host_is_a_clear_error(stdio_host, tw_home, tmp_path):
    import subprocess
    import sys

    from tests.repl.conftest import repl_env
    from tests.support.stdio_host import ROOT

    listed = subprocess.run([sys.executable, "-m", "host", "repl", "--list"], env=repl_env(tw_home), cwd=ROOT,
                            capture_output=True, text=True, timeout=30)
    assert f"pid {stdio_host.pid}  started " in listed.stdout and " unix " in listed.stdout
    empty = tmp_path / "empty" / "tw"
    alone = subprocess.run([sys.executable, "-m", "host", "repl"], env=repl_env(empty), cwd=ROOT, capture_output=True,
                           text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert alone.returncode == 1
    assert "tabwarden repl: cannot attach: not_found: no running Tabwarden host found" in alone.stdout
