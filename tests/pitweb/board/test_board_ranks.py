"""Rank ranges kept as a base and a delta equal the ranges counted afresh over the
board as it is now, whatever was added and taken away since the base."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.receipt.rescore import rank_bounds
from pitweb.board import ranks as boardranks

value = st.integers(min_value=-20, max_value=20).map(lambda n: n / 10)
interval = st.tuples(value, value).map(lambda pair: (min(pair), max(pair)))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(interval, min_size=1, max_size=30),
    st.lists(interval, max_size=10),
    st.data(),
)
def test_the_base_and_its_delta_count_what_a_fresh_count_does(
    base: list[tuple[float, float]], added: list[tuple[float, float]], data: st.DataObject
) -> None:
    taken = data.draw(
        st.lists(st.sampled_from(range(len(base))), unique=True, max_size=len(base) - 1)
    )
    removed = [base[i] for i in taken]
    now = [b for i, b in enumerate(base) if i not in taken] + added
    stored = boardranks.base_bytes([lo for lo, _ in base], [hi for _, hi in base])
    # added in two steps, with one interval added and taken away again in between
    delta = boardranks.merged([], added[:3], removed)
    delta = boardranks.merged(delta, [*added[3:], (9.0, 9.5)], [])
    delta = boardranks.merged(delta, [], [(9.0, 9.5)])
    assert all(count != 0 for *_, count in delta)
    assert (9.0, 9.5) not in {(lo, hi) for lo, hi, _ in delta}
    best, worst = boardranks.against_base(stored, [lo for lo, _ in now], [hi for _, hi in now])
    rows = [(b, w, lo, hi) for b, w, (lo, hi) in zip(best, worst, now, strict=True)]
    fresh = rank_bounds([lo for lo, _ in now], [hi for _, hi in now])
    assert boardranks.adjusted(delta, rows) == list(zip(*fresh, strict=True))


def test_an_empty_delta_leaves_the_base_ranges_as_they_are() -> None:
    assert boardranks.adjusted([], [(2, 5, 0.1, 0.2)]) == [(2, 5)]
    assert boardranks.adjusted([[0.3, 0.4, 1]], []) == []
