"""The board's rank ranges, vectorised, agree with their definition: rank low is one
plus the intervals wholly above; rank high counts those overlapping or above."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.receipt.rescore import RankRange, rank_bounds, rank_ranges

finite = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 2))
interval = st.tuples(finite, finite).map(lambda pair: (min(pair), max(pair)))


@given(st.lists(interval, max_size=40))
def test_rank_ranges_count_the_intervals_above_and_overlapping(
    intervals: list[tuple[float, float]],
) -> None:
    expected = [
        RankRange(
            1 + sum(1 for other_low, _ in intervals if other_low > high),
            sum(1 for _, other_high in intervals if other_high >= low),
        )
        for low, high in intervals
    ]
    assert rank_ranges(intervals) == expected
    lows, highs = rank_bounds([lo for lo, _ in intervals], [hi for _, hi in intervals])
    assert [RankRange(a, b) for a, b in zip(lows, highs, strict=True)] == expected


def test_equal_intervals_tie_and_a_lone_leader_ranks_first() -> None:
    assert rank_ranges([(0.5, 0.6), (0.1, 0.2), (0.1, 0.2)]) == [
        RankRange(1, 1), RankRange(2, 3), RankRange(2, 3),
    ]  # fmt: skip
