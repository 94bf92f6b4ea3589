"""A loopback HTTP server that answers every request with one canned answer and keeps
what it was sent: a site that is not the API, fails, refuses or redirects, so the real
client code of ``pit-harness submit`` meets each over real HTTP."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Canned:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        canned: Canned = self.server.canned  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        canned.seen.append(Seen(self.command, self.path, dict(self.headers), body))
        self.send_response(canned.status)
        for name, value in canned.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(canned.body)))
        self.end_headers()
        self.wfile.write(canned.body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def canned_site(status: int, body: bytes, **headers: str) -> Iterator[Canned]:
    canned = Canned(status, body, dict(headers))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.canned = canned  # type: ignore[attr-defined]
    canned.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield canned
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
