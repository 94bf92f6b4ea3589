"""Each process's copies of cached answers (``pitweb.cache.Near``): kept until their own
deadline, within their bytes, text and bytes only."""

from __future__ import annotations

import time

import pytest

from pitweb.cache import Near


def test_a_copy_is_served_until_its_deadline_and_never_after() -> None:
    near = Near(1000)
    near.put("a", "answer", until=time.time() + 60)
    near.put("b", "stale", until=time.time() - 0.001)
    assert near.get("a") == "answer"
    assert near.get("b") is None
    assert near.get("unknown") is None


def test_the_bytes_are_bounded_and_the_least_recently_read_goes_first() -> None:
    near = Near(100)
    later = time.time() + 60
    for key in "abcd":
        near.put(key, key * 25, until=later)
    assert near.get("a") == "a" * 25  # read: now the most recent
    near.put("e", "e" * 25, until=later)  # 125 bytes: the oldest read, b, goes
    assert near.get("b") is None
    assert [near.get(k) is not None for k in "acde"] == [True] * 4
    near.put("c", "C" * 10, until=later)  # replaced, its bytes counted once
    near.put("f", "f" * 15, until=later)
    assert near.get("a") is not None and near.get("f") == "f" * 15


@pytest.mark.parametrize("value", [{"a": 1}, ["x"], 7, "x" * 26, b"y" * 26])
def test_only_text_and_bytes_of_at_most_a_quarter_are_kept(value: object) -> None:
    near = Near(100)
    near.put("k", value, until=time.time() + 60)
    assert near.get("k") is None


def test_clear_forgets_every_copy() -> None:
    near = Near(100)
    near.put("k", b"v", until=time.time() + 60)
    near.clear()
    assert near.get("k") is None
    near.put("k", b"v" * 25, until=time.time() + 60)
    assert near.get("k") == b"v" * 25  # the bytes counted from nothing again
