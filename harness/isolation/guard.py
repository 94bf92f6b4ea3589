"""In-process network guard for agent evaluation runs.

While a `NetworkGuard` is installed, the Python entry points that open sockets, resolve
names or start TLS refuse, and so do the interpreter's audit events below them (a raw
`_socket`, a captured method, a reloaded module, a C function looked up with ctypes); every
refusal is recorded as an `EgressAttempt`. A subprocess, or a system call made without
the interpreter's knowledge, is out of its reach: the sandbox's empty network namespace is
what holds those. There is
no allowlist: a point-in-time evaluation is only sound if the agent cannot fetch data
from after its cut-off, and loopback can proxy anywhere.
"""

from __future__ import annotations

import errno
import functools
import socket
import ssl
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from harness.vocabulary import NETWORK_POLICIES

GUARD_NAME = "socket-monkeypatch"
GUARD_SCOPE = "in-process; a subprocess or a model provider's own weights are out of scope"

_STACK_DEPTH = 8
_TARGET_MAX = 200
# Frames of these modules are plumbing between the agent's code and the socket call, so
# the call site is the nearest frame outside them.
_TRANSPORT_MODULES = frozenset({"socket", "ssl", "http", "urllib", "asyncio", "ctypes"})
_INET = (socket.AF_INET, socket.AF_INET6)
_MISSING = object()

_install_lock = threading.Lock()
_current: NetworkGuard | None = None


@dataclass(frozen=True)
class EgressAttempt:
    call: str
    target: str
    site: str
    stack: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "call": self.call,
            "target": self.target,
            "site": self.site,
            "stack": list(self.stack),
        }


def _message(attempt: EgressAttempt) -> str:
    return f"{attempt.call}: network access is disabled during a pit-harness run"


class NetworkBlocked(OSError):
    def __init__(self, attempt: EgressAttempt) -> None:
        super().__init__(errno.EACCES, _message(attempt))
        self.attempt = attempt

    def __reduce__(self) -> tuple[type[NetworkBlocked], tuple[EgressAttempt]]:
        # OSError pickles as cls(errno, strerror), which this __init__ does not accept; a
        # forked worker inherits the guard and sends its exceptions back pickled.
        return type(self), (self.attempt,)


class NetworkAbort(BaseException):
    """Not an Exception, so agent code that catches Exception cannot swallow it."""

    def __init__(self, attempt: EgressAttempt) -> None:
        super().__init__(_message(attempt))
        self.attempt = attempt

    def __reduce__(self) -> tuple[type[NetworkAbort], tuple[EgressAttempt]]:
        return type(self), (self.attempt,)


def _text(value: object) -> str:
    text = value.decode("ascii", "backslashreplace") if isinstance(value, bytes) else str(value)
    return text[:_TARGET_MAX]


def _addr(address: object) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = _text(address[0]), address[1]
        if port is None:
            return host
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return "" if address is None else _text(address)


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _frame_label(frame: FrameType) -> str:
    return f"{frame.f_globals.get('__name__', '?')}:{frame.f_lineno} {frame.f_code.co_qualname}"


def _is_transport(module: object) -> bool:
    return isinstance(module, str) and module.partition(".")[0] in _TRANSPORT_MODULES


def _where() -> tuple[str, tuple[str, ...]]:
    """Return (site, stack) for the current call, skipping this module's own frames."""
    site = ""
    stack: list[str] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not (site and len(stack) >= _STACK_DEPTH):
        if frame.f_globals is not globals():
            label = _frame_label(frame)
            if len(stack) < _STACK_DEPTH:
                stack.append(label)
            if not site and not _is_transport(frame.f_globals.get("__name__")):
                site = label
        frame = frame.f_back
    return site or (stack[0] if stack else ""), tuple(reversed(stack))


def _check(call: str, target: Callable[[], str]) -> None:
    guard = _current
    if guard is not None:
        text = target()
        if text in guard.relay:
            return
        if (guard.relay or guard.observe) and (call == "socket.socket" or call.startswith("ssl.")):
            return  # making a socket or wrapping one in TLS is no egress; connect is checked
        guard._refuse(call, text)


_Target = Callable[[tuple[Any, ...], dict[str, Any]], str]


def _guarded(call: str, original: Any, target: _Target, socket_method: bool) -> Any:
    # Wrappers consult whichever guard is installed at call time, so a reference captured
    # during one run (`from socket import getaddrinfo`) neither bypasses a later guard nor
    # stays blocked once no guard is installed.
    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if getattr(_within, "call", False):
            return original(*args, **kwargs)
        if not socket_method or args[0].family != socket.AF_UNIX:
            _check(call, lambda: target(args, kwargs))
        # what this call does below (a look-up, a connect) is this call, recorded once
        # (an observing guard lets it go on; a refusing one never gets here)
        _within.call = True
        try:
            return original(*args, **kwargs)
        finally:
            _within.call = False

    return guarded


_within = threading.local()


_SocketBase = socket.socket


class _GuardedSocket(_SocketBase):
    __slots__ = ()

    def __init__(
        self,
        family: socket.AddressFamily | int = -1,
        type: socket.SocketKind | int = -1,
        proto: int = -1,
        fileno: int | None = None,
    ) -> None:
        if fileno is None and family in (-1, *_INET):  # -1 means AF_INET for a new socket
            _check("socket.socket", lambda: "")
        super().__init__(family, type, proto, fileno)
        # An adopted descriptor (accept, fromfd) only reveals its family after init.
        if (
            fileno is not None
            and self.family in _INET
            and _current is not None
            and not _current.relay
            and not _current.observe
        ):
            self.close()
            _check("socket.socket", lambda: "")


def _nth(index: int, name: str) -> _Target:
    return lambda args, kwargs: _addr(_arg(args, kwargs, index, name))


def _host_port(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return _addr((_arg(args, kwargs, 0, "host"), _arg(args, kwargs, 1, "port")))


def _sendto_address(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return _addr(args[-1]) if len(args) > 2 else ""  # sendto(data[, flags], address)


# (owner, attribute, recorded call name, target extractor); methods of _SocketBase only
# refuse for non-AF_UNIX sockets.
_PATCHES: tuple[tuple[object, str, str, _Target], ...] = (
    (socket, "create_connection", "socket.create_connection", _nth(0, "address")),
    (socket, "getaddrinfo", "socket.getaddrinfo", _host_port),
    (socket, "gethostbyname", "socket.gethostbyname", _nth(0, "hostname")),
    (socket, "gethostbyname_ex", "socket.gethostbyname_ex", _nth(0, "hostname")),
    (socket, "gethostbyaddr", "socket.gethostbyaddr", _nth(0, "ip_address")),
    (socket, "getnameinfo", "socket.getnameinfo", _nth(0, "sockaddr")),
    (_SocketBase, "connect", "socket.connect", _nth(1, "address")),
    (_SocketBase, "connect_ex", "socket.connect_ex", _nth(1, "address")),
    (_SocketBase, "sendto", "socket.sendto", _sendto_address),
    (ssl.SSLContext, "wrap_socket", "ssl.SSLContext.wrap_socket", _nth(5, "server_hostname")),
    (ssl.SSLContext, "wrap_bio", "ssl.SSLContext.wrap_bio", _nth(4, "server_hostname")),
    (ssl, "wrap_socket", "ssl.wrap_socket", lambda args, kwargs: ""),
)


def _inet(sock: object) -> bool:
    return getattr(sock, "family", None) in _INET


# Below the patched entry points: the interpreter's own audit events (PEP 578), raised by
# the C socket module and by ctypes whatever Python reference reached them (a raw
# `_socket`, `socket.SocketType`, a method captured before the guard, a reloaded module,
# a C function looked up by name). Event -> the target, or None when it is not egress.
_NETWORK_SYMBOLS = frozenset(
    {
        "connect", "sendto", "sendmsg", "sendmmsg", "getaddrinfo", "getaddrinfo_a",
        "gethostbyname", "gethostbyname2", "gethostbyname_r", "gethostbyname2_r",
        "gethostbyaddr", "gethostbyaddr_r", "res_query", "res_search", "res_nquery",
    }
)  # fmt: skip
_AUDITED: dict[str, Callable[[tuple[Any, ...]], str | None]] = {
    "socket.connect": lambda a: _addr(a[1]) if _inet(a[0]) else None,
    "socket.sendto": lambda a: _addr(a[1]) if _inet(a[0]) else None,
    "socket.sendmsg": lambda a: _addr(a[1]) if _inet(a[0]) and a[1] is not None else None,
    "socket.getaddrinfo": lambda a: _addr((a[0], a[1])),
    "socket.gethostbyname": lambda a: _addr(a[0]),
    "socket.gethostbyaddr": lambda a: _addr(a[0]),
    "socket.getnameinfo": lambda a: _addr(a[0]),
    "ctypes.dlsym": lambda a: a[1] if a[1] in _NETWORK_SYMBOLS else None,
}
_audit_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    describe = _AUDITED.get(event)
    guard = _current
    if describe is None or guard is None or getattr(_within, "call", False):
        return
    target = describe(args)
    if target is not None and str(target) not in guard.relay:
        guard._refuse(event, str(target))


class NetworkGuard:
    def __init__(
        self, policy: str = "fail_closed", *, relay_port: int | None = None, observe: bool = False
    ) -> None:
        """``relay_port``: in a sandbox cell of a run that declared model endpoints, the
        loopback port of the cell's relay to the run's recording proxy, the one address
        the agent may connect to (the proxy decides where it goes). Not for in-process
        runs, which have no proxy.

        ``observe``: in a sandbox cell whose wire the harness holds, record each attempt
        with its call site and let it go on to the wire, where the harness counts and
        refuses it outside the agent's reach (the guard's record lives in the agent's own
        memory, so it is the source of call sites, never the count)."""
        if policy not in NETWORK_POLICIES:
            raise ValueError(
                f"unknown network guard policy {policy!r}; expected one of {NETWORK_POLICIES}"
            )
        self.policy = policy
        self.relay: frozenset[str] = (
            frozenset() if relay_port is None else frozenset({f"127.0.0.1:{relay_port}"})
        )
        self.observe = observe
        self.attempts: list[EgressAttempt] = []
        self._lock = threading.Lock()
        self._saved: list[tuple[object, str, object]] = []

    @property
    def active(self) -> bool:
        return _current is self

    def install(self) -> None:
        global _current
        with _install_lock:
            if _current is not None:
                raise RuntimeError("a network guard is already installed in this process")
            _current = self
            global _audit_hooked
            if not _audit_hooked:
                # An audit hook stays for the life of the process; it acts only while a
                # guard is installed and costs a dictionary look-up per event otherwise.
                sys.addaudithook(_audit)
                _audit_hooked = True
            try:
                for owner, name, call, target in _PATCHES:
                    if hasattr(owner, name):  # ssl.wrap_socket is gone from 3.12 on
                        original = getattr(owner, name)
                        wrapper = _guarded(call, original, target, owner is _SocketBase)
                        self._patch(owner, name, wrapper)
                self._patch(socket, "socket", _GuardedSocket)
            except BaseException:
                self._restore()
                raise

    def remove(self) -> None:
        with _install_lock:
            if _current is self:
                self._restore()

    def __enter__(self) -> NetworkGuard:
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.remove()

    def _patch(self, owner: object, name: str, value: object) -> None:
        # Save the raw __dict__ entry, not getattr's view, so the exact object goes back,
        # and an inherited attribute (socket.connect lives on _socket.socket) is deleted.
        self._saved.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, value)

    def _restore(self) -> None:
        global _current
        for owner, name, original in reversed(self._saved):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._saved.clear()
        _current = None

    def _refuse(self, call: str, target: str) -> None:
        attempt = EgressAttempt(call, target, *_where())
        with self._lock:
            self.attempts.append(attempt)
        if self.observe:
            return  # the wire refuses it, and the harness counts it there
        if self.policy == "abort":
            raise NetworkAbort(attempt)
        raise NetworkBlocked(attempt)
