"""Agents served over HTTP on loopback, for tests and the agents benchmark: a real server
whose every POST is answered by a function, and a deterministic pit-dialect agent."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (path, the request's JSON body) -> (status, the reply, sent as JSON)
Answer = Callable[[str, dict[str, Any]], tuple[int, Any]]


def first_two(message: dict[str, Any]) -> dict[str, Any]:
    """Buy the first two rows listed since the last bell; answer the probe with nothing."""
    if message["type"] == "task":
        if message["kind"] == "probe":
            return {"type": "decision", "picks": [], "text": "no idea"}
        return {"type": "tool", "tool": "pit_list", "args": {"limit": 2}}
    return {"type": "decision", "picks": [r["row_key"] for r in message["result"]["rows"]]}


@contextlib.contextmanager
def serving(answer: Answer, *, keep_alive: bool = False) -> Iterator[str]:
    """A real HTTP server on loopback whose every POST is ``answer(path, body)``. Each
    request has a connection of its own, unless ``keep_alive``: then HTTP/1.1, one
    connection per cell, and the answer's headers and body go out at once (no Nagle)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
        disable_nagle_algorithm = keep_alive

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, reply = answer(self.path, body)
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def serving_first_two() -> contextlib.AbstractContextManager[str]:
    """``first_two``, served."""
    return serving(lambda path, body: (200, first_two(body["message"])))
