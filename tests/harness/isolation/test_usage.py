"""A recorded model exchange read into its usage: OpenAI's chat completions and Responses
API and Anthropic's Messages, whole and streamed, encoded or not; everything else is
unknown, with its reason, never a guess."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from typing import Any

import pytest

from harness.isolation.usage import Unknown, Usage, exchange_usage


def _exchange(
    body: str | bytes,
    *,
    status: int | None = 200,
    content_type: str = "application/json",
    encoding: str | None = None,
) -> dict[str, Any]:
    """A ``model_exchange`` event as the proxy records one."""
    headers = [["Content-Type", content_type]]
    if encoding is not None:
        headers.append(["Content-Encoding", encoding])
    if isinstance(body, bytes):
        try:
            recorded = {"text": body.decode("utf-8")}
        except UnicodeDecodeError:
            recorded = {"base64": base64.b64encode(body).decode("ascii")}
    else:
        recorded = {"text": body}
    return {
        "event": "model_exchange",
        "endpoint": "api.example.test:443",
        "url": "https://api.example.test/v1/chat/completions",
        "method": "POST",
        "status": status,
        "response_headers": headers,
        "response_body": recorded,
        "error": None,
        "cut": False,
    }


def _sse(*events: tuple[str | None, Any]) -> str:
    lines = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
        lines.append("")
    return "\n".join(lines) + "\n"


CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
    "usage": {
        "prompt_tokens": 1200,
        "completion_tokens": 340,
        "total_tokens": 1540,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 256, "audio_tokens": 0},
    },
}
RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "o4-mini-2025-04-16",
    "output": [],
    "usage": {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 128},
        "output_tokens": 500,
        "output_tokens_details": {"reasoning_tokens": 448},
        "total_tokens": 1400,
    },
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [{"type": "text", "text": "hi"}],
    "usage": {
        "input_tokens": 20,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 2000,
        "output_tokens": 75,
    },
}


def test_an_openai_chat_completion_gives_its_tokens_cached_and_reasoning() -> None:
    assert exchange_usage(_exchange(json.dumps(CHAT))) == Usage(
        model="gpt-4o-mini-2024-07-18",
        shape="openai_chat",
        streamed=False,
        input_tokens=1200,
        output_tokens=340,
        cached_input_tokens=1024,
        reasoning_tokens=256,
    )


def test_a_chat_completion_with_null_details_has_no_cached_or_reasoning_tokens() -> None:
    plain = {**CHAT, "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}}
    plain["usage"]["prompt_tokens_details"] = None
    read = exchange_usage(_exchange(json.dumps(plain)))
    assert isinstance(read, Usage)
    assert (read.input_tokens, read.output_tokens, read.cached_input_tokens) == (3, 3, 0)


def test_a_responses_api_response_gives_its_tokens() -> None:
    read = exchange_usage(_exchange(json.dumps(RESPONSE)))
    assert read == Usage("o4-mini-2025-04-16", "openai_responses", False, 900, 500, 128, 0, 448)


def test_an_anthropic_message_counts_cache_reads_and_writes_as_input() -> None:
    read = exchange_usage(_exchange(json.dumps(MESSAGE)))
    assert read == Usage(
        model="claude-sonnet-4-20250514",
        shape="anthropic_messages",
        streamed=False,
        input_tokens=20 + 300 + 2000,
        output_tokens=75,
        cached_input_tokens=2000,
        cache_write_input_tokens=300,
    )


def test_a_streamed_chat_completion_gives_its_last_chunks_usage() -> None:
    chunk = {"object": "chat.completion.chunk", "model": "gpt-4o-2024-08-06", "usage": None}
    body = _sse(
        (None, {**chunk, "choices": [{"index": 0, "delta": {"content": "he"}}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {"content": "llo"}}]}),
        (None, {**chunk, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 7}}),
        (None, "[DONE]"),
    )
    read = exchange_usage(_exchange(body, content_type="text/event-stream; charset=utf-8"))
    assert read == Usage("gpt-4o-2024-08-06", "openai_chat", True, 50, 7)


def test_a_streamed_chat_completion_without_include_usage_is_unknown() -> None:
    chunk = {"object": "chat.completion.chunk", "model": "gpt-4o", "choices": []}
    read = exchange_usage(_exchange(_sse((None, chunk), (None, "[DONE]"))))
    assert isinstance(read, Unknown) and read.reason == "no_usage"


def test_a_streamed_anthropic_message_takes_the_deltas_output() -> None:
    start = {**MESSAGE, "content": [], "usage": {**MESSAGE["usage"], "output_tokens": 1}}
    body = _sse(
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {}}),
        ("ping", {"type": "ping"}),
        ("message_delta", {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 88}}),
        ("message_stop", {"type": "message_stop"}),
    )
    read = exchange_usage(_exchange(body, content_type="text/event-stream"))
    assert isinstance(read, Usage) and read.streamed
    assert (read.input_tokens, read.output_tokens, read.cached_input_tokens) == (2320, 88, 2000)


def test_a_streamed_anthropic_message_cut_before_its_delta_is_unknown() -> None:
    start = {**MESSAGE, "content": [], "usage": {**MESSAGE["usage"], "output_tokens": 1}}
    body = _sse(("message_start", {"type": "message_start", "message": start}))
    read = exchange_usage(_exchange(body, content_type="text/event-stream"))
    assert isinstance(read, Unknown) and read.reason == "no_usage"


def test_a_streamed_response_gives_its_completed_responses_usage() -> None:
    body = _sse(
        ("response.created", {"type": "response.created", "response": {**RESPONSE, "usage": None}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "hi"}),
        ("response.completed", {"type": "response.completed", "response": RESPONSE}),
    )
    read = exchange_usage(_exchange(body, content_type="text/event-stream"))
    assert read == Usage("o4-mini-2025-04-16", "openai_responses", True, 900, 500, 128, 0, 448)


def test_a_stream_reporting_an_error_is_unknown() -> None:
    body = _sse(("error", {"type": "error", "error": {"type": "overloaded_error"}}))
    read = exchange_usage(_exchange(body, content_type="text/event-stream"))
    assert isinstance(read, Unknown) and read.reason == "error_status"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "deflate-raw"])
def test_an_encoded_body_is_inflated_first(encoding: str) -> None:
    data = json.dumps(CHAT).encode()
    if encoding == "gzip":
        packed = gzip.compress(data)
    elif encoding == "deflate":
        packed = zlib.compress(data)
    else:  # raw deflate, as some servers send under "deflate"
        squeezer = zlib.compressobj(wbits=-15)
        packed = squeezer.compress(data) + squeezer.flush()
    header = "gzip" if encoding == "gzip" else "deflate"
    read = exchange_usage(_exchange(packed, encoding=header))
    assert isinstance(read, Usage) and read.input_tokens == 1200


def test_a_coding_not_read_is_unknown() -> None:
    read = exchange_usage(_exchange(b"\x8b\x00\x01binary", encoding="br"))
    assert isinstance(read, Unknown) and read.reason == "unreadable_body"


def test_a_truncated_gzip_body_is_unknown() -> None:
    packed = gzip.compress(json.dumps(CHAT).encode())[:-12]
    read = exchange_usage(_exchange(packed, encoding="gzip"))
    assert isinstance(read, Unknown) and read.reason == "unreadable_body"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"status": 429}, "error_status"),
        ({"status": 500}, "error_status"),
        ({"status": None, "error": "the endpoint did not answer"}, "unanswered"),
        ({"cut": True}, "unanswered"),
        ({"response_body": {"text": "[redacted]"}}, "unreadable_body"),
        ({"response_body": None}, "unreadable_body"),
        ({"response_body": {"text": "<html>busy</html>"}}, "unreadable_body"),
        ({"response_body": {"base64": "!!not base64!!"}}, "unreadable_body"),
    ],
)
def test_an_exchange_without_a_readable_answer_is_unknown(
    change: dict[str, Any], reason: str
) -> None:
    read = exchange_usage({**_exchange(json.dumps(CHAT)), **change})
    assert isinstance(read, Unknown) and read.reason == reason


@pytest.mark.parametrize(
    ("usage", "reason"),
    [
        ({"prompt_tokens": -1, "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": 3.0, "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": 3.5, "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": True, "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": "3", "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": 2**40, "completion_tokens": 3}, "bad_count"),
        ({"prompt_tokens": 3}, "no_usage"),
        (
            {
                "prompt_tokens": 3,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 4},
            },
            "bad_count",
        ),
        (
            {
                "prompt_tokens": 3,
                "completion_tokens": 3,
                "completion_tokens_details": {"reasoning_tokens": -2},
            },
            "bad_count",
        ),
        (
            {"prompt_tokens": 3, "completion_tokens": 3, "prompt_tokens_details": [1]},
            "bad_count",
        ),
    ],
)
def test_a_count_that_is_not_a_count_is_not_trusted(usage: dict[str, Any], reason: str) -> None:
    read = exchange_usage(_exchange(json.dumps({**CHAT, "usage": usage})))
    assert isinstance(read, Unknown) and read.reason == reason, read


def test_more_reasoning_than_output_is_not_trusted() -> None:
    usage = {**RESPONSE["usage"], "output_tokens_details": {"reasoning_tokens": 501}}  # type: ignore[dict-item]
    read = exchange_usage(_exchange(json.dumps({**RESPONSE, "usage": usage})))
    assert isinstance(read, Unknown) and read.reason == "bad_count"


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ({k: v for k, v in CHAT.items() if k != "model"}, "no_model"),
        ({**CHAT, "model": ""}, "no_model"),
        ({**CHAT, "model": "gpt\nx"}, "no_model"),
        ({**CHAT, "model": 4}, "no_model"),
        ({k: v for k, v in CHAT.items() if k != "usage"}, "no_usage"),
        ({"object": "list", "data": []}, "unknown_shape"),
        ({"error": {"message": "rate limited"}}, "unknown_shape"),
        ([1, 2, 3], "unknown_shape"),
        # input and output tokens, but neither a response nor a message says what they mean
        ({"model": "m", "usage": {"input_tokens": 3, "output_tokens": 3}}, "unknown_shape"),
    ],
)
def test_a_body_of_no_known_shape_or_model_is_unknown(document: Any, reason: str) -> None:
    read = exchange_usage(_exchange(json.dumps(document)))
    assert isinstance(read, Unknown) and read.reason == reason, read
