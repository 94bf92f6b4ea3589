"""A demo model on loopback, for trying ``pit-harness points answer`` and ``points judge``
with no API key, no network and no model: it is not a model, and it is never the pinned
judge.

It serves OpenAI's chat-completions route on 127.0.0.1 with the standard library and
answers only requests that name it (``DEMO_MODEL``), so every answer set and judged set
made with it records that name as the model configured and the model returned, and its
judged sets read ``judge_pinned=False``. It plays two parts, both deterministic:

- **an answering model**: every question gets the same text, which says it is a demo and
  answers nothing (a judge should call it ``other_error``);
- **a judge**: a request holding our judge's prompt gets ``Class: <class>`` and a
  reason, in the format ``harness.points.judge.parse_verdict`` reads. The rule is
  string comparison, not judgement: the answer as fenced equals the Ground Truth
  (``completely_correct``), the answer is empty or is the demo's own (``other_error``),
  its numbers differ from the Ground Truth's (``numeric_factual_error``), anything else
  (``non_numeric_factual_error``). It never obeys an answer.

So its controls hold honestly (the positive control passes, every negative control
fails to pass, repeats never flip) and the gates call its judged sets ``usable``; what
they measure is this rule, which no one should rank.

Given a points folder (``--points``), it also serves two **demo readers**, answering
models of different quality for the site's demo and its tests: ``READERS`` names them.
They are not models either: each looks the Question up in the folder it was given and,
by a fixed rule on the point's id, answers with the Ground Truth itself, with every
number in it moved by one, with the Ground Truth contradicted, or with the demo's fixed
text. A reader's share of each is fixed per reader, so their distributions differ.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.points.judge import neutralised
from harness.points.markdown import Point

DEMO_MODEL = "demo-judge-not-a-model"
DEMO_ANSWER = (
    f"This is {DEMO_MODEL}, a demo that reads no question and knows nothing: "
    "it gives this same text to every point."
)
JUDGE_MARK = "<GroundTruth>"  # only our judge's prompt holds this tag
# reader -> the percentiles (of a point's fixed bucket, 0-99) below which it answers with
# the Ground Truth, then with its numbers moved, then contradicted; the rest: the demo text
READERS = {
    "demo-reader-careful-not-a-model": (70, 85, 93),
    "demo-reader-hasty-not-a-model": (35, 70, 85),
}
QUESTION = re.compile(r"<Question>\n(.*)\n</Question>", re.S)
NUMBER = re.compile(r"\d+(?:\.\d+)?")
FENCE = re.compile(r"\n(ANSWER-BOUNDARY-[0-9a-f]{24})\n(.*)\n\1\n", re.S)
TRUTH = re.compile(r"<GroundTruth>\n(.*)\n</GroundTruth>", re.S)


def judge_reply(prompt: str) -> str:
    """The demo judge's reply to one judge prompt: a class by string comparison, and why."""
    fenced, truth = FENCE.search(prompt), TRUTH.search(prompt)
    if fenced is None or truth is None:
        return "Class: other_error\n\nThe demo judge found no fenced answer in the prompt."
    answer, ground_truth = fenced.group(2), truth.group(1)
    if not answer.strip():
        return "Class: other_error\n\nThe answer is empty."
    if answer == neutralised(ground_truth):
        return "Class: completely_correct\n\nThe answer is the ground truth, word for word."
    if answer == DEMO_ANSWER:
        return "Class: other_error\n\nThe answer is the demo's fixed text: it answers nothing."
    if NUMBER.findall(answer) != NUMBER.findall(ground_truth):
        return "Class: numeric_factual_error\n\nIts numbers are not the ground truth's."
    return "Class: non_numeric_factual_error\n\nIt is not the ground truth's text."


def _moved(text: str) -> str:
    return NUMBER.sub(lambda m: str(int(float(m.group(0))) + 1), text)


def reader_reply(model: str, prompt: str, points: Mapping[str, Point]) -> str:
    """A demo reader's answer to an answer prompt, by its fixed rule (module docstring)."""
    found = QUESTION.search(prompt)
    point = points.get(found.group(1)) if found else None
    if point is None:
        return DEMO_ANSWER
    bucket = int(hashlib.sha256(f"{model}:{point.id}".encode()).hexdigest()[:8], 16) % 100
    right, moved, contradicted = READERS[model]
    if bucket < right:
        return point.ground_truth
    if bucket < moved and NUMBER.search(point.ground_truth):
        return _moved(point.ground_truth)
    if bucket < contradicted:
        return f"Not so. The opposite holds: {point.ground_truth}"
    return DEMO_ANSWER


def reply_to(
    request: dict[str, Any], points: Mapping[str, Point] | None = None
) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body) for one chat-completions request; ``points`` (by their
    Question) lets the demo readers answer."""
    model = request.get("model")
    served = [DEMO_MODEL, *READERS] if points is not None else [DEMO_MODEL]
    if model not in served:
        return 404, {
            "error": {
                "message": f"the demo serves only the models {served!r}, not {model!r}",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        }
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return 400, {"error": {"message": "messages must be a non-empty list", "code": None}}
    prompt = messages[-1].get("content")
    if not isinstance(prompt, str):
        return 400, {"error": {"message": "the last message's content must be text", "code": None}}
    if model in READERS and points is not None:
        if JUDGE_MARK in prompt:
            return 400, {"error": {"message": "a demo reader does not judge", "code": None}}
        content = reader_reply(str(model), prompt, points)
    else:
        content = judge_reply(prompt) if JUDGE_MARK in prompt else DEMO_ANSWER
    return 200, {
        "id": "demo",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
    }  # no usage: the demo spends no tokens and reports none


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet: the commands print what matters
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "code": None}})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            self._send(400, {"error": {"message": "the body is not JSON", "code": None}})
            return
        if not isinstance(request, dict):
            self._send(400, {"error": {"message": "the body is not a JSON object", "code": None}})
            return
        self._send(*reply_to(request, getattr(self.server, "points", None)))


def demo_server(port: int = 0, points: Sequence[Point] | None = None) -> ThreadingHTTPServer:
    """The demo model listening on 127.0.0.1 (``port`` 0: a free one); call
    ``serve_forever`` on it. Loopback only: it is for trying the commands on one machine.
    With ``points``, the demo readers answer them too."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    if points is not None:
        server.points = {p.question: p for p in points}  # type: ignore[attr-defined]
    return server


def base_url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


@contextmanager
def served(points: Sequence[Point] | None = None) -> Iterator[str]:
    """The demo model on a free loopback port, in a thread, for as long as the block
    runs; its base URL."""
    server = demo_server(0, points)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base_url(server)
    finally:
        server.shutdown()
        server.server_close()
