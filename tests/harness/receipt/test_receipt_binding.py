"""The prices a body names: in its bound config and in P4's statement, read one way by
verify, rederive and the site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.receipt.binding import bound_prices, stated_prices
from harness.receipt.verify import prices_disagreement

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def golden(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((GOLDEN / name).read_text())
    return body


def test_a_priced_run_names_one_file_in_its_config_and_its_p4() -> None:
    body = golden("earliest-five-priced.body.json")
    stated, bound = stated_prices(body), bound_prices(body)
    assert stated is body["protocol"]["P4_costs_and_frictions"]["prices"]
    assert bound is body["config"]["prices"]
    assert stated["file_sha256"] == bound["file_sha256"]
    assert prices_disagreement(body) is None


def test_an_unpriced_run_names_no_prices_anywhere() -> None:
    body = golden("stub-in-process.body.json")
    assert stated_prices(body) is None
    assert bound_prices(body) is None
    assert prices_disagreement(body) is None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"protocol": None, "config": None},
        {"protocol": [], "config": "x"},
        {"protocol": {"P4_costs_and_frictions": "declared"}, "config": {}},
        {"protocol": {"P4_costs_and_frictions": None}},
    ],
)
def test_a_body_without_the_slots_names_no_prices(body: dict[str, Any]) -> None:
    assert stated_prices(body) is None
    assert bound_prices(body) is None


def test_a_p4_naming_another_file_than_the_config_is_a_disagreement() -> None:
    body = golden("earliest-five-priced.body.json")
    body["protocol"]["P4_costs_and_frictions"]["prices"]["file_sha256"] = "sha256:" + "0" * 64
    assert prices_disagreement(body) == "config.prices and P4 disagree on file_sha256"
