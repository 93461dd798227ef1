"""The control endpoint on Windows: a named pipe whose DACL admits only the current user, that
rejects remote clients, and whose connecting process's user SID is checked on every connection.

UNTESTED: this project's CI runs on Linux only, so nothing here has run yet. It stays behind
`transport.listen`/`transport.connect` and is never imported elsewhere. It relies on asyncio's
ProactorEventLoop (the default loop on Windows) for overlapped pipe I/O, including two of its
internal helpers (`_proactor.accept_pipe`, `_make_duplex_pipe_transport`) that asyncio's own
pipe server uses: the public `start_serving_pipe` cannot set a security descriptor.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
from ctypes import wintypes

from host.control.channel import Accept, Peer
from host.transport.endpoint import FrameSink, StreamSink

log = logging.getLogger("tabwarden.control")

PIPE_ACCESS_DUPLEX = 0x00000003
FILE_FLAG_OVERLAPPED = 0x40000000
FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000  # fail if someone already squats on the name
PIPE_REJECT_REMOTE_CLIENTS = 0x00000008
PIPE_UNLIMITED_INSTANCES = 255
BUFFER_SIZE = 65536
SDDL_REVISION_1 = 1
TOKEN_QUERY = 0x0008
TOKEN_USER_CLASS = 1
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
INVALID_HANDLE_VALUE = ctypes.c_void_p(-1).value


class _SecurityAttributes(ctypes.Structure):
    _fields_ = [("nLength", wintypes.DWORD), ("lpSecurityDescriptor", wintypes.LPVOID),
                ("bInheritHandle", wintypes.BOOL)]


def _dlls():
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateNamedPipeW.restype = wintypes.HANDLE
    kernel32.CreateNamedPipeW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD,
                                          wintypes.DWORD, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p]
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
    kernel32.GetNamedPipeClientProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]
    kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
    kernel32.LocalFree.argtypes = [ctypes.c_void_p]
    advapi32.OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
    advapi32.GetTokenInformation.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD,
                                             ctypes.POINTER(wintypes.DWORD)]
    advapi32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
    advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
        wintypes.LPCWSTR, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    return kernel32, advapi32


def _check(ok: object, what: str) -> None:
    if not ok:
        raise ctypes.WinError(ctypes.get_last_error(), what)  # type: ignore[attr-defined]


def _token_sid(advapi32, kernel32, token: wintypes.HANDLE) -> str:
    size = wintypes.DWORD(0)
    advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    _check(advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, buffer, size, ctypes.byref(size)),
           "GetTokenInformation")
    sid = ctypes.cast(buffer, ctypes.POINTER(ctypes.c_void_p))[0]  # TOKEN_USER.User.Sid
    text = wintypes.LPWSTR()
    _check(advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)), "ConvertSidToStringSidW")
    try:
        return str(text.value)
    finally:
        kernel32.LocalFree(text)


def _process_sid(process: wintypes.HANDLE) -> str:
    kernel32, advapi32 = _dlls()
    token = wintypes.HANDLE()
    _check(advapi32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)), "OpenProcessToken")
    try:
        return _token_sid(advapi32, kernel32, token)
    finally:
        kernel32.CloseHandle(token)


def current_user_sid() -> str:
    """The SID of the user this process runs as (S-1-5-21-...)."""
    kernel32, _ = _dlls()
    return _process_sid(kernel32.GetCurrentProcess())


def client_sid(pipe_handle: int) -> str | None:
    """The user SID of the process on the other end of a connected pipe, or None."""
    kernel32, _ = _dlls()
    pid = wintypes.ULONG()
    if not kernel32.GetNamedPipeClientProcessId(pipe_handle, ctypes.byref(pid)):
        return None
    process = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid.value)
    if not process:
        return None
    try:
        return _process_sid(process)
    except OSError:
        return None
    finally:
        kernel32.CloseHandle(process)


class _UserOnlyDescriptor:
    """A security descriptor whose protected DACL grants full access to one SID and nobody else."""

    def __init__(self, sid: str):
        _, advapi32 = _dlls()
        self._descriptor = ctypes.c_void_p()
        _check(advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(
            f"D:P(A;;GA;;;{sid})", SDDL_REVISION_1, ctypes.byref(self._descriptor), None), "security descriptor")
        self.attributes = _SecurityAttributes(ctypes.sizeof(_SecurityAttributes), self._descriptor, False)

    def free(self) -> None:
        if self._descriptor:
            kernel32, _ = _dlls()
            kernel32.LocalFree(self._descriptor)
            self._descriptor = ctypes.c_void_p()


def _create_instance(address: str, descriptor: _UserOnlyDescriptor, first: bool) -> int:
    kernel32, _ = _dlls()
    open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (FILE_FLAG_FIRST_PIPE_INSTANCE if first else 0)
    handle = kernel32.CreateNamedPipeW(address, open_mode, PIPE_REJECT_REMOTE_CLIENTS, PIPE_UNLIMITED_INSTANCES,
                                       BUFFER_SIZE, BUFFER_SIZE, 0, ctypes.byref(descriptor.attributes))
    if handle in (None, 0, INVALID_HANDLE_VALUE):
        raise ctypes.WinError(ctypes.get_last_error(), f"CreateNamedPipe {address}")  # type: ignore[attr-defined]
    return int(handle)


def _require_proactor(loop: asyncio.AbstractEventLoop) -> None:
    if not isinstance(loop, getattr(asyncio, "ProactorEventLoop", ())):
        raise RuntimeError("the Windows control pipe needs asyncio's ProactorEventLoop (the default on Windows)")


class PipeListener:
    """Accepts one pipe instance at a time, making a fresh instance for the next client."""

    def __init__(self, address: str, accept: Accept):
        self.address = address
        self._accept = accept
        self._own_sid = current_user_sid()
        self._descriptor = _UserOnlyDescriptor(self._own_sid)
        self._task: asyncio.Task[None] | None = None
        self._clients: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        _require_proactor(loop)
        # The first instance is created now so a squatter is detected before the address is announced.
        first = _create_instance(self.address, self._descriptor, first=True)
        self._task = loop.create_task(self._serve(first))

    async def _serve(self, handle: int) -> None:
        from asyncio.windows_utils import PipeHandle

        loop = asyncio.get_running_loop()
        while True:
            pipe = PipeHandle(handle)
            try:
                await loop._proactor.accept_pipe(pipe)  # type: ignore[attr-defined]
            except asyncio.CancelledError:
                pipe.close()
                raise
            except OSError as exc:
                log.warning("control pipe accept failed: %s", exc)
                pipe.close()
            else:
                task = loop.create_task(self._serve_client(pipe))
                self._clients.add(task)
                task.add_done_callback(self._clients.discard)
            handle = _create_instance(self.address, self._descriptor, first=False)

    async def _serve_client(self, pipe) -> None:
        loop = asyncio.get_running_loop()
        sid = client_sid(pipe.handle)
        peer = Peer(None, "unknown") if sid is None else Peer(sid == self._own_sid, sid)
        reader = asyncio.StreamReader()
        protocol = asyncio.StreamReaderProtocol(reader)
        transport = loop._make_duplex_pipe_transport(pipe, protocol, extra={"addr": self.address})  # type: ignore[attr-defined]
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        await self._accept(reader, StreamSink(writer), peer)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._descriptor.free()


async def listen_pipe(address: str, accept: Accept) -> PipeListener:
    """Serve the control pipe at `address` (\\\\.\\pipe\\...) for this user only."""
    listener = PipeListener(address, accept)
    listener.start()
    return listener


async def connect_pipe(address: str, timeout: float) -> tuple[asyncio.StreamReader, FrameSink]:
    """Connect to a control pipe."""
    loop = asyncio.get_running_loop()
    _require_proactor(loop)
    reader = asyncio.StreamReader()
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await asyncio.wait_for(
        loop.create_pipe_connection(lambda: protocol, address), timeout)  # type: ignore[attr-defined]
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, StreamSink(writer)
