"""Rank ranges from intervals: a range where intervals overlap, never a false order."""

from __future__ import annotations

from harness.points.metrics import rank_ranges


def test_rank_ranges_widen_where_intervals_overlap() -> None:
    # A clearly first; B and C overlap each other (2-3); D clearly last
    intervals = [(0.8, 0.9), (0.5, 0.7), (0.6, 0.75), (0.1, 0.2)]
    assert rank_ranges(intervals) == [(1, 1), (2, 3), (2, 3), (4, 4)]
    assert rank_ranges([(0.1, 0.9), (0.2, 0.3)]) == [(1, 2), (1, 2)]
    assert rank_ranges([]) == []
