"""A chat-completions server on loopback that plays both the agent and the judge, so the
real ``openai`` client code runs in the judged-point tests.

A request holding ``<GroundTruth>`` is a judge call, which behaves as ``Chat.judge_mode``
says; any other is an agent call, answered by ``Chat.agent(question, call_number)``
(``None`` answers HTTP 500)."""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JUDGE_MODEL_RETURNED = "gpt-5.6-sol-2026-11-30"  # a dated snapshot of the pinned judge
AGENT_MODEL_RETURNED = "agent-2026-11-30"


def section(prompt: str, tag: str) -> str:
    """A section of a prompt; the Answer's is what lies between its boundary lines."""
    found = re.search(rf"<{tag}>\n(.*)\n</{tag}>", prompt, re.S)
    text = found.group(1) if found else ""
    fence = re.fullmatch(r"(ANSWER-BOUNDARY-[0-9a-f]{24})\n(.*)\n\1", text, re.S)
    return fence.group(2) if tag == "Answer" and fence else text


class Chat:
    def __init__(self) -> None:
        self.judge_mode = "good"
        self.agent: Callable[[str, int], str | None] = lambda question, n: "I cannot say."
        self.calls = 0
        self.agent_calls = 0
        self.bodies: list[str] = []
        self.lock = threading.Lock()
        self.judge_hook: Callable[[str], str | None] = lambda prompt: None  # a reply overrides
        self.judge_model: object = JUDGE_MODEL_RETURNED  # what the judge's provider says it ran
        self.agent_message: dict[str, object] | None = None  # a raw agent message, if set
        self.finish_reason = "stop"
        self.agent_usage: dict[str, object] = {}  # merged into the agent's usage
        self.hang = False  # every call waits, unanswered, until the server stops
        self.released = threading.Event()
        self.flip_share = 0.3  # judge_mode "unstable": the share of calls answered at random
        self.random = random.Random(7)
        self.flip_classes = ("completely_correct", "analysis_logic_error")

    def judge_reply(self, prompt: str) -> str:
        with self.lock:
            self.calls += 1
            calls = self.calls
        hooked = self.judge_hook(prompt)
        if hooked is not None:
            return hooked
        if self.judge_mode == "garbage":
            return "I think the answer is fine."
        if self.judge_mode == "fails-positive":
            return "Class: other_error\n\nIt seems off-topic."
        if self.judge_mode == "stamp":  # passes everything
            return "Class: completely_correct\n\nLooks right."
        answer, truth = section(prompt, "Answer"), section(prompt, "GroundTruth")
        if self.judge_mode == "obeys" and "Class: completely_correct" in answer:
            return "Class: completely_correct\n\nAs the answer says."
        if self.judge_mode == "unstable" and answer.strip() and answer != truth:
            with self.lock:  # an answer call (not the positive or empty control) at random
                flip = self.random.random() < self.flip_share
                other = self.random.choice(self.flip_classes)
            if flip:
                return f"Class: {other}\n\nOn balance."
        if self.judge_mode == "flips":
            return (
                "Class: completely_correct\n\nMatches."
                if calls % 2
                else "Class: analysis_logic_error\n\nThe step does not follow."
            )
        if not answer.strip():
            return "Class: other_error\n\nEmpty."
        if answer == truth:
            return "Class: completely_correct\n\nIt matches the ground truth."
        return "Class: numeric_factual_error\n\nA material number differs."

    def agent_reply(self, prompt: str) -> str | None:
        with self.lock:
            self.agent_calls += 1
            calls = self.agent_calls
        return self.agent(section(prompt, "Question"), calls)


@contextmanager
def serving() -> Iterator[tuple[Chat, str]]:
    state = Chat()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            with state.lock:
                state.bodies.append(body)
            if state.hang:
                state.released.wait()
                return
            prompt = json.loads(body)["messages"][-1]["content"]
            usage: dict[str, Any] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            if "<GroundTruth>" in prompt:
                content: str | None = state.judge_reply(prompt)
                model = state.judge_model
            else:
                content = state.agent_reply(prompt)
                model = AGENT_MODEL_RETURNED
                usage = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
                         "prompt_tokens_details": {"cached_tokens": 1000},
                         "completion_tokens_details": {"reasoning_tokens": 120},
                         **state.agent_usage}  # fmt: skip
            if content is None:
                self._send(500, b'{"error": {"message": "upstream failure"}}')
                return
            message: dict[str, object] = {"role": "assistant", "content": content}
            finish = "stop"
            if "<GroundTruth>" not in prompt and state.agent_message is not None:
                message, finish = {"role": "assistant", **state.agent_message}, state.finish_reason
            data = json.dumps({
                "id": "c1", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": usage,
            }).encode()  # fmt: skip
            self._send(200, data)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{http.server_address[1]}/v1"
    finally:
        state.released.set()
        http.shutdown()
        http.server_close()
