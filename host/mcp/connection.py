"""One live session with one MCP server over Streamable HTTP, through the official SDK.

The SDK's client lives in anyio task groups that must be entered and left by the same task, so
each connection has an owner task that opens the session, waits until asked to close, and
closes it. Calls run from the engine's tasks; each is raced against the owner ending, so a
server that dies mid-call fails the call at once instead of leaving it waiting.

This module imports the SDK at the top: import it lazily (the manager does).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from host import __version__
from host.mcp.config import ServerConfig
from host.mcp.errors import SESSION_STATUSES, McpFailure, classify
from host.mcp.listening import listen_for_changes

log = logging.getLogger("tabwarden.mcp")

MAX_LIST_PAGES = 20
MAX_LISTED_TOOLS = 1000
CANCEL_GRACE_S = 2.0  # how long a cancelled call may take to tell the server
# While a server reports progress, a call may run past its timeout, up to this many times it.
PROGRESS_STRETCH = 10
# The time the user takes to answer a call's questions (and a model to answer its requests)
# does not count against the call's limits, up to this much in all: a server that asks again and
# again cannot keep a call open for good.
QUESTIONS_ALLOWANCE_S = 900.0
# How long one image a tool's answer links to may take to read (see linked_images.py).
LINKED_IMAGE_TIMEOUT_S = 10.0


class Connection:
    """A session with `config.url`; `open()` it, then `list_tools()` and `call()`; `close()` it."""

    def __init__(self, config: ServerConfig, token: str | None, on_tools_changed: Callable[[], None] = lambda: None):
        self.config = config
        self._token = token
        self._on_tools_changed = on_tools_changed
        self.statuses: list[int] = []  # recent HTTP statuses: the SDK hides a 401 behind a generic error
        # The server refused our session id (404, or a 400 about the session): it restarted or
        # expired the session. The SDK may turn that answer into a generic error, so it is noted here.
        self.session_refused = False
        self.refused_posts = 0  # requests (POST) the server refused for their session: unprocessed
        # What the server asked of us that the host does not do (sampling, elicitation): a call
        # that fails after such a request failed for that reason.
        self.unsupported: list[str] = []
        # The calls in flight, each with who answers its questions, its progress line and who
        # answers its model requests (see `asker_in_flight`).
        self._askers: list[tuple[Any, Any, Any]] = []
        self.client: Any = None
        self.error: McpFailure | None = None
        self.closed = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def live(self) -> bool:
        """True while the session is open (and the server has not said it forgot it)."""
        return self.client is not None and not self.closed.is_set() and not self.session_refused

    async def open(self) -> None:
        """Connect and initialise within the connect timeout (raises McpFailure)."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # read even when open() gave up
        self._task = asyncio.create_task(self._own(ready), name=f"mcp:{self.config.id}")
        try:
            async with asyncio.timeout(self.config.connect_timeout_seconds):
                await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise McpFailure("mcp_timeout", f"MCP server {self.config.id!r} did not complete the handshake within "
                                            f"{self.config.connect_timeout_seconds:g} s") from None
        except BaseException:
            await self.close()
            raise

    async def _own(self, ready: asyncio.Future[None]) -> None:
        cfg = self.config
        headers = dict(cfg.headers)
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        # Reads may idle while a slow tool works; the per-call timeout is enforced by `call`.
        timeout = httpx2.Timeout(cfg.connect_timeout_seconds, read=max(300.0, cfg.timeout_seconds + 30))
        try:
            async with httpx2.AsyncClient(headers=headers, timeout=timeout,
                                          event_hooks={"response": [self._saw_response]}) as http:
                transport = streamable_http_client(cfg.url, http_client=http)
                # The elicitation capability is declared only where the server's settings allow it.
                asking: dict[str, Any] = {"elicitation_callback": self._elicit} if cfg.elicitation else {}
                if cfg.sampling:
                    asking["sampling_callback"] = self._sample
                async with Client(transport, cache=None, message_handler=self._on_message,
                                  client_info=Implementation(name="tabwarden", version=__version__), **asking) as client:
                    self._note_refusals(client)
                    self.client = client
                    if not ready.done():
                        ready.set_result(None)
                    listening = asyncio.create_task(listen_for_changes(client, cfg.id, self._on_tools_changed),
                                                    name=f"mcp-listen:{cfg.id}")
                    try:
                        await self._stop.wait()
                    finally:
                        listening.cancel()
                        await asyncio.gather(listening, return_exceptions=True)
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpFailure("mcp_unreachable", f"the connection to {cfg.id!r} was closed"))
        except BaseException as exc:  # the SDK raises exception groups; the host must not crash
            failure = classify(exc, cfg.id, self.statuses)
            self.error = failure
            log.warning("MCP server %s: %s", cfg.id, failure.message)
            if not ready.done():
                ready.set_exception(failure)
        finally:
            self.client = None
            self.closed.set()

    async def _saw_response(self, response: Any) -> None:
        self.statuses = [*self.statuses[-7:], response.status_code]
        if response.status_code in SESSION_STATUSES and response.request.headers.get("mcp-session-id"):
            if response.status_code == 404 or await _mentions_session(response):
                self.session_refused = True
                if response.request.method == "POST":
                    self.refused_posts += 1

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._on_tools_changed()

    def _note_refusals(self, client: Any) -> None:
        # Giving the SDK callbacks would declare the sampling and elicitation capabilities, and
        # servers would then rely on them. Once the handshake has declared neither, ours replace
        # the SDK's refusals, to note that a server asked anyway.
        session = getattr(client, "session", None)
        for attribute, refusal in (("_sampling_callback", self._refuse_sampling),
                                   ("_elicitation_callback", self._refuse_elicitation)):
            if (attribute == "_elicitation_callback" and self.config.elicitation) or \
                    (attribute == "_sampling_callback" and self.config.sampling):
                continue
            if session is not None and hasattr(session, attribute):
                setattr(session, attribute, refusal)

    async def _elicit(self, context: Any, params: Any) -> Any:
        """A question from the server (form mode) to the user, through the running call's asker;
        its answer as the spec says: accept with the content, decline, or cancel. URL mode, and a
        question with no call that can ask (the REPL), are declined."""
        from mcp_types import ElicitResult

        from host.mcp.elicitation import ask_user

        asker, progress, _ = asker_in_flight(self._askers)
        if asker is None or getattr(params, "mode", "form") != "form":
            why = "no one can answer here" if asker is None else "only form questions are supported"
            log.info("MCP server %s asked the user a question, declined: %s", self.config.id, why)
            return ElicitResult(action="decline")
        schema = params.requested_schema
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, mode="json", exclude_none=True)
        action, content = await ask_user(asker, self.config.id, params.message, schema, progress)
        return ElicitResult(action=action, content=content)

    async def _sample(self, context: Any, params: Any) -> Any:
        """A model answer the server asks for, allowed on a card first (see sampling.py); the time
        the user and the model take does not count against the call's timeout."""
        from host.mcp.progress import clock_stopped
        from host.mcp.sampling import sample_for_server

        asker, progress, model = asker_in_flight(self._askers)
        with clock_stopped(progress):
            return await sample_for_server(asker, model, self.config.id, params)

    async def _refuse_sampling(self, context: Any, params: Any) -> Any:
        return self._refuse("sampling (sampling/createMessage)")

    async def _refuse_elicitation(self, context: Any, params: Any) -> Any:
        return self._refuse("elicitation (elicitation/create)")

    def _refuse(self, what: str) -> Any:
        from mcp.types import INVALID_REQUEST, ErrorData

        self.unsupported = [*self.unsupported[-3:], what]
        log.info("MCP server %s asked for %s, which Tabwarden does not support", self.config.id, what)
        return ErrorData(code=INVALID_REQUEST, message=f"Tabwarden does not support {what}")

    async def close(self) -> None:
        """End the session (and its owner task); never raises."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except asyncio.TimeoutError:
            task.cancel()
        except asyncio.CancelledError:  # our caller was cancelled (an interrupt): end the task, pass it on
            task.cancel()
            raise
        except Exception:
            log.debug("closing MCP server %s failed", self.config.id, exc_info=True)

    def _client(self) -> Any:
        if not self.live:
            raise self.error or McpFailure("mcp_unreachable", f"MCP server {self.config.id!r} is not connected")
        return self.client

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (JSON form), page by page, within the connect timeout."""
        client = self._client()
        tools: list[dict[str, Any]] = []

        async def fetch() -> None:
            cursor = None
            for _ in range(MAX_LIST_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools)
                cursor = page.next_cursor
                if cursor is None or len(tools) >= MAX_LISTED_TOOLS:
                    return

        await self._guarded(fetch(), max(self.config.connect_timeout_seconds, 10.0), "tools/list")
        return tools[:MAX_LISTED_TOOLS]

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: Callable[[str], None] | None = None,
                   ask: Any = None, model: Any = None) -> dict[str, Any]:
        """Call `tool` within the server's timeout, which progress from the server extends (up
        to PROGRESS_STRETCH times it); each progress report goes to `on_progress` as a line, and
        a question the server asks meanwhile (elicitation, when the server's settings allow it)
        to `ask` (see host/tools/asking.py), and a model answer it asks for (sampling, likewise)
        to `model` once the user allowed it through `ask`; the time the user takes to answer does
        not count against the timeout. The answer in JSON form. Cancelling the caller cancels the call on
        the server too. Raises McpFailure."""
        from host.mcp.progress import ProgressLine

        client = self._client()
        progress = ProgressLine(on_progress)
        asked = len(self.unsupported)
        unsupported = lambda: McpFailure(  # noqa: E731
            "unsupported", f"MCP server {self.config.id!r} asked for {self.unsupported[-1]}, which Tabwarden does "
                           f"not support; {tool!r} cannot be used here")
        self._askers.append((ask, progress, model))
        try:
            answer = await self._guarded(client.call_tool(tool, arguments, progress_callback=progress),
                                         self.config.timeout_seconds, f"tool {tool!r}", progress=progress)
        except McpFailure as failure:
            if len(self.unsupported) > asked and failure.code == "mcp_protocol_error":
                raise unsupported() from None
            raise
        finally:
            self._askers.remove((ask, progress, model))
        if answer.is_error and len(self.unsupported) > asked:  # the tool failed on our refusal
            raise unsupported()
        dumped = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        from host.mcp.linked_images import with_linked_images

        return await with_linked_images(dumped, lambda uri: self._guarded(self._client().read_resource(uri),
                                                                          LINKED_IMAGE_TIMEOUT_S, "resources/read"))

    async def _guarded(self, work: Any, timeout_s: float, what: str, progress: Any = None) -> Any:
        """Run `work` in its own task, raced against the session ending and the timeout (pushed
        back while `progress` reports, up to PROGRESS_STRETCH times the timeout); time spent on
        the server's questions counts against neither, up to QUESTIONS_ALLOWANCE_S."""
        loop = asyncio.get_running_loop()
        job = asyncio.ensure_future(work)
        ended = asyncio.ensure_future(self.closed.wait())
        started = loop.time()
        refused = self.refused_posts
        limit = started + timeout_s * (PROGRESS_STRETCH if progress is not None else 1)
        longest = limit + (QUESTIONS_ALLOWANCE_S if progress is not None else 0.0)
        done: set[Any] = set()
        try:
            while True:
                now = loop.time()
                waiting = {job, ended}
                if progress is not None and progress.asking:
                    if now >= longest:
                        break  # the questions took all the time they may
                    waiting.add(progress.answered())  # the clock runs again from the answer
                    wait = longest - now
                else:
                    heard = progress.last if progress is not None and progress.last is not None else started
                    paused = min(progress.paused, QUESTIONS_ALLOWANCE_S) if progress is not None else 0.0
                    deadline = min(max(started, heard) + timeout_s, limit + paused)
                    if now >= deadline:
                        break  # no answer, nor progress, within the timeout
                    wait = deadline - now
                done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                if job in done or ended in done:
                    break
        except BaseException:
            await _cancel(job)  # the caller was cancelled (an interrupted turn): so is the server's work
            raise
        finally:
            ended.cancel()
        if job in done:
            try:
                return job.result()
            except Exception as exc:
                failure = classify(exc, self.config.id, self.statuses)
                # Only a request refused for its session is known unprocessed (safe to send again);
                # a connection reset by a restarting server may have come after the work was done.
                if self.refused_posts > refused and failure.code == "mcp_protocol_error":
                    failure = McpFailure("mcp_session_expired", f"MCP server {self.config.id!r} no longer knows "
                                                                "this session")
                raise failure from None
        await _cancel(job)
        if ended in done:
            raise self.error or McpFailure("mcp_unreachable", f"MCP server {self.config.id!r} closed the connection "
                                                              f"during {what}")
        waited = loop.time() - started
        working = waited - (progress.paused if progress is not None else 0.0)  # not on questions
        raise McpFailure("mcp_timeout", f"MCP server {self.config.id!r} did not answer {what} within {waited:.3g} s"
                                        f"{' (its progress had stopped)' if working > timeout_s + 0.5 else ''}; "
                                        "the request was cancelled")


def asker_in_flight(askers: list[tuple[Any, Any, Any]]) -> tuple[Any, Any, Any]:
    """(ask, progress, model) of the call a server's question or model request belongs to, or
    Nones when that cannot be told. The request names no call of ours, so it is put to a
    thread only when every call in flight on the session is that thread's (the latest one's
    card then carries it); with calls of several threads, or one that cannot ask (the REPL's),
    it could be another's, and nobody is asked."""
    if not askers or any(ask is None for ask, _, _ in askers):
        return None, None, None
    if len({getattr(ask, "thread_id", None) for ask, _, _ in askers}) != 1:
        return None, None, None
    return askers[-1]


async def _mentions_session(response: Any) -> bool:
    """Whether a small error answer talks about the session ("No valid session ID provided").
    Read here (the SDK reads the same cached body later); a large or unreadable one is not."""
    try:
        if int(response.headers.get("content-length", "0") or 0) > 4096:
            return False
        body = await response.aread()
    except Exception:
        return False
    return b"session" in body[:4096].lower()


async def _cancel(job: asyncio.Future[Any]) -> None:
    if job.done():
        if not job.cancelled():
            job.exception()  # retrieved: no "never retrieved" warning
        return
    job.cancel()
    await asyncio.wait({job}, timeout=CANCEL_GRACE_S)
