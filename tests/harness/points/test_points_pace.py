"""The rate limit a judge or answer run shares across its threads."""

from __future__ import annotations

import threading

import pytest

from harness.points.pace import Pace


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_calls_are_spaced_evenly_and_never_burst() -> None:
    clock = FakeClock()
    pace = Pace(120, clock=clock, sleep=clock.sleep)  # one call every half second
    for _ in range(4):
        pace.wait()
    assert clock.slept == [0.5, 1.0, 1.5]  # the first starts at once, the rest queue up
    clock.now += 10  # a quiet spell: no credit is saved up for a burst
    pace.wait()
    pace.wait()
    assert clock.slept[3:] == [0.5]


def test_threads_take_distinct_slots() -> None:
    clock = FakeClock()
    pace = Pace(60, clock=clock, sleep=clock.sleep)
    threads = [threading.Thread(target=pace.wait) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(clock.slept) == [float(n) for n in range(1, 8)]


@pytest.mark.parametrize("rate", [0, -1])
def test_a_pace_is_positive(rate: float) -> None:
    with pytest.raises(ValueError):
        Pace(rate)
