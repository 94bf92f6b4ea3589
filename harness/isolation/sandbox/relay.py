"""Inside a cell of a run with model endpoints: a loopback TCP port that leads to the
run's model proxy through the Unix socket bound into the sandbox (``harness.isolation.egress``).

It is the harness's code in the agent's process, built on the raw ``_socket`` type so the
cell's own guard (which lets the agent reach this port and nothing else) does not stand
in its way. Bytes pass through unchanged: the proxy decides and records.
"""

from __future__ import annotations

import _socket
import contextlib
import socket
import threading


def start_relay(port: int, unix_path: str) -> None:
    listener = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, unix_path), daemon=True).start()


def _serve(listener: _socket.socket, unix_path: str) -> None:
    while True:
        fd, _ = listener._accept()  # type: ignore[attr-defined]
        client = _socket.socket(fileno=fd)
        upstream = _socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(unix_path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: _socket.socket, sink: _socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(1 << 16):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
