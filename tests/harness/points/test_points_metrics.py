"""The range an accuracy would take over its harness errors: a pure function of the
counts, holding the accuracy, its bounds each harness error resolved one way."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.points.metrics import harness_error_range, summary

counts = st.integers(min_value=0, max_value=400)


@given(passed=counts, failed=counts, errors=counts)
def test_the_harness_error_range_holds_the_accuracy_and_resolves_every_error(
    passed: int, failed: int, errors: int
) -> None:
    classes = ["completely_correct"] * passed + ["other_error"] * failed + [None] * errors
    found = harness_error_range(passed, failed, errors)
    if not classes:
        assert found is None
        return
    assert found is not None
    low, high = found
    # each bound is the accuracy of the answers with every harness error made a fail, or
    # a pass: the same classes with the errors judged
    as_fails = summary(["other_error" if c is None else c for c in classes])["accuracy"]
    as_passes = summary(["completely_correct" if c is None else c for c in classes])["accuracy"]
    assert (low, high) == (as_fails, as_passes)
    assert 0.0 <= low <= high <= 1.0
    assert high - low == pytest.approx(errors / len(classes))
    accuracy = summary(classes)["accuracy"]
    if accuracy is not None:  # some answer was judged
        assert low <= accuracy <= high
        if errors == 0:
            assert low == accuracy == high


def test_the_range_is_stated_as_its_counts_give_it() -> None:
    assert harness_error_range(1, 2, 1) == (0.25, 0.5)
    assert harness_error_range(0, 0, 3) == (0.0, 1.0)  # nothing judged: anything at all
    assert harness_error_range(0, 0, 0) is None
    with pytest.raises(ValueError, match="negative"):
        harness_error_range(1, -1, 0)
