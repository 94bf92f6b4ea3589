"""The answering side of a judged-point run: a model behind an OpenAI-compatible
chat-completions endpoint answers each point's Question.

The agent is sent our instructions and the Question, nothing else: the Ground Truth and
the Provenance never leave the point (no function here reads them). It is offered no
tools, so every answer's ``tool_counts`` is empty and the experiment says so. Each answer
records its latency, the token counts the provider reported, its cost (from prices given
on the command line, else the provider's own figure, else ``None`` with the reason) and
the model id the provider says it ran. A provider that cannot be reached, times out or
answers outside the protocol is retried a bounded number of times with backoff, and the
answer is then ``harness_error``: there is nothing to judge, and it is never scored as
the agent's failure. An empty or refused reply is the agent's answer, and is judged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from harness.points.markdown import Point
from harness.points.pace import Pace
from harness.points.replies import ChatClient, ReplyError, clean_text, count, model_id, money

INSTRUCTIONS = """Answer the question below. It holds everything you are given: there is a \
hidden ground truth you cannot see, and your answer will be compared with it.
Respect the time, evidence and output boundaries the question sets: where it fixes a date, \
use only what was knowable then. Do not discuss how you will be graded and do not guess at \
a hidden answer. Return one self-contained answer whose claims can be checked, with the \
final conclusion stated plainly."""

COMPLETED, HARNESS_ERROR = "completed", "harness_error"


@dataclass(frozen=True)
class AgentConfig:
    base_url: str
    api_key: str
    model: str
    effort: str | None = None  # sent as reasoning_effort when set
    timeout: float = 600.0
    attempts: int = 3
    backoff: float = 1.0  # seconds before the second attempt, doubled after each
    price_input_per_mtok: float | None = None  # USD per million input tokens
    price_output_per_mtok: float | None = None  # USD per million output tokens
    price_cached_input_per_mtok: float | None = None  # None: cached input at the input price

    def experiment(self) -> dict[str, Any]:
        """What the answer set records of this configuration (never the key)."""
        return {
            "agent": {"model": self.model, "effort": self.effort},
            "harness": {"name": "pit-harness points answer", "transport": "chat.completions"},
            "instructions": INSTRUCTIONS,
            "tools": [],
            "evidence_snapshot": "the Question text only (closed book: no tools, no search)",
            "attempts": self.attempts,
            "timeout_seconds": self.timeout,
            "prices_usd_per_mtok": {
                "input": self.price_input_per_mtok,
                "cached_input": self.price_cached_input_per_mtok,
                "output": self.price_output_per_mtok,
            },
        }


def prompt(point: Point) -> str:
    """Our instructions and the Question: the whole of what the agent sees."""
    return f"{INSTRUCTIONS}\n\n<Question>\n{point.agent_payload()}\n</Question>\n"


def _tokens(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    found = {
        "input": count(getattr(usage, "prompt_tokens", None)),
        "cached_input": count(getattr(prompt_details, "cached_tokens", None)),
        "output": count(getattr(usage, "completion_tokens", None)),
        "reasoning_output": count(getattr(completion_details, "reasoning_tokens", None)),
    }
    return {k: v for k, v in found.items() if v is not None}


def priced(tokens: dict[str, int], prices: dict[str, Any]) -> float:
    """USD for ``tokens`` at ``prices`` per million: cached input (part of the input) at
    its own price when one is given, else at the input price; reasoning is part of the
    output."""
    cached = tokens.get("cached_input", 0)
    cached_price = prices["input"] if prices.get("cached_input") is None else prices["cached_input"]
    usd = (
        (tokens["input"] - cached) * prices["input"]
        + cached * cached_price
        + tokens["output"] * prices["output"]
    ) / 1e6
    return float(round(usd, 6))


def _cost(config: AgentConfig, tokens: dict[str, int], usage: Any) -> dict[str, Any]:
    prices = config.experiment()["prices_usd_per_mtok"]
    whole = "input" in tokens and "output" in tokens
    if whole and tokens.get("cached_input", 0) > tokens["input"]:
        whole = False  # usage that does not add up is not priced
    if None not in (prices["input"], prices["output"]) and whole:
        return {"usd": priced(tokens, prices), "source": "configured_prices"}
    extra = getattr(usage, "model_extra", None) or {}
    reported = money(extra.get("cost"))
    if reported is not None:
        return {"usd": reported, "source": "provider"}
    return {"usd": None, "source": "not_reported"}


FINISHED = (None, "stop", "length", "content_filter")  # a reply the agent gave


def _text(message: Any, finish_reason: Any) -> str:
    """The agent's answer in a reply: its content, or its refusal, or nothing when the
    deployment's content filter withheld it (each an answer, judged as such); a reply
    without any of these, or one the provider ended in error, is refused."""
    if finish_reason not in FINISHED:
        raise ReplyError(f"the provider ended the reply with finish_reason {finish_reason!r}")
    content = getattr(message, "content", None)
    if content is None:
        refusal = getattr(message, "refusal", None)
        if refusal is not None:
            return clean_text(refusal, "refusal")
        if finish_reason == "content_filter":
            return ""  # the deployment's filter withheld the answer: the agent's, judged
        raise ReplyError("a reply with neither content nor a refusal")
    return clean_text(content, "content")


@dataclass
class Answerer:
    config: AgentConfig
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    pace: Pace | None = field(default=None, repr=False)  # a rate limit shared by threads
    _chat: ChatClient = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._chat = ChatClient(self.config.base_url, self.config.api_key, self.config.timeout)

    def _call(self, client: Any, text: str) -> Any:
        extra: dict[str, Any] = {}
        if self.config.effort:
            extra["reasoning_effort"] = self.config.effort
        return client.chat.completions.create(
            model=self.config.model, messages=[{"role": "user", "content": text}], **extra
        )

    def answer(self, point: Point, sample: int = 0) -> dict[str, Any]:
        """One answer record for ``point``: ``completed`` with the reply's text (empty if
        the model said nothing), or ``harness_error`` with the last error."""
        client = self._chat.get()
        text = prompt(point)
        started = time.monotonic()
        error = ""
        for attempt in range(1, self.config.attempts + 1):
            if attempt > 1:
                self.sleep(self.config.backoff * 2 ** (attempt - 2))
            if self.pace is not None:
                self.pace.wait()
            try:
                reply = self._call(client, text)
                choice = reply.choices[0]
                answer = _text(choice.message, choice.finish_reason)
                tokens = _tokens(getattr(reply, "usage", None))
                cost = _cost(self.config, tokens, getattr(reply, "usage", None))
            except Exception as exc:  # unreachable, timeout, an error status, a malformed body
                error = f"agent call failed: {type(exc).__name__}: {exc}"[:500]
                error = clean_text(error, "error")
                continue
            return {
                "point_id": point.id,
                "sample": sample,
                "status": COMPLETED,
                "text": answer,
                "finish_reason": choice.finish_reason,
                "model_returned": model_id(getattr(reply, "model", None)),
                "attempts": attempt,
                "latency_seconds": round(time.monotonic() - started, 3),
                "answered_at": datetime.now(UTC).isoformat(),
                "tokens": tokens,
                "cost": cost,
                "tool_counts": {},
                "error": "",
            }
        return {
            "point_id": point.id,
            "sample": sample,
            "status": HARNESS_ERROR,
            "text": "",
            "finish_reason": None,
            "model_returned": None,
            "attempts": self.config.attempts,
            "latency_seconds": round(time.monotonic() - started, 3),
            "answered_at": datetime.now(UTC).isoformat(),
            "tokens": {},
            "cost": {"usd": None, "source": "not_reported"},
            "tool_counts": {},
            "error": error,
        }
