"""The demo's trading model, which is not a model: an OpenAI-compatible chat-completions
endpoint on loopback, over HTTPS with a certificate authority made for it, for the demo's
run of ``examples/agents/model_agent.py`` (a model-calling agent, through the run's
recording proxy). It answers by rule:

- a conversation with no tool answer yet: one call of ``pit_list`` (the newest rows);
- after the tool's answer: the first two row keys it listed, as ``{"picks": [...]}``;
- a question without the tools (the mask probe's): "unknown".

Each answer carries a usage block as a provider's does, its counts made by rule too
(a token per four characters of the request, a token per four characters of the answer
plus ten), so the run's measured usage, and its cost at a rate card, are something to
show. SYNTHETIC: its name says so, and nothing it does is a model's skill.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.isolation.egress import RunAuthority

DEMO_TRADER = "demo-trader-not-a-model"


def reply_to(request: dict[str, Any]) -> dict[str, Any]:
    """The chat completion the demo trader answers ``request`` with."""
    messages = request.get("messages") or []
    answered = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    message: dict[str, Any]
    if not request.get("tools"):
        message = {"role": "assistant", "content": "unknown"}
    elif not answered:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call-{len(messages)}",
                    "type": "function",
                    "function": {"name": "pit_list", "arguments": json.dumps({"limit": 5})},
                }
            ],
        }
    else:
        try:
            rows = json.loads(str(answered[-1].get("content") or "{}")).get("rows") or []
        except (ValueError, AttributeError):
            rows = []
        picks = [r["row_key"] for r in rows if isinstance(r, dict) and "row_key" in r][:2]
        message = {"role": "assistant", "content": json.dumps({"picks": picks})}
    asked = len(json.dumps(messages)) // 4
    said = len(json.dumps(message)) // 4 + 10
    return {
        "id": f"demo-{len(messages)}",
        "object": "chat.completion",
        "created": 0,
        "model": DEMO_TRADER,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": asked, "completion_tokens": said, "total_tokens": asked + said},
    }


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length))
        except ValueError:
            request = None
        if self.path.rstrip("/") != "/v1/chat/completions" or not isinstance(request, dict):
            status, body = 400, {"error": {"message": "not a chat completion", "code": None}}
        else:
            status, body = 200, reply_to(request)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@dataclass(frozen=True)
class Served:
    base_url: str  # https://127.0.0.1:PORT/v1
    endpoint: str  # https://127.0.0.1:PORT, for a run's model_endpoints
    ca_file: Path  # the authority its certificate is signed by, for model_ca_file


@contextmanager
def served() -> Iterator[Served]:
    """The demo trader on a free loopback port, over HTTPS, for as long as the block runs."""
    authority = RunAuthority()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    context = authority.server_context("127.0.0.1")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with tempfile.TemporaryDirectory(prefix="pit-demo-model-") as folder:
        ca_file = Path(folder) / "ca.pem"
        ca_file.write_bytes(authority.pem())
        port = server.server_address[1]
        try:
            yield Served(f"https://127.0.0.1:{port}/v1", f"https://127.0.0.1:{port}", ca_file)
        finally:
            server.shutdown()
            server.server_close()
            authority.close()
