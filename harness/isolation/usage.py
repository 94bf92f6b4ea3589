"""What one recorded model exchange says it used: tokens in, out, cached and reasoning,
and the model that answered, read from the response the recording proxy kept whole
(``harness.isolation.egress``).

Three shapes are read, each as a JSON body or as a server-sent event stream:

- OpenAI-compatible chat completions: ``usage.prompt_tokens`` and ``completion_tokens``,
  with ``prompt_tokens_details.cached_tokens`` and
  ``completion_tokens_details.reasoning_tokens``; streamed, the usage of the last chunk
  that carries one (``stream_options.include_usage``);
- OpenAI's Responses API: ``usage.input_tokens`` and ``output_tokens``, with
  ``input_tokens_details.cached_tokens`` and ``output_tokens_details.reasoning_tokens``;
  streamed, the response of its ``response.completed`` (or ``response.incomplete``) event;
- Anthropic's Messages API: ``usage.input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens``; streamed,
  ``message_start``'s usage updated by the last ``message_delta``'s (whose
  ``output_tokens`` is the whole answer's).

Every figure is normalised to one meaning: ``input_tokens`` counts every prompt token
(Anthropic's cache reads and writes, which it counts apart, are added in), of which
``cached_input_tokens`` were read from a cache and ``cache_write_input_tokens`` written to
one; ``output_tokens`` counts every completion token, of which ``reasoning_tokens`` were
reasoning. A body recorded with ``Content-Encoding`` gzip or deflate is inflated first.

Anything else is :class:`Unknown`, with the reason, and never a guess: an exchange cut or
unanswered, an error status, a redacted or undecodable body, a shape not listed, a usage
without the model's name, or a count that is not a non-negative integer (a boolean, a
float, a negative number, one past ``MAX_TOKENS``) or does not add up (more cached tokens
than input, more reasoning than output).
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import Any, Literal

# the most tokens one exchange is believed to have used: no model reads or writes four
# billion tokens in one answer, so a larger count is not a count
MAX_TOKENS = 2**32
# how much an encoded body may inflate to (what the proxy keeps of a body)
MAX_INFLATED = 64 * 1024 * 1024
MAX_MODEL_NAME = 200
REDACTED = "[redacted]"  # what the proxy records of a body that held a passed secret

Shape = Literal["openai_chat", "openai_responses", "anthropic_messages"]
UnknownReason = Literal[
    "unanswered",  # cut, or no answer came (the proxy's error)
    "error_status",  # an answer that is not 2xx
    "unreadable_body",  # redacted, undecodable, not JSON or not an event stream
    "unknown_shape",  # none of the shapes read here
    "no_usage",  # a known shape that reports no usage (a stream without its usage event)
    "no_model",  # usage without the name of the model that answered
    "bad_count",  # a count that is not a non-negative integer, or does not add up
]
UNKNOWN_REASONS: tuple[UnknownReason, ...] = (
    "unanswered",
    "error_status",
    "unreadable_body",
    "unknown_shape",
    "no_usage",
    "no_model",
    "bad_count",
)


@dataclass(frozen=True)
class Usage:
    """What one exchange used, in the normalised meaning (see the module's docstring)."""

    model: str
    shape: Shape
    streamed: bool
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class Unknown:
    """An exchange whose usage is not known, and why."""

    reason: UnknownReason
    detail: str = ""


class _NotRead(Exception):
    def __init__(self, reason: UnknownReason, detail: str = "") -> None:
        super().__init__(detail)
        self.reason: UnknownReason = reason
        self.detail = detail


def exchange_usage(exchange: dict[str, Any]) -> Usage | Unknown:
    """The usage one ``model_exchange`` event records, or why it is not known."""
    try:
        return _read(exchange)
    except _NotRead as exc:
        return Unknown(exc.reason, exc.detail)


def _read(exchange: dict[str, Any]) -> Usage:
    status = exchange.get("status")
    if exchange.get("cut") is not False or exchange.get("error") is not None:
        raise _NotRead("unanswered", "the exchange was cut or not answered")
    if isinstance(status, bool) or not isinstance(status, int):
        raise _NotRead("unanswered", "no status was recorded")
    if not 200 <= status < 300:
        raise _NotRead("error_status", f"status {status}")
    headers = _headers(exchange.get("response_headers"))
    data = _inflated(_body_bytes(exchange.get("response_body")), headers.get("content-encoding"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotRead("unreadable_body", "the body is not UTF-8") from None
    if _is_stream(text, headers.get("content-type", "")):
        return _from_stream(_events(text))
    try:
        document = json.loads(text)
    except ValueError:
        raise _NotRead("unreadable_body", "the body is neither JSON nor an event stream") from None
    return _from_document(document, streamed=False)


# -- the body as recorded ----------------------------------------------------------------


def _headers(recorded: Any) -> dict[str, str]:
    """The response's headers by lower-case name (the last of a repeated one)."""
    found: dict[str, str] = {}
    for item in recorded if isinstance(recorded, list) else []:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(v, str) for v in item):
            found[item[0].lower()] = item[1]
    return found


def _body_bytes(body: Any) -> bytes:
    if not isinstance(body, dict) or len(body) != 1:
        raise _NotRead("unreadable_body", "no body was recorded")
    if isinstance(body.get("text"), str):
        if body["text"] == REDACTED:
            raise _NotRead("unreadable_body", "the body was redacted")
        return str(body["text"]).encode("utf-8")
    if isinstance(body.get("base64"), str):
        try:
            return base64.b64decode(body["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise _NotRead("unreadable_body", "the body's base64 does not decode") from None
    raise _NotRead("unreadable_body", "no body was recorded")


def _inflated(data: bytes, encoding: str | None) -> bytes:
    """``data`` with its content codings undone, last applied first; a coding other than
    gzip, deflate or identity (brotli, zstd) is not read."""
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            data = _inflate(data, (31,))
        elif coding == "deflate":  # zlib-wrapped as the standard says, or raw as some send
            data = _inflate(data, (15, -15))
        elif coding != "identity":
            raise _NotRead("unreadable_body", f"content coding {coding!r} is not read")
    return data


def _inflate(data: bytes, windows: tuple[int, ...]) -> bytes:
    for wbits in windows:
        inflater = zlib.decompressobj(wbits)
        try:
            inflated = inflater.decompress(data, MAX_INFLATED)
        except zlib.error:
            continue
        if inflater.unconsumed_tail:
            raise _NotRead("unreadable_body", "the body inflates past what is kept")
        if inflater.eof and not inflater.unused_data:
            return inflated
    raise _NotRead("unreadable_body", "the encoded body does not inflate whole")


def _is_stream(text: str, content_type: str) -> bool:
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        return True
    head = text.lstrip()[:6]
    return head.startswith(("data:", "event:"))


def _events(text: str) -> list[tuple[str, Any]]:
    """A server-sent event stream's events as (event name, data read as JSON): events
    are separated by blank lines; data lines are joined; ``[DONE]`` and comments are
    skipped, and data that is not JSON makes the stream unreadable."""
    found: list[tuple[str, Any]] = []
    for block in text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n"):
        name, data = "", []
        for line in block.split("\n"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        joined = "\n".join(data)
        if not data or joined.strip() == "[DONE]":
            continue
        try:
            found.append((name, json.loads(joined)))
        except ValueError:
            raise _NotRead("unreadable_body", "an event's data is not JSON") from None
    return found


# -- the shapes ----------------------------------------------------------------------------


def _from_document(document: Any, *, streamed: bool) -> Usage:
    """A whole response: a chat completion, a Responses API response or a message."""
    if not isinstance(document, dict):
        raise _NotRead("unknown_shape", "the body is not a JSON object")
    usage = document.get("usage")
    if isinstance(usage, dict) and "prompt_tokens" in usage:
        return _openai_chat(usage, document.get("model"), streamed=streamed)
    if document.get("type") == "message":
        return _anthropic(_object(usage), document.get("model"), streamed=streamed)
    if document.get("object") == "response":
        return _openai_responses(_object(usage), document.get("model"), streamed=streamed)
    if document.get("object") in ("chat.completion", "text_completion"):
        raise _NotRead("no_usage", "the completion reports no usage")
    raise _NotRead("unknown_shape", "not a chat completion, a response or a message")


def _from_stream(events: list[tuple[str, Any]]) -> Usage:
    objects = [data for _, data in events if isinstance(data, dict)]
    if len(objects) != len(events) or not objects:
        raise _NotRead("unknown_shape", "an event stream whose events are not JSON objects")
    kinds = {o.get("type") for o in objects}
    if "error" in kinds:
        raise _NotRead("error_status", "the stream reports an error")
    if "message_start" in kinds:
        return _anthropic_stream(objects)
    if any(isinstance(k, str) and k.startswith("response.") for k in kinds):
        return _responses_stream(objects)
    if any(o.get("object") == "chat.completion.chunk" for o in objects):
        return _chat_stream(objects)
    raise _NotRead("unknown_shape", "an event stream of no shape read here")


def _chat_stream(chunks: list[dict[str, Any]]) -> Usage:
    """Chat completion chunks: the usage of the last chunk that carries one (the stream
    asked for it with ``stream_options.include_usage``), the model all chunks name."""
    usages = [c["usage"] for c in chunks if c.get("usage") is not None]
    if not usages:
        raise _NotRead("no_usage", "no chunk carries usage (include_usage was not asked)")
    models = {c.get("model") for c in chunks if c.get("model") is not None}
    if len(models) > 1:
        raise _NotRead("no_model", "the chunks name more than one model")
    return _openai_chat(_object(usages[-1]), next(iter(models), None), streamed=True)


def _responses_stream(events: list[dict[str, Any]]) -> Usage:
    ended = [
        e.get("response")
        for e in events
        if e.get("type") in ("response.completed", "response.incomplete")
    ]
    if not ended:
        raise _NotRead("no_usage", "the stream has no response.completed event")
    response = ended[-1]
    if not isinstance(response, dict) or response.get("object") != "response":
        raise _NotRead("unknown_shape", "the completed event carries no response")
    return _openai_responses(_object(response.get("usage")), response.get("model"), streamed=True)


def _anthropic_stream(events: list[dict[str, Any]]) -> Usage:
    """``message_start``'s message and usage; each ``message_delta``'s usage replaces the
    counts it names (they are cumulative), and one must give the answer's output."""
    starts = [e.get("message") for e in events if e.get("type") == "message_start"]
    deltas = [e.get("usage") for e in events if e.get("type") == "message_delta"]
    if len(starts) != 1 or not isinstance(starts[0], dict):
        raise _NotRead("unknown_shape", "a message stream without one message_start")
    usage = dict(_object(starts[0].get("usage")))
    if not any(isinstance(d, dict) and "output_tokens" in d for d in deltas):
        raise _NotRead("no_usage", "no message_delta gives the answer's output tokens")
    for delta in deltas:
        usage.update(_object(delta))
    return _anthropic(usage, starts[0].get("model"), streamed=True)


def _openai_chat(usage: dict[str, Any], model: Any, *, streamed: bool) -> Usage:
    prompt = _count(usage, "prompt_tokens")
    completion = _count(usage, "completion_tokens")
    cached = _count(_details(usage, "prompt_tokens_details"), "cached_tokens", 0)
    reasoning = _count(_details(usage, "completion_tokens_details"), "reasoning_tokens", 0)
    return _made("openai_chat", model, streamed, prompt, completion, cached, 0, reasoning)


def _openai_responses(usage: dict[str, Any], model: Any, *, streamed: bool) -> Usage:
    given = _count(usage, "input_tokens")
    output = _count(usage, "output_tokens")
    cached = _count(_details(usage, "input_tokens_details"), "cached_tokens", 0)
    reasoning = _count(_details(usage, "output_tokens_details"), "reasoning_tokens", 0)
    return _made("openai_responses", model, streamed, given, output, cached, 0, reasoning)


def _anthropic(usage: dict[str, Any], model: Any, *, streamed: bool) -> Usage:
    """Anthropic counts cache reads and writes apart from ``input_tokens``: they are added
    in, so that input means every prompt token here too."""
    base = _count(usage, "input_tokens")
    output = _count(usage, "output_tokens")
    read = _count(usage, "cache_read_input_tokens", 0)
    written = _count(usage, "cache_creation_input_tokens", 0)
    total = base + read + written
    return _made("anthropic_messages", model, streamed, total, output, read, written, 0)


def _made(
    shape: Shape,
    model: Any,
    streamed: bool,
    given: int,
    output: int,
    cached: int,
    written: int,
    reasoning: int,
) -> Usage:
    if cached + written > given or reasoning > output or given > MAX_TOKENS:
        raise _NotRead("bad_count", "the counts do not add up")
    if not isinstance(model, str) or not 0 < len(model) <= MAX_MODEL_NAME:
        raise _NotRead("no_model", "the response does not name its model")
    if not model.isprintable() or model != model.strip():
        raise _NotRead("no_model", "the model's name is not a plain name")
    return Usage(model, shape, streamed, given, output, cached, written, reasoning)


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _NotRead("no_usage", "no usage object")
    return value


def _details(usage: dict[str, Any], key: str) -> dict[str, Any]:
    """A usage's details object; absent or null is none (no cached or reasoning tokens)."""
    value = usage.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _NotRead("bad_count", f"{key} is not an object")
    return value


_REQUIRED = object()


def _count(usage: dict[str, Any], key: str, default: Any = _REQUIRED) -> int:
    """A count: a JSON integer from 0 to MAX_TOKENS (never a boolean or a float, even a
    whole one); an optional count absent or null is ``default``."""
    value = usage.get(key)
    if value is None and default is not _REQUIRED:
        return int(default)
    if value is None:
        raise _NotRead("no_usage", f"usage without {key}")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise _NotRead("bad_count", f"{key} is {value!r}")
    return value
