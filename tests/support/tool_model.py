"""A model provider on loopback that reads filings by tool calls: a chat-completions server
over HTTPS (its own self-signed certificate) speaking the OpenAI API with ``tools``, so the
real ``openai`` client and the tool-loop adapter run against it.

Its play is fixed by what each request holds, never by a clock or a counter, so the same
conversation always gets the same answer:

- a trade session's first turn asks for ``pit_coverage`` and ``pit_list`` (two calls in
  one turn); the next reads the first row listed with ``pit_read``; the last answers
  ``{"picks": [...]}`` with the first two row keys listed (none when nothing is listed);
- the mask probe's question is answered in words that name the date the question shows.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.support.model_server import serving_https

MODEL_RETURNED = "loopback-tools-2026-01-01"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _called(messages: list[dict[str, Any]]) -> list[str]:
    """The tools the conversation has asked for so far, in order."""
    return [
        call["function"]["name"]
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    ]


def _listed(messages: list[dict[str, Any]]) -> list[str]:
    """The row keys the conversation's ``pit_list`` answer listed."""
    for m in messages:
        if m.get("role") != "tool":
            continue
        answer = json.loads(m["content"])
        if "rows" in answer:
            return [row["row_key"] for row in answer["rows"]]
    return []


def _call(turn: int, n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{turn}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant's message for one request (see the module's docstring)."""
    messages: list[dict[str, Any]] = body["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    turn = len(messages)
    if question.startswith("Mask probe."):
        shown = _DATE.findall(question)
        return {
            "role": "assistant",
            "content": f"The row shows {shown[0] if shown else 'no date'}; "
            "I cannot tell the real filing date or the issuer.",
        }
    called = _called(messages)
    if not called:
        calls = [_call(turn, 0, "pit_coverage", {}), _call(turn, 1, "pit_list", {"limit": 20})]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    listed = _listed(messages)
    if "pit_read" not in called and listed:
        calls = [_call(turn, 0, "pit_read", {"row_key": listed[0]})]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    return {"role": "assistant", "content": json.dumps({"picks": listed[:2]})}


class ToolModelHandler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        self.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        message = reply(body)
        answer = {
            "id": "chatcmpl-" + hashlib.sha256(raw).hexdigest()[:24],
            "object": "chat.completion",
            "created": 1700000000,
            "model": MODEL_RETURNED,
            "system_fingerprint": "fp_loopback",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": 9,
                      "total_tokens": len(raw) // 4 + 9},
        }  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving_tool_model(folder: Path) -> Iterator[tuple[int, Path, list[dict[str, Any]]]]:
    """The server on a loopback port: (port, its certificate, the requests it received)."""
    with serving_https(ToolModelHandler, folder) as served:
        yield served
