"""`tw`: the running host as the REPL sees it.

Every browser action is a `tools.call`, so it takes the host's one authorisation path (and so
the gatekeeper) exactly as the side panel's would: the REPL has no way around a denial or an
approval. What it adds is convenience: a default thread (`tw.thread`) and policy (`tw.policy`),
the last tab used, tab/ref lookups for `explain`, and output that prints well.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from protocol.permissions import describe_policy

from host.control.client import ControlClient
from host.repl import chat as engine_chat
from host.repl import interactions as waits
from host.repl import mcp_view
from host.repl import memory_view as memory_views
from host.repl import render, site_access
from host.repl.errors import UsageError
from host.repl.skills_console import SkillsConsole
from host.repl.style import Style
from host.repl.views import Text, View
from host.transport.errors import RequestError

DEFAULT_THREAD = "repl"
TAIL_INTERVAL_S = 0.5

HELP = """\
tw: the running host (await the calls; a bare `tw.tabs()` is awaited for you)
  browser   tw.tabs()  tw.use(tab)  tw.snapshot(tab=None)  tw.run(tool, tab=None, **params)
            tw.tools()  tw.refs(tab=None)  tw.site_access()  tw.grant_site("https://example.com")
            tw.revoke_site("https://example.com")
  gatekeeper tw.explain(tool, tab=None, ref=None, origin=None, **params)  tw.permissions()
            tw.rules()  tw.allow/ask/deny(tool, origin)  tw.remove_rule(id)
            tw.block(pattern)  tw.guard(pattern)  tw.unblock(pattern)  tw.unguard(pattern)
            tw.grants()  tw.revoke(thread=None)  tw.set_policy(policy, thread=None)
            tw.lock(*sites, thread=None)  tw.unlock(thread=None)   (this task's scope lock)
  audit     tw.audit(last=20, **filters)  tw.tail(**filters)  tw.verify_audit()
  chat      tw.chat(text, thread=None, policy=None)  tw.follow(thread=None)  tw.threads()
            tw.new_thread(title=None, policy=None)  tw.conversation(thread=None)
            tw.approvals(thread=None)  tw.approve(id=None, kind="accept")  tw.decline(id=None, note=None)
            (a tw.run that needs approval waits for tw.approve() too)
  waits     tw.interactions(thread=None)   (questions, actions for you, page watches, scheduled resumes)
            tw.reply("answer")  tw.reply(choice=N)  tw.reply(done=True)  tw.reply(cancel=True, note=None)
            (add interaction_id=... when several wait)
  providers tw.remove_provider(name)   (and its stored API key; add one with `tabwarden provider add` or on
            the settings page)
  memory    tw.memory(query=None)  tw.remember(key, value)  tw.forget(key)  tw.clear_memory()
  skills    tw.skills.list()  tw.skills.add(path)  tw.skills.show(name)  tw.skills.enable(name, on)
            tw.skills.approve(name)  tw.skills.remove(name)  (see tw.skills for plugins)
  mcp       tw.mcp(server=None)   (MCP servers from mcp.json, their state and tools)
            tw.mcp_token(server)  (asks for a bearer token without echo)  tw.mcp_token(server, clear=True)
  events    tw.watch(*topics, count=None, timeout=None)   (topics: names, `family.*`, `*`)
  raw       tw.call(method, **params)  tw.methods()  tw.info()  tw.clients()
  settings  tw.thread = "repl"   tw.policy = None | "always" (Ask always) | "untrusted" (Ask before changes)
            | "auto" (Automatic)
Ctrl-C stops a running call (or a tail/watch); Ctrl-D leaves."""


class Tabwarden:
    """The REPL's handle on one running host."""

    def __init__(self, client: ControlClient, style: Style, thread: str = DEFAULT_THREAD):
        self.client = client
        self.style = style
        self.thread = thread
        self.policy: str | None = None
        self.last_tab: int | None = None
        self.watched: set[str] = set()  # topics a running `watch` prints
        self.chat_thread: str | None = None  # the engine thread `chat` continues
        self._printers: dict[str, engine_chat.EventPrinter] = {}
        # A site grant reloads the extension, which restarts the host: the pid of the host that
        # is expected to go, and what to run on the client of the host that follows.
        self.restarting: int | None = None
        self.on_reattach: Callable[[ControlClient], Awaitable[None]] | None = None
        self.skills = SkillsConsole(self)

    def __repr__(self) -> str:
        return f"<tw: host pid {self.client.pid}, thread {self.thread!r}, policy {describe_policy(self.policy) if self.policy else 'host default'}>"

    def help(self) -> Text:
        """What `tw` can do."""
        return Text(HELP)

    def _view(self, data: Any, renderer) -> View:
        return View(data, renderer, self.style)

    # ------------------------------------------------------------------ raw

    async def call(self, method: str, **params: Any) -> Any:
        """Any control method, with its raw JSON answer."""
        return await self.client.call(method, **params)

    async def methods(self) -> list[str]:
        """Every control method the host serves."""
        return await self.client.call("host.methods")

    async def info(self) -> View:
        """The host: pid, extension, browser session."""
        return self._view(await self.client.call("host.info"), render.readable)

    async def clients(self) -> View:
        """Clients attached to the host and refused connections by reason."""
        return self._view(await self.client.call("control.status"), _clients)

    # ------------------------------------------------------------------ browser (through the gatekeeper)

    async def run(self, tool: str, tab: int | None = None, *, thread: str | None = None,
                  policy: str | None = None, **params: Any) -> View:
        """Run a browser tool as thread `tw.thread`, through the gatekeeper (the host's own tools
        run only in conversations)."""
        args: dict[str, Any] = {"tool": tool, "params": params, "thread_id": thread or self.thread}
        if tab is not None:
            args["tab_id"] = tab
        chosen = policy or self.policy
        if chosen is not None:
            args["policy"] = chosen
        # ask: a call that needs an approval waits on the host for tw.approve() / tw.decline()
        result = await self.client.call("tools.call", ask=True, **args)
        self._note_tab(result)
        if _waiting(result):
            return self._view(result, engine_chat.waiting_card)
        return self._view(result, render.tool_result)

    def _note_tab(self, result: Any) -> None:
        for key in ("resultTabId", "tabId"):
            if isinstance(result, dict) and isinstance(result.get(key), int):
                self.last_tab = result[key]
                break

    async def tabs(self) -> View:
        """The open tabs (the `tabs_list` tool)."""
        return await self.run("tabs_list")

    async def snapshot(self, tab: int | None = None, **params: Any) -> View:
        """A snapshot of the page with its refs (the `read_page` tool)."""
        return await self.run("read_page", tab, **params)

    async def use(self, tab: int) -> View:
        """Make `tab` the default tab of `tw.thread` (one of the open tabs: `tw.tabs()`)."""
        tabs = await self.client.call("browser.tabs")
        if not any(item.get("id") == tab for item in tabs):
            raise UsageError(f"there is no tab {tab!r}; the open tabs are:\n{_tab_lines(tabs)}")
        routes = await self.client.call("browser.bind_target", thread_id=self.thread, tab_id=tab)
        self.last_tab = tab
        return self._view(routes, render.readable)

    async def tools(self) -> View:
        """The browser tools with their level and effects."""
        tools = await self.client.call("tools.list")
        rows = [(t["name"], t["level"], t["effects"], t.get("category") or "", t["description"]) for t in tools]
        return self._view(tools, lambda _d, s: render.table(rows, ("tool", "level", "effects", "category", "what"), s))

    async def refs(self, tab: int | None = None) -> View:
        """The host-side ref map of a tab (default: the last tab used)."""
        tab = self._tab(tab)
        return self._view(await self.client.call("browser.refs", tab_id=tab), _refs)

    async def site_access(self) -> View:
        """The sites the extension may script (page tools run only there)."""
        answer = await self.client.call("browser.site_access")
        return self._view(answer, lambda d, _s: "\n".join(d.get("origins") or []) or "(no site yet)")

    async def grant_site(self, site: str) -> Text:
        """Grant Tabwarden site access to `site` where no side panel can (a headless launch: the
        extension reloads to take it, and the REPL attaches to the host it restarts); elsewhere,
        say exactly how to grant it."""
        origin = site_access.site_origin(site)
        answer = await self.client.call("browser.site_access", origin=origin)
        if answer.get("granted"):
            return Text(site_access.explain(answer))
        self.restarting = self.client.pid
        try:
            granted = await self.client.call("browser.grant_site", origin=origin)
            if granted.get("restarting"):
                await self._reattach(origin, True)
        except RequestError as exc:
            if exc.info.code != "unsupported":
                raise
            return Text(site_access.explain(answer, exc.info.message))
        finally:
            self.restarting = None
        return Text(site_access.granted_line(granted, self.client.pid))

    async def revoke_site(self, site: str) -> Text:
        """Take back Tabwarden's site access to `site` (a reload where the grant is in the
        extension's manifest, as `grant_site` and `--site-access` put it)."""
        origin = site_access.site_origin(site)
        self.restarting = self.client.pid
        try:
            answer = await self.client.call("browser.revoke_site", origin=origin)
            if answer.get("restarting"):
                await self._reattach(origin, None)
                # Chrome keeps a site it once granted as an optional one it may grant again: that goes now.
                again = await self.client.call("browser.revoke_site", origin=origin)
                answer = {**answer, "revoked": answer["revoked"] or again["revoked"]}
        finally:
            self.restarting = None
        return Text(site_access.revoked_line(answer, self.client.pid))

    async def _reattach(self, origin: str, expect_granted: bool | None) -> None:
        self.client = await site_access.reattach(self.client, origin, expect_granted, self._reconnect)
        if self.on_reattach is not None:
            await self.on_reattach(self.client)

    async def _reconnect(self) -> ControlClient:
        return await ControlClient.connect(client="repl")

    def _tab(self, tab: int | None) -> int:
        if tab is not None:
            return tab
        if self.last_tab is None:
            raise UsageError("which tab? pass tab=<its id> or call tw.use(<its id>) first; tw.tabs() lists the tabs "
                             "with their ids")
        return self.last_tab

    # ------------------------------------------------------------------ gatekeeper

    async def explain(self, tool: str, tab: int | None = None, *, ref: str | None = None, origin: str | None = None,
                      thread: str | None = None, policy: str | None = None, **params: Any) -> View:
        """Ask the gatekeeper what it would decide for a call, and why (nothing runs, nothing is
        audited). `tab` supplies the origin, `ref` the element facts from the tab's ref map."""
        target = None
        if ref is not None:
            params.setdefault("ref", ref)
            hint = await self._ref_hint(self._tab(tab), ref)
            target = {"hints": [hint]} if hint else None
            if hint and hint.get("inputType"):
                target = {**(target or {}), "input_type": hint["inputType"], "input_types": [hint["inputType"]]}
        if origin is None and tab is not None:
            origin = await self._tab_url(tab)
        args: dict[str, Any] = {"tool": tool, "params": params, "origin": origin or "",
                                "thread_id": thread or self.thread}
        if target is not None:
            args["target"] = target
        if policy or self.policy:
            args["policy"] = policy or self.policy
        return self._view(await self.client.call("gatekeeper.explain", **args), render.decision)

    async def _tab_url(self, tab: int) -> str:
        for item in await self.client.call("browser.tabs"):
            if item.get("id") == tab:
                return str(item.get("url") or "")
        raise UsageError(f"there is no tab {tab} (see tw.tabs())")

    async def _ref_hint(self, tab: int, ref: str) -> dict[str, Any] | None:
        refs = await self.client.call("browser.refs", tab_id=tab)
        return next((h for h in refs.get("refs", []) if h.get("ref") == ref), None)

    async def permissions(self, thread: str | None = None) -> View:
        """What is in force: policy, rules with provenance, origin lists, revision."""
        data = await self.client.call("gatekeeper.permissions", thread_id=thread or self.thread)
        return self._view(data, _permissions)

    async def rules(self) -> View:
        """Every rule in force, with where it came from."""
        return self._view(await self.client.call("gatekeeper.rules"), _rules)

    async def add_rule(self, tool: str, origin: str, verdict: str, **args: str) -> View:
        """Store a user rule; keyword arguments are `args` conditions (regexes on parameters)."""
        params: dict[str, Any] = {"tool": tool, "origin": origin, "verdict": verdict}
        if args:
            params["args"] = args
        rule = await self.client.call("gatekeeper.add_rule", **params)
        return self._view(rule, render.readable)

    async def allow(self, tool: str, origin: str, **args: str) -> View:
        """Store an allow rule."""
        return await self.add_rule(tool, origin, "allow", **args)

    async def ask(self, tool: str, origin: str, **args: str) -> View:
        """Store an ask rule."""
        return await self.add_rule(tool, origin, "ask", **args)

    async def deny(self, tool: str, origin: str, **args: str) -> View:
        """Store a deny rule."""
        return await self.add_rule(tool, origin, "deny", **args)

    async def remove_rule(self, rule_id: str) -> Text:
        """Remove a stored rule by id (see tw.rules())."""
        answer = await self.client.call("gatekeeper.remove_rule", id=rule_id)
        return Text(f"Removed rule {answer.get('removed', rule_id)}.")

    async def block(self, pattern: str) -> Text:
        """Add an origin pattern to the blocked list."""
        answer = await self.client.call("gatekeeper.add_origin", pattern=pattern, list="blocked")
        return Text(f"Added {answer.get('pattern', pattern)} to your blocked list (tw.unblock to undo).")

    async def guard(self, pattern: str) -> Text:
        """Add an origin pattern to the guarded list (writes there always ask)."""
        answer = await self.client.call("gatekeeper.add_origin", pattern=pattern, list="guarded")
        return Text(f"Added {answer.get('pattern', pattern)} to your guarded list (tw.unguard to undo).")

    async def unblock(self, pattern: str) -> Text:
        """Remove a user pattern from the blocked list."""
        answer = await self.client.call("gatekeeper.remove_origin", pattern=pattern, list="blocked")
        return Text(f"Removed {answer.get('removed', pattern)} from your blocked list.")

    async def unguard(self, pattern: str) -> Text:
        """Remove a user pattern from the guarded list."""
        answer = await self.client.call("gatekeeper.remove_origin", pattern=pattern, list="guarded")
        return Text(f"Removed {answer.get('removed', pattern)} from your guarded list.")

    async def grants(self, thread: str | None = None) -> View:
        """What each thread was allowed "for this task" (the cards' Allow for this task)."""
        return self._view(await self.client.call("gatekeeper.grants", **_maybe(thread_id=thread)), _grants)

    async def revoke(self, thread: str | None = None) -> View:
        """Take back what one thread (or every thread) was allowed for its task."""
        return self._view(await self.client.call("gatekeeper.revoke_grants", **_maybe(thread_id=thread)), _grants)

    async def set_policy(self, policy: str | None, thread: str | None = None) -> Text:
        """Set (None clears) a thread's policy override on the host."""
        thread = thread or self.thread
        answer = await self.client.call("gatekeeper.set_policy", thread_id=thread, policy=policy)
        effective = answer.get("policy") if isinstance(answer, dict) else answer
        return Text(f"Thread {thread} now runs under {describe_policy(effective)}.")

    async def lock(self, *sites: str, thread: str | None = None) -> Text:
        """Confine a thread's changes and navigations to `sites` (its scope lock)."""
        if not sites:
            raise UsageError("which sites? tw.lock('https://shop.example', '*.shop.example'); tw.unlock() lifts it")
        return await self._scope_lock(list(sites), thread)

    async def unlock(self, thread: str | None = None) -> Text:
        """Lift a thread's scope lock."""
        return await self._scope_lock(None, thread)

    async def _scope_lock(self, patterns: list[str] | None, thread: str | None) -> Text:
        thread = thread or self.thread
        answer = await self.client.call("gatekeeper.set_scope_lock", thread_id=thread, patterns=patterns)
        held = answer.get("patterns") if isinstance(answer, dict) else None
        if held:
            return Text(f"Thread {thread} may change things only on: {', '.join(held)}.")
        return Text(f"Thread {thread} has no scope lock.")

    # ------------------------------------------------------------------ audit

    async def audit(self, last: int = 20, **filters: Any) -> View:
        """The newest audit rows (filters: thread_id, tool, verdict), each code followed by its
        words and each row by its thread's title."""
        rows = await self.client.call("gatekeeper.audit", last=last, **filters)
        titles = await self._titles()
        return self._view(rows, lambda data, style: render.audit_rows(data, style, titles))

    async def _titles(self) -> dict[str, str]:
        """Thread id -> title (none from a host without an engine)."""
        try:
            threads = await self.client.call("engine.threads")
        except RequestError:
            return {}
        return {str(t.get("id")): str(t.get("title")) for t in threads if t.get("title")}

    async def verify_audit(self) -> View:
        """Recompute the audit log's hash chain."""
        return self._view(await self.client.call("gatekeeper.verify_audit"), render.readable)

    async def tail(self, last: int = 10, **filters: Any) -> None:
        """Print the newest audit rows, then each new one as it is written, until Ctrl-C."""
        rows = await self.client.call("gatekeeper.audit", last=last, **filters)
        titles = await self._titles()
        if rows:
            print(render.audit_rows(rows, self.style, titles), flush=True)
        after = rows[-1]["seq"] if rows else await self._audit_head()
        while True:
            await asyncio.sleep(TAIL_INTERVAL_S)
            rows = await self.client.call("gatekeeper.audit", after=after, **filters)
            if rows:
                if any(row.get("thread_id") not in titles for row in rows):
                    titles = await self._titles()  # a thread started since
                print(render.audit_rows(rows, self.style, titles), flush=True)
                after = rows[-1]["seq"]

    async def _audit_head(self) -> int:
        rows = await self.client.call("gatekeeper.audit", last=1)
        return rows[-1]["seq"] if rows else 0

    # ------------------------------------------------------------------ chat (the engine)

    async def threads(self) -> View:
        """The engine's threads, newest first."""
        return self._view(await self.client.call("engine.threads"), engine_chat.threads_table)

    async def new_thread(self, title: str | None = None, policy: str | None = None) -> str:
        """Create an engine thread (and make it the one `chat` continues); returns its id."""
        op: dict[str, Any] = {"type": "thread.create"}
        if title:
            op["title"] = title
        if policy:
            op["permissionPolicy"] = policy
        answer = await engine_chat.engine_op(self.client, op)
        if answer.get("type") != "command.ack":
            raise UsageError(f"the engine refused the thread: {answer.get('code')}: {answer.get('message')}")
        self.chat_thread = answer["threadId"]
        return self.chat_thread

    async def chat(self, text: str, thread: str | None = None, policy: str | None = None) -> None:
        """Start a turn and print its events until it completes or waits on the user (an
        approval or an interaction). The last tab used (`tw.use`) is the turn's default tab."""
        thread = thread or self.chat_thread or await self.new_thread(title="REPL chat")
        self.chat_thread = thread
        user_input: dict[str, Any] = {"text": text}
        if self.last_tab is not None:
            user_input["browserContext"] = {"defaultTab": {"tabId": self.last_tab}}
        op: dict[str, Any] = {"type": "turn.submit", "threadId": thread, "input": user_input}
        if policy or self.policy:
            op["overrides"] = {"permissionPolicy": policy or self.policy}
        await engine_chat.follow(self.client, thread, self.style, start=engine_chat.engine_op(self.client, op),
                                 printer=self._printer(thread))

    async def follow(self, thread: str | None = None) -> None:
        """Print a thread's events until its turn completes or waits on the user."""
        thread = self._chat_thread(thread)
        await engine_chat.follow(self.client, thread, self.style, printer=self._printer(thread))

    async def conversation(self, thread: str | None = None) -> View:
        """A thread's current branch and what it waits on (approvals, interactions)."""
        snapshot = await self.client.call("engine.snapshot", thread_id=self._chat_thread(thread))
        return self._view(snapshot, engine_chat.conversation)

    async def approvals(self, thread: str | None = None) -> View:
        """Approvals waiting for an answer (in one thread, or all): a chat's and a `tw.run`'s."""
        return self._view(await self._approvals(thread), engine_chat.approvals_table)

    async def _approvals(self, thread: str | None = None) -> list[dict[str, Any]]:
        items = list(await self.client.call("tools.approvals", **_maybe(thread_id=thread)))
        try:
            items += await self.client.call("engine.approvals", **_maybe(thread_id=thread))
        except RequestError:
            pass  # a host without an engine: only tw.run's approvals
        return items

    async def approve(self, approval_id: str | None = None, kind: str = "accept") -> View | None:
        """Answer an approval (the only pending one when no id is given): a `tw.run` call then
        runs and shows its result; a chat's turn is followed."""
        pending = await self._pending(approval_id)
        if pending.get("direct"):
            return await self._answer_run(pending, kind)
        answer = self.client.call("engine.answer", approval_id=pending["approvalId"], kind=kind)
        await engine_chat.follow(self.client, pending["threadId"], self.style, start=answer,
                                 printer=self._printer(pending["threadId"]))
        return None

    async def decline(self, approval_id: str | None = None, note: str | None = None) -> View | None:
        """Decline an approval (optionally saying why): a `tw.run` call ends unsent; a chat's turn
        is followed."""
        pending = await self._pending(approval_id)
        if pending.get("direct"):
            return await self._answer_run(pending, "decline", note)
        answer = self.client.call("engine.answer", approval_id=pending["approvalId"], kind="decline",
                                  **_maybe(note=note))
        await engine_chat.follow(self.client, pending["threadId"], self.style, start=answer,
                                 printer=self._printer(pending["threadId"]))
        return None

    async def _answer_run(self, pending: dict[str, Any], kind: str, note: str | None = None) -> View:
        result = await self.client.call("tools.answer", approval_id=pending["approvalId"], kind=kind,
                                        **_maybe(note=note))
        self._note_tab(result)
        return self._view(result, render.tool_result)

    async def _pending(self, approval_id: str | None) -> dict[str, Any]:
        items = await self._approvals()
        if approval_id is not None:
            found = [a for a in items if a.get("approvalId") == approval_id]
            if not found:
                raise UsageError(f"no pending approval {approval_id!r} (see tw.approvals())")
            return found[0]
        if len(items) != 1:
            raise UsageError(f"{len(items)} approvals are pending: name one (see tw.approvals())")
        return items[0]

    async def interactions(self, thread: str | None = None) -> View:
        """What runs wait on (in one thread, or all): questions, actions for the user, page
        watches and scheduled resumes, with their time left."""
        items = await self.client.call("interactions.list", **_maybe(thread_id=thread))
        return self._view(items, waits.table)

    async def reply(self, answer: Any = None, *, interaction_id: str | None = None, choice: int | None = None,
                    done: bool = False, cancel: bool = False, note: str | None = None) -> None:
        """Answer what a run waits on, then follow the turn: `tw.reply("blue")` or
        `tw.reply(choice=2)` answers a question, `tw.reply(done=True)` reports an action done
        (or ends a watch / resumes now), `tw.reply(cancel=True, note=...)` declines any of
        them. Without `interaction_id` it goes to the only pending interaction it fits."""
        wanted = waits.response(answer, choice=choice, done=done, cancel=cancel, note=note)
        item = waits.pick(await self.client.call("interactions.list"), wanted, interaction_id)
        sent = self.client.call("interactions.answer", **waits.answer_params(item, wanted))
        await engine_chat.follow(self.client, item["threadId"], self.style, start=sent,
                                 printer=self._printer(item["threadId"]))

    def _printer(self, thread: str) -> "engine_chat.EventPrinter":
        if thread not in self._printers:
            self._printers[thread] = engine_chat.EventPrinter(thread, self.style)
        return self._printers[thread]

    def _chat_thread(self, thread: str | None) -> str:
        chosen = thread or self.chat_thread
        if chosen is None:
            raise UsageError("which thread? pass thread=... (see tw.threads()) or start one with tw.chat(text)")
        return chosen

    # ------------------------------------------------------------------ memory (per profile, used by the model)

    async def memory(self, query: str | None = None) -> View:
        """The memory entries (or those whose key or value contains `query`)."""
        return self._view(await self.client.call("memory.list", **_maybe(query=query)), memory_views.table)

    async def remember(self, key: str, value: str) -> View:
        """Create or replace a memory as the user (the host refuses a bad key, a value over its
        limit or a full memory, and then stores nothing)."""
        return self._view(await self.client.call("memory.set", key=key, value=value), memory_views.entry)

    async def forget(self, key: str) -> View:
        """Forget one memory."""
        return self._view(await self.client.call("memory.delete", key=key), memory_views.forgotten(key))

    async def clear_memory(self) -> View:
        """Forget every memory."""
        return self._view(await self.client.call("memory.clear"), memory_views.cleared)

    # ------------------------------------------------------------------ model providers

    async def remove_provider(self, name: str) -> Text:
        """Remove a model provider and its stored API key (the settings page's Remove does the
        same); says what became of the default."""
        removed = await self.client.call("engine.remove_provider", name=name)
        return Text(str(removed.get("message")))

    # ------------------------------------------------------------------ MCP servers

    async def mcp(self, server: str | None = None) -> View:
        """The MCP servers (mcp.json), their state and the tools they offer (connecting as needed)."""
        status = await self.client.call("mcp.servers")
        tools = await self.client.call("mcp.tools", **_maybe(server=server))
        if server is not None:
            status = {**status, "servers": [s for s in status["servers"] if s["id"] == server]}
        return self._view({"status": status, "tools": tools}, mcp_view.servers)

    async def mcp_token(self, server: str, *, clear: bool = False) -> View:
        """Store (asked without echo) or, with clear=True, forget an MCP server's bearer token;
        the token never appears on screen or in the history."""
        import getpass

        token = None
        if not clear:
            token = await asyncio.to_thread(getpass.getpass, f"bearer token for MCP server {server!r} (not shown): ")
            if not token:
                raise UsageError("no token typed; nothing changed (use clear=True to forget the stored one)")
        return self._view(await self.client.call("mcp.set_token", server=server, token=token), render.readable)

    # ------------------------------------------------------------------ events

    async def watch(self, *topics: str, count: int | None = None, timeout: float | None = None) -> int:
        """Print events on `topics` (default: all) as they arrive, until Ctrl-C, `count` events
        or `timeout` seconds; returns how many were printed."""
        seen = 0
        topics = topics or ("*",)

        async def consume() -> None:
            nonlocal seen
            async for item in self.client.stream(*topics):
                print(render.event(item.topic, item.data, self.style), flush=True)
                seen += 1
                if count is not None and seen >= count:
                    return

        added = set(topics) - self.watched
        self.watched |= added
        try:
            await asyncio.wait_for(consume(), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self.watched -= added
        return seen


def _waiting(result: Any) -> bool:
    """Whether a `tools.call` answer says the call waits on an approval."""
    return isinstance(result, dict) and bool((result.get("details") or {}).get("waiting"))


def _maybe(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def _tab_lines(tabs: list[dict[str, Any]]) -> str:
    """The open tabs, one line each: id, title and address."""
    lines = [f"  {t.get('id')}  {render.cell(t.get('title') or '(untitled)')}  {t.get('url') or ''}".rstrip()
             for t in tabs]
    return "\n".join(lines) or "  (none)"


def _clients(data: dict[str, Any], style: Style) -> str:
    rows = [(c.get("client"), render.clock(c.get("connectedAt")), ", ".join(c.get("topics", [])), c.get("running"))
            for c in data.get("clients", [])]
    refused = ", ".join(f"{k} {v}" for k, v in sorted(data.get("refused", {}).items())) or "none"
    return render.table(rows, ("client", "since", "topics", "running"), style) + f"\nrefused: {refused}"


def _refs(data: dict[str, Any], style: Style) -> str:
    rows = [(h.get("ref"), h.get("role"), h.get("name"), h.get("inputType") or h.get("tag")) for h in data.get("refs", [])]
    head = f"tab {data.get('tabId')}, snapshot {data.get('snapshot') or '-'}, {data.get('prior', 0)} older refs remembered"
    return head + "\n" + render.table(rows, ("ref", "role", "name", "type"), style)


def _rules(views: list[dict[str, Any]], style: Style) -> str:
    rows = [(v["rule"].get("id"), v["rule"].get("tool"), v["rule"].get("origin") or "(no origin)",
             render.verdict(v["rule"].get("verdict", "?"), style), v["rule"].get("args"), v.get("provenance"),
             "yes" if v.get("removable") else "no") for v in views]
    return render.table(rows, ("id", "tool", "origin", "verdict", "args", "from", "removable"), style)


def _permissions(data: dict[str, Any], style: Style) -> str:
    lines = [f"policy {style(describe_policy(data.get('policy')), 'bold')}, revision {str(data.get('revision', ''))[:16]}",
             f"sources: {', '.join(data.get('loaded_sources', []))}",
             f"blocked (user): {', '.join(data.get('sensitive_origins', [])) or '-'} "
             f"(+{data.get('builtin_sensitive_count', 0)} built in)",
             f"guarded (user): {', '.join(data.get('guarded_origins', [])) or '-'} "
             f"(+{data.get('builtin_guarded_count', 0)} built in)",
             _rules(data.get("rules", []), style)]
    return "\n".join(lines)


def _grants(data: dict[str, Any], style: Style) -> str:
    rows = [(thread, g["tool"], g["origin"] or "(no origin)") for thread, items in data.get("grants", {}).items()
            for g in items]
    head = "allowed for this task (each thread's “Allow for this task” answers, until the browser closes)"
    return head + "\n" + render.table(rows, ("thread", "tool", "origin"), style)
