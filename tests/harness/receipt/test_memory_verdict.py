"""The memory verdict: a score from memory only where the mask held and the pit clock's
main minus shifted interval lies wholly above zero."""

from __future__ import annotations

import pytest

from harness.receipt.memory import memory_verdict


def test_an_interval_above_zero_while_the_mask_holds_is_a_score_from_memory() -> None:
    assert memory_verdict((0.015, 0.025), "mask_holds") == "score_from_memory"


@pytest.mark.parametrize(
    "interval",
    [(0.0, 0.0), (-0.01, 0.02), (0.0, 0.03), (-0.03, -0.01)],
    ids=["equal arms", "spans zero", "touches zero", "below zero"],
)
def test_an_interval_not_wholly_above_zero_shows_no_sign_of_memory(
    interval: tuple[float, float],
) -> None:
    assert memory_verdict(interval, "mask_holds") == "no_sign_of_memory"


def test_a_leaking_mask_leaves_no_control_whatever_the_delta() -> None:
    """An agent that reads the real date back beats the mask on both arms: its delta can
    be zero or anything, and says nothing either way."""
    assert memory_verdict((0.015, 0.025), "mask_leaks") == "control_void"
    assert memory_verdict((0.0, 0.0), "mask_leaks") == "control_void"


@pytest.mark.parametrize(
    ("interval", "mask"),
    [(None, "mask_holds"), ((0.015, 0.025), None), ((0.015, 0.025), "inconclusive"),
     ((0.015, 0.025), "no_items")],
)  # fmt: skip
def test_without_an_interval_or_a_verdict_on_the_mask_memory_is_not_measured(
    interval: tuple[float, float] | None, mask: str | None
) -> None:
    assert memory_verdict(interval, mask) == "not_measured"
