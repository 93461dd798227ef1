"""`tabwarden host`: start-up checks, the stdio link, the handshake and orderly shutdown."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Awaitable, Callable

from host import __version__
from host.nativehost import exit_codes
from host.nativehost.session import BrowserSession, check_hello

log = logging.getLogger("tabwarden.host")


def run_host(argv: list[str]) -> int:
    """Entry point of the native host process; returns the exit code."""
    from host import logs

    log_path = logs.setup("host", stderr=False)
    from host.transport.caller import check_caller
    from install.registrations import allowed_extension_ids

    ext_id, reason = check_caller(argv, allowed_extension_ids())
    if ext_id is None:
        log.error("refusing to start: %s", reason)
        sys.stderr.write(f"tabwarden host: refusing to start: {reason} (log: {log_path})\n")
        return exit_codes.FORBIDDEN_CALLER
    from host.transport.stdio import claim_stdout

    frames_out = claim_stdout()
    log.info("host %s started for chrome-extension://%s/ (pid %d)", __version__, ext_id, os.getpid())
    try:
        return asyncio.run(HostProcess(ext_id).serve(sys.stdin.buffer, frames_out))
    except Exception:
        log.exception("host crashed")
        return exit_codes.INTERNAL


class HostProcess:
    """One host process serving one browser connection."""

    def __init__(self, extension_id: str):
        self.extension_id = extension_id
        self.session: BrowserSession | None = None
        self.endpoint = None
        self.control = None
        from host.nativehost.services import HostServices

        self.services = HostServices(self)
        self.exit_code = exit_codes.OK
        self._shutdown_hooks: list[Callable[[], Awaitable[None] | None]] = []
        self.ready = asyncio.Event()

    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None]) -> None:
        """Run `hook` during orderly shutdown (after the link closes, before exit)."""
        self._shutdown_hooks.append(hook)

    async def serve(self, stdin, stdout) -> int:
        from protocol import constants as C
        from protocol.framing import FrameEncoder, FrameSplitter, host_decoder
        from protocol.messages import Hello
        from host.transport.endpoint import Endpoint
        from host.transport.stdio import open_pipes

        reader, sink = await open_pipes(stdin, stdout)
        self.endpoint = endpoint = Endpoint(
            reader, sink,
            decoder=host_decoder(), encoder=FrameEncoder(C.MAX_HOST_FRAME),
            splitter=FrameSplitter(C.MAX_BROWSER_FRAME), name="browser", refuse=_refusal,
        )
        endpoint.on(Hello, self._on_hello)
        endpoint.on_other(self._on_event)
        endpoint.start()
        self._install_signal_handlers()
        await endpoint.closed.wait()
        if endpoint.close_reason == "corrupt_stream":
            self.exit_code = exit_codes.LINK_BROKEN
        await self._shutdown(self.control)
        return self.exit_code

    async def _start_control(self):
        from host.control.methods import control_server

        server = control_server(self)
        try:
            await server.start()
        except Exception:
            log.exception("control endpoint unavailable; continuing without it")
            return None
        return server

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, lambda s=sig: asyncio.ensure_future(self.endpoint.close(f"signal {s.name}")))
            except (NotImplementedError, RuntimeError):
                pass

    async def _on_hello(self, hello) -> None:
        from protocol.constants import PROTOCOL_NAME, PROTOCOL_VERSION
        from protocol.messages import Fatal, Welcome
        from protocol.schema import schema_hash

        problem = check_hello(hello)
        if problem is not None:
            log.error("handshake refused: %s", problem.message)
            self.endpoint.send(Fatal(error=problem, protocol=PROTOCOL_NAME, schema_hash=schema_hash()))
            self.exit_code = exit_codes.PROTOCOL_MISMATCH
            await self.endpoint.close("protocol mismatch")
            return
        previous = self.session
        self.session = BrowserSession(self.extension_id, hello.browser_session_id, hello.extension_version, hello.browser)
        self.endpoint.send(Welcome(
            protocol=PROTOCOL_NAME, protocol_version=PROTOCOL_VERSION, schema_hash=schema_hash(),
            host_version=__version__, host_pid=os.getpid(),
        ))
        if previous and previous.browser_session_id != hello.browser_session_id:
            log.info("browser session changed from %s to %s", previous.browser_session_id, hello.browser_session_id)
        self.services.browser_session_changed(hello.browser_session_id)
        log.info("handshake complete: extension %s, browser session %s", hello.extension_version, hello.browser_session_id)
        if self.control is None:
            # Started only now: nothing needs it before a browser is connected, and its
            # subsystems' imports would otherwise delay the first replies.
            self.control = await self._start_control()
        self.ready.set()

    async def _on_event(self, message) -> None:
        from protocol.errors import ErrorCode, ProtocolError

        if self.session is None:
            self.endpoint.report(ProtocolError(ErrorCode.NOT_READY, f"{type(message).__name__} before hello"))
            return
        await self.services.dispatch(message)

    async def _shutdown(self, control) -> None:
        log.info("shutting down: %s", self.endpoint.close_reason)
        if control is not None:
            await control.stop()
        for hook in reversed(self._shutdown_hooks):
            try:
                outcome = hook()
                if outcome is not None:
                    await outcome
            except Exception:
                log.exception("shutdown hook failed")
        await self.endpoint.close(self.endpoint.close_reason or "shutdown")
        await self.services.close()
        log.info("host exits with %d", self.exit_code)


def _refusal(message, info):
    """A page's op the host could not take is answered (imported here: the UI layer is lazy)."""
    from host.ui.link import refusal

    return refusal(message, info)
