import errno
import os
import pickle
import socket
import ssl
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.isolation.guard import (
    EgressAttempt,
    NetworkAbort,
    NetworkBlocked,
    NetworkGuard,
)

MISSING = object()
PATCHED = [
    (socket, "socket"),
    (socket, "create_connection"),
    (socket, "getaddrinfo"),
    (socket, "gethostbyname"),
    (socket, "gethostbyname_ex"),
    (socket, "gethostbyaddr"),
    (socket, "getnameinfo"),
    (socket.socket, "connect"),
    (socket.socket, "connect_ex"),
    (socket.socket, "sendto"),
    (ssl.SSLContext, "wrap_socket"),
    (ssl.SSLContext, "wrap_bio"),
    (ssl, "wrap_socket"),
]


def snapshot() -> list[object]:
    return [vars(owner).get(name, MISSING) for owner, name in PATCHED]


def assert_restored(before: list[object]) -> None:
    for (owner, name), original, now in zip(PATCHED, before, snapshot(), strict=True):
        assert now is original, f"{owner}.{name} was not restored"


def assert_single_attempt(guard: NetworkGuard, call: str, target: str) -> EgressAttempt:
    (attempt,) = guard.attempts
    assert (attempt.call, attempt.target) == (call, target)
    caller = sys._getframe(1).f_code.co_name
    module, _, rest = attempt.site.partition(":")
    assert module == __name__
    assert rest.endswith(f" {caller}")
    return attempt


@pytest.fixture
def inet_socket() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    yield sock
    sock.close()


def test_urlopen_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    with NetworkGuard() as guard, pytest.raises(urllib.error.URLError) as info:
        urllib.request.urlopen("http://example.com", timeout=5)
    assert isinstance(info.value.reason, NetworkBlocked)
    attempt = assert_single_attempt(guard, "socket.create_connection", "example.com:80")
    # urllib and http.client frames are the innermost ones, but never the site.
    assert attempt.stack[-1].startswith("http.client:")
    assert len(attempt.stack) == 8


def test_create_connection_is_refused() -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        socket.create_connection(("example.com", 443), timeout=5)
    attempt = assert_single_attempt(guard, "socket.create_connection", "example.com:443")
    assert attempt.stack[-1] == attempt.site


def test_loopback_is_refused_too() -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        socket.create_connection(("127.0.0.1", 9), timeout=5)
    assert_single_attempt(guard, "socket.create_connection", "127.0.0.1:9")


def test_getaddrinfo_is_refused() -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)
    assert_single_attempt(guard, "socket.getaddrinfo", "example.com:443")


def test_gethostbyname_is_refused() -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        socket.gethostbyname("example.com")
    assert_single_attempt(guard, "socket.gethostbyname", "example.com")


def test_ssl_wrap_socket_is_refused(inet_socket: socket.socket) -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        ssl.wrap_socket(inet_socket)
    assert_single_attempt(guard, "ssl.wrap_socket", "")


def test_context_wrap_socket_is_refused(inet_socket: socket.socket) -> None:
    context = ssl.create_default_context()
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        context.wrap_socket(inet_socket, server_hostname="example.com")
    assert_single_attempt(guard, "ssl.SSLContext.wrap_socket", "example.com")


def test_context_wrap_bio_is_refused() -> None:
    context = ssl.create_default_context()
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
    assert_single_attempt(guard, "ssl.SSLContext.wrap_bio", "example.com")


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6, None])
def test_inet_socket_creation_is_refused(family: socket.AddressFamily | None) -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        socket.socket() if family is None else socket.socket(family, socket.SOCK_STREAM)
    assert_single_attempt(guard, "socket.socket", "")


def test_connect_on_socket_created_before_install_is_refused(inet_socket: socket.socket) -> None:
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        inet_socket.connect(("127.0.0.1", 9))
    assert_single_attempt(guard, "socket.connect", "127.0.0.1:9")


def test_connect_ex_and_sendto_are_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, NetworkGuard() as guard:
        with pytest.raises(NetworkBlocked):
            udp.connect_ex(("127.0.0.1", 9))
        with pytest.raises(NetworkBlocked):
            udp.sendto(b"x", ("::1", 9))
    assert [(a.call, a.target) for a in guard.attempts] == [
        ("socket.connect_ex", "127.0.0.1:9"),
        ("socket.sendto", "[::1]:9"),
    ]


def test_unix_socketpair_works_while_active() -> None:
    with NetworkGuard() as guard:
        left, right = socket.socketpair()
        with left, right:
            left.sendall(b"ping")
            assert right.recv(4) == b"ping"
    assert guard.attempts == []


def test_unix_listener_accepts_while_active(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    with NetworkGuard() as guard, socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen(1)
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            conn, _ = server.accept()
            with conn:
                client.sendall(b"pong")
                assert conn.recv(4) == b"pong"
    assert guard.attempts == []


def test_exit_restores_every_original_object() -> None:
    before = snapshot()
    with NetworkGuard() as guard:
        assert guard.active
        assert all(now is not original for now, original in zip(snapshot(), before, strict=True))
    assert not guard.active
    assert_restored(before)
    assert "connect" not in vars(socket.socket)


def test_body_exception_propagates_and_originals_are_restored() -> None:
    before = snapshot()
    with pytest.raises(KeyError, match="boom"), NetworkGuard():
        raise KeyError("boom")
    assert_restored(before)


def test_remove_is_idempotent() -> None:
    before = snapshot()
    guard = NetworkGuard()
    guard.install()
    guard.remove()
    guard.remove()
    assert_restored(before)


def test_abort_is_not_caught_by_except_exception() -> None:
    swallowed: list[Exception] = []
    with NetworkGuard("abort") as guard, pytest.raises(NetworkAbort) as info:
        try:
            socket.getaddrinfo("example.com", 443)
        except Exception as exc:
            swallowed.append(exc)
    assert swallowed == []
    assert not isinstance(info.value, Exception)
    assert info.value.attempt is guard.attempts[0]


def test_abort_passes_through_urllib() -> None:
    with NetworkGuard("abort") as guard, pytest.raises(NetworkAbort):
        urllib.request.urlopen("http://example.com", timeout=5)
    assert len(guard.attempts) == 1


def test_blocked_is_an_eacces_oserror_naming_the_call() -> None:
    with NetworkGuard(), pytest.raises(OSError) as info:
        socket.gethostbyaddr("127.0.0.1")
    assert isinstance(info.value, NetworkBlocked)
    assert info.value.errno == errno.EACCES
    assert "socket.gethostbyaddr" in str(info.value)
    assert "network access is disabled during a pit-harness run" in str(info.value)


def test_exceptions_survive_pickling() -> None:
    attempt = EgressAttempt("socket.connect", "h:1", "m:1 f", ("m:1 f",))
    for exc in (NetworkBlocked(attempt), NetworkAbort(attempt)):
        copy = pickle.loads(pickle.dumps(exc))
        assert type(copy) is type(exc)
        assert copy.attempt == attempt
        assert str(copy) == str(exc)


def test_second_install_raises() -> None:
    with NetworkGuard() as first:
        with pytest.raises(RuntimeError):
            NetworkGuard().install()
        with pytest.raises(RuntimeError):
            first.install()
        assert first.active
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname("example.com")
    assert len(first.attempts) == 1


def test_unknown_policy_is_rejected() -> None:
    with pytest.raises(ValueError):
        NetworkGuard("allow")


def test_reference_captured_during_a_run_follows_the_current_guard() -> None:
    with NetworkGuard():
        stale = socket.getaddrinfo
    numeric = stale("127.0.0.1", 9, flags=socket.AI_NUMERICHOST)
    assert numeric[0][4][:2] == ("127.0.0.1", 9)
    with NetworkGuard() as later, pytest.raises(NetworkBlocked):
        stale("example.com", 443)
    assert [a.call for a in later.attempts] == ["socket.getaddrinfo"]


def test_attempts_are_deterministic_and_path_free() -> None:
    def run() -> list[EgressAttempt]:
        with NetworkGuard() as guard:
            for host in ("a.example", "b.example"):
                with pytest.raises(NetworkBlocked):
                    socket.create_connection((host, 443))
        return guard.attempts

    first, second = run(), run()
    assert [a.to_json() for a in first] == [a.to_json() for a in second]
    assert [a.target for a in first] == ["a.example:443", "b.example:443"]
    assert all("/" not in line and "\\" not in line for a in first for line in a.stack)


def test_recording_is_thread_safe() -> None:
    def worker() -> None:
        for _ in range(50):
            with pytest.raises(NetworkBlocked):
                socket.gethostbyname("example.com")

    with NetworkGuard() as guard:
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(guard.attempts) == 400
    assert all(
        attempt.site.endswith(" test_recording_is_thread_safe.<locals>.worker")
        for attempt in guard.attempts
    )


# -- below the patched entry points: the interpreter's audit events ----------------------


def test_a_raw_socket_connect_is_refused() -> None:
    import _socket

    raw = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
            raw.connect(("127.0.0.1", 9))
    finally:
        raw.close()
    assert_single_attempt(guard, "socket.connect", "127.0.0.1:9")


def test_a_connect_captured_before_the_guard_is_refused() -> None:
    captured = socket.socket.connect
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        NetworkGuard() as guard,
        pytest.raises(NetworkBlocked),
    ):
        captured(sock, ("127.0.0.1", 9))
    # the patched method refuses first; the C-level event is not recorded again
    assert_single_attempt(guard, "socket.connect", "127.0.0.1:9")


def test_socket_type_sendto_and_raw_dns_are_refused() -> None:
    import _socket

    sock = socket.SocketType(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with NetworkGuard() as guard:
            with pytest.raises(NetworkBlocked):
                sock.sendto(b"x", ("127.0.0.1", 9))
            with pytest.raises(NetworkBlocked):
                _socket.getaddrinfo("example.com", 80)
    finally:
        sock.close()
    assert [(a.call, a.target) for a in guard.attempts] == [
        ("socket.sendto", "127.0.0.1:9"),
        ("socket.getaddrinfo", "example.com:80"),
    ]


def test_a_network_function_looked_up_with_ctypes_is_refused() -> None:
    import ctypes

    libc = ctypes.CDLL(None)
    with NetworkGuard() as guard, pytest.raises(NetworkBlocked):
        libc.getaddrinfo  # noqa: B018 - the look-up itself is the attempt
    assert_single_attempt(guard, "ctypes.dlsym", "getaddrinfo")
    libc.strlen  # noqa: B018 - other functions are not the network's
    assert ctypes.CDLL(None).getaddrinfo is not None  # and without a guard, nothing is refused


def test_audit_events_pass_without_a_guard_and_for_unix_sockets() -> None:
    import _socket

    a, b = _socket.socketpair()
    try:
        with NetworkGuard() as guard:
            a.sendall(b"x")
            assert b.recv(1) == b"x"
        assert guard.attempts == []
    finally:
        a.close()
        b.close()
    raw = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(OSError) as info:
            raw.connect(("127.0.0.1", 9))  # no guard: the kernel answers
        assert not isinstance(info.value, NetworkBlocked)
    finally:
        raw.close()
