"""Canonical JSON: the byte form every hash is taken over."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import canonical
from harness.receipt.build import receipt_text

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)
scalars = st.none() | st.booleans() | st.integers(-(10**15), 10**15) | finite | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(values)
def test_canonical_text_round_trips_to_the_same_text(value: Any) -> None:
    text = canonical.dumps(value)
    assert canonical.dumps(json.loads(text)) == text


@given(st.dictionaries(st.text(max_size=6), scalars, max_size=6))
def test_key_order_does_not_change_the_bytes(value: dict[str, Any]) -> None:
    reordered = dict(reversed(list(value.items())))
    assert canonical.dumps(reordered) == canonical.dumps(value)


@given(finite)
def test_floats_are_fixed_at_six_decimals(x: float) -> None:
    text = canonical.dumps(x)
    assert text == ("0.000000" if f"{x:.6f}" == "-0.000000" else f"{x:.6f}")
    assert len(text.split(".")[1]) == 6


def test_negative_zero_and_tiny_negatives_normalise() -> None:
    assert canonical.dumps([-0.0, -1e-9, 0.0]) == "[0.000000,0.000000,0.000000]"
    assert canonical.digest(0.1 + 0.2) == canonical.digest(0.3)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_with_their_path(bad: float) -> None:
    with pytest.raises(canonical.CanonicalError, match=r"\$\.cells\[1\]\.total_return"):
        canonical.dumps({"cells": [{"total_return": 0.1}, {"total_return": bad}]})


def test_a_receipt_with_nan_cannot_be_written() -> None:
    with pytest.raises(canonical.CanonicalError):
        receipt_text({"valid": True, "score": math.nan}, "2026-01-01T00:00:00Z")


def test_unknown_types_and_non_string_keys_are_refused() -> None:
    with pytest.raises(canonical.CanonicalError):
        canonical.dumps({"when": object()})
    with pytest.raises(canonical.CanonicalError):
        canonical.dumps({1: "a"})
