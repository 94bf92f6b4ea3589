"""A deterministic pit-dialect agent served over HTTP on loopback, for tests."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def first_two(message: dict[str, Any]) -> dict[str, Any]:
    """Buy the first two rows listed since the last bell; answer the probe with nothing."""
    if message["type"] == "task":
        if message["kind"] == "probe":
            return {"type": "decision", "picks": [], "text": "no idea"}
        return {"type": "tool", "tool": "pit_list", "args": {"limit": 2}}
    return {"type": "decision", "picks": [r["row_key"] for r in message["result"]["rows"]]}


@contextlib.contextmanager
def serving_first_two() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(first_two(body["message"])).encode()
            self.send_response(200)
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
