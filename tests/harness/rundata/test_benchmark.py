"""A run's benchmark identity: stable, normalised, and different for every value that
defines it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.rundata.benchmark import Benchmark, is_key, window_words

DIGEST = "sha256:" + "ab" * 32
BASE: dict[str, Any] = {
    "release_digest": DIGEST,
    "forms": ["8-K"],
    "start": "2023-03-01",
    "end": "2023-03-10",
    "hold_sessions": 5,
    "clocks": ["leaky", "dump", "pit"],
}


def test_key_is_stable_across_order_and_digest_spelling() -> None:
    one = Benchmark.of(**BASE)
    other = Benchmark.of(
        **{**BASE, "release_digest": "AB" * 32, "forms": ["8-K", "8-K"],
           "clocks": ["pit", "leaky", "dump"]}
    )  # fmt: skip
    assert one.key == other.key
    assert is_key(one.key)


@pytest.mark.parametrize(
    "change",
    [
        {"end": "2023-03-08"},
        {"start": "2023-03-02"},
        {"hold_sessions": 3},
        {"clocks": ["dump", "pit"]},
        {"forms": ["8-K", "10-Q"]},
        {"release_digest": "sha256:" + "cd" * 32},
    ],
)
def test_every_defining_value_makes_another_benchmark(change: dict[str, Any]) -> None:
    assert Benchmark.of(**{**BASE, **change}).key != Benchmark.of(**BASE).key


def test_name_says_the_benchmark_in_words() -> None:
    assert Benchmark.of(**BASE).name == (
        "release abababababab, forms 8-K, 2023-03-01..03-10, hold 5, clocks leaky/dump/pit"
    )


def test_window_across_years_keeps_both_years() -> None:
    assert window_words("2023-12-20", "2024-01-05") == "2023-12-20..2024-01-05"


def test_crafted_keys_are_not_keys() -> None:
    assert not is_key("../../etc")
    assert not is_key("AB" * 16)
    assert not is_key("ab" * 17)


def test_of_config_reads_a_receipt_config() -> None:
    config = {"forms": ["8-K"], "start": "2023-03-01", "end": "2023-03-10",
              "hold_sessions": 5, "clocks": ["leaky", "dump", "pit"], "agent": "x"}  # fmt: skip
    assert Benchmark.of_config(DIGEST, config) == Benchmark.of(**BASE)
