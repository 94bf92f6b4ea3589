"""A rate card read strictly, and usage priced with it in whole nanodollars: a model the
card does not list is unpriced, never free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.receipt.ratecard import (
    MAX_CARD_BYTES,
    RateCardError,
    dollars,
    parse_rate_card,
    price_usage,
    read_rate_card,
)

CARD: dict[str, Any] = {
    "schema_version": "pit-harness.rate-card.v1",
    "source": "a provider's price page",
    "as_of": "2026-01-05",
    "models": {
        "chat-1": {"input": 150, "cached_input": 75, "output": 600},
        "think-1": {
            "input": 1100,
            "cached_input": 275,
            "cache_write_input": 1375,
            "output": 4400,
            "reasoning": 5000,
        },
    },
}


def _tokens(
    inp: int, out: int, cached: int = 0, written: int = 0, reasoning: int = 0
) -> dict[str, int]:
    return {
        "exchanges": 1,
        "input_tokens": inp,
        "output_tokens": out,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": written,
        "reasoning_tokens": reasoning,
    }


def _usage(by_model: dict[str, dict[str, int]], unknown: int = 0) -> dict[str, Any]:
    kinds = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_input_tokens")
    return {
        "exchanges": len(by_model) + unknown,
        "unknown_exchanges": unknown,
        **{k: sum(t[k] for t in by_model.values()) for k in (*kinds, "reasoning_tokens")},
        "by_model": by_model,
    }


def _card(**change: Any) -> bytes:
    return json.dumps({**CARD, **change}).encode()


def test_usage_is_priced_per_kind_of_token_in_whole_nanodollars() -> None:
    card = parse_rate_card(_card())
    usage = _usage(
        {
            "chat-1": _tokens(1000, 200, cached=400),
            "think-1": _tokens(3000, 500, cached=1000, written=500, reasoning=300),
        }
    )
    priced = price_usage(usage, card)
    chat = 600 * 150 + 400 * 75 + 200 * 600
    think = 1500 * 1100 + 1000 * 275 + 500 * 1375 + 200 * 4400 + 300 * 5000
    assert priced.by_model == {"chat-1": chat, "think-1": think}
    assert priced.nanodollars == chat + think and priced.whole
    assert dollars(priced.nanodollars) == "$0.005232500"


def test_a_kind_the_card_leaves_out_is_priced_as_the_card_says() -> None:
    """No cached or reasoning price: cached input at the input rate, reasoning at the
    output rate (they are input and output tokens)."""
    card = parse_rate_card(_card(models={"m": {"input": 10, "output": 30}}))
    priced = price_usage(_usage({"m": _tokens(100, 50, cached=60, reasoning=20)}), card)
    assert priced.nanodollars == 100 * 10 + 50 * 30


def test_a_model_the_card_does_not_list_is_unpriced_never_free() -> None:
    card = parse_rate_card(_card())
    usage = _usage({"chat-1": _tokens(10, 10), "other-9": _tokens(70, 7)}, unknown=2)
    priced = price_usage(usage, card)
    assert priced.nanodollars == 10 * 150 + 10 * 600
    assert "other-9" not in priced.by_model
    assert priced.unpriced["other-9"]["input_tokens"] == 70
    assert priced.unknown_exchanges == 2 and not priced.whole
    shown = priced.to_json()
    assert shown["whole"] is False and list(shown["unpriced_models"]) == ["other-9"]


def test_usage_whose_parts_exceed_the_whole_is_refused() -> None:
    card = parse_rate_card(_card())
    with pytest.raises(RateCardError, match="exceed"):
        price_usage(_usage({"chat-1": _tokens(10, 10, cached=11)}), card)


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({**CARD, "currency": "EUR"}, "unknown field `currency`"),
        ({**CARD, "models": {"m": {"input": 1, "output": 2, "batch": 1}}}, "unknown field `batch`"),
        ({**CARD, "models": {"m": {"input": -1, "output": 2}}}, "input"),
        ({**CARD, "models": {"m": {"input": 1, "output": 2, "reasoning": -5}}}, "reasoning"),
        ({**CARD, "models": {"m": {"input": 1.5, "output": 2}}}, "input"),
        ({**CARD, "models": {"m": {"input": True, "output": 2}}}, "input"),
        ({**CARD, "models": {"m": {"input": 1}}}, "output"),
        ({**CARD, "models": {}}, "models"),
        ({**CARD, "schema_version": "sharpebench.token-rate-card.v1"}, "schema_version"),
        ({k: v for k, v in CARD.items() if k != "schema_version"}, "schema_version"),
    ],
)
def test_a_card_that_breaks_a_rule_is_refused_naming_it(document: Any, named: str) -> None:
    with pytest.raises(RateCardError, match=r"pit-harness\.rate-card\.v1") as refused:
        parse_rate_card(json.dumps(document).encode())
    assert named in str(refused.value)


def test_an_oversize_card_is_refused_before_it_is_read(tmp_path: Path) -> None:
    padded = {**CARD, "source": "x" * 2000}
    models = {f"model-{n:05d}": {"input": 1, "output": 2} for n in range(2000)}
    path = tmp_path / "card.json"
    path.write_text(json.dumps({**padded, "models": models}))
    assert path.stat().st_size > MAX_CARD_BYTES
    with pytest.raises(RateCardError, match="larger than a rate card may be"):
        read_rate_card(path)


def test_a_card_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text("{models: 1")
    with pytest.raises(RateCardError, match="not JSON"):
        read_rate_card(path)


def test_a_card_is_read_with_the_digest_of_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_bytes(_card())
    loaded = read_rate_card(path)
    assert loaded.card.models["chat-1"].input == 150
    assert loaded.sha256.startswith("sha256:") and len(loaded.sha256) == 71
