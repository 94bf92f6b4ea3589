"""A run's benchmark: what must be the same for two runs to be ranked against each other.

A benchmark is (release, forms, window, hold, clocks): the release's content digest, the
forms the run read, its window's first and last day, the sessions a position is held, and
the clocks it walked; and, for a run whose agent ran under a fault plan, that plan's
digest (such a run answers another question, so it is ranked only beside runs under the
same plan; a run without one keeps the key it always had). Absolute returns belong to their window and their rules, so a
ranking exists only inside one benchmark. ``benchmark_key`` is its stable identity (the
same on the submitter's machine and on the site), ``benchmark_name`` its name in words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness import canonical
from harness.vocabulary import CLOCKS

# 128 bits of sha256: no two benchmarks can be made to share a key (a birthday search
# would need 2**64 tries)
KEY_HEX = 32
KEY = re.compile(rf"[0-9a-f]{{{KEY_HEX}}}")


def _clock_order(clock: str) -> tuple[int, str]:
    return (CLOCKS.index(clock), clock) if clock in CLOCKS else (len(CLOCKS), clock)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's defining values, normalised: forms sorted and unique, clocks in the
    harness's order and unique, the digest in ``sha256:<hex>`` form."""

    release_digest: str
    forms: tuple[str, ...]
    start: str
    end: str
    hold_sessions: int
    clocks: tuple[str, ...]
    fault_plan: str | None = None  # the plan's sha256 hex, for a run under a fault plan

    @classmethod
    def of(
        cls,
        *,
        release_digest: str,
        forms: Iterable[str],
        start: str,
        end: str,
        hold_sessions: int,
        clocks: Iterable[str],
        fault_plan: str | None = None,
    ) -> Benchmark:
        digest = release_digest.lower()
        digest = digest if digest.startswith("sha256:") else f"sha256:{digest}"
        return cls(
            release_digest=digest,
            forms=tuple(sorted(set(forms))),
            start=start,
            end=end,
            hold_sessions=int(hold_sessions),
            clocks=tuple(sorted(set(clocks), key=_clock_order)),
            fault_plan=fault_plan or None,
        )

    @classmethod
    def of_config(cls, release_digest: str, config: dict[str, Any]) -> Benchmark:
        """The benchmark of a receipt's resolved ``config`` (its forms, start, end,
        hold_sessions and clocks) over the release ``release_digest``."""
        return cls.of(
            release_digest=release_digest,
            forms=config["forms"],
            start=config["start"],
            end=config["end"],
            hold_sessions=config["hold_sessions"],
            clocks=config["clocks"],
            fault_plan=(config.get("fault_plan") or {}).get("sha256"),
        )

    def values(self) -> dict[str, Any]:
        return {
            "release": self.release_digest,
            "forms": list(self.forms),
            "start": self.start,
            "end": self.end,
            "hold_sessions": self.hold_sessions,
            "clocks": list(self.clocks),
            **({} if self.fault_plan is None else {"fault_plan": self.fault_plan}),
        }

    @property
    def key(self) -> str:
        """The benchmark's key: the first ``KEY_HEX`` hex digits of the sha256 of its
        values as canonical JSON."""
        return hashlib.sha256(canonical.dumps(self.values()).encode()).hexdigest()[:KEY_HEX]

    @property
    def name(self) -> str:
        """In words: "release 3f2a9c1d04be, forms 8-K, 2023-03-01..03-10, hold 5,
        clocks leaky/dump/pit"."""
        short = self.release_digest.removeprefix("sha256:")[:12]
        return (
            f"release {short}, forms {'/'.join(self.forms) or 'none'}, "
            f"{window_words(self.start, self.end)}, hold {self.hold_sessions}, "
            f"clocks {'/'.join(self.clocks) or 'none'}"
            + ("" if self.fault_plan is None else f", under fault plan {self.fault_plan[:12]}")
        )


def window_words(start: str, end: str) -> str:
    """``2023-03-01..03-10``: the end without its year when the start has the same one
    (never without its month: a day alone would read as a count)."""
    if start[:4] == end[:4] and len(start) == len(end) == 10:
        return f"{start}..{end[5:]}"
    return f"{start}..{end}"


def is_key(text: str) -> bool:
    """Whether ``text`` is written as a benchmark key (32 lowercase hex digits)."""
    return KEY.fullmatch(text) is not None
