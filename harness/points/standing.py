"""The points board across sets: formal results ranked, everything else listed apart.

A **formal** result is a judgment of answers committed before their labels were public
(answers received while their set was sealed, on a set since revealed), by the pinned judge
with its controls held. Only formal results are ranked; a public set's results, answers
given after a reveal and judgments that are not rankable are listed apart, each saying why,
and never ranked with them.

A **family** is whoever committed the answers and the model they name (a submitter and a
model, as the run board's family is an owner and an agent). On each set, a family's
**first** committed answer set is its result there, whatever it scores; the family's later
answer sets on that set are **attempts**: counted, listed apart, never ranked and never in
place of the first (PITFALL's rule: a failed attempt stays in the cohort and is not rerun
under the same identity). Nothing is chosen from among attempts, so no interval needs
widening for the choice. A first answer set whose judgment is not usable (its judge failed
its controls, or none has judged it yet) holds its place unscored: the harness's problem,
never the answers' result, and never a reason to count a later attempt instead.

A **row** is one configuration (the answering model, its effort, its harness and tools)
of one family: its first answer sets' judgments pooled over every set they answered
(different sets hold different points, so their answers are independent), accuracy over
the judged answers with its Wilson interval, each class's share with its own interval,
harness errors beside, sets counted, attempts counted. Rows rank by their intervals
(``rank_ranges``: a range where intervals overlap).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import canonical
from harness.points.metrics import CLASSES, rank_ranges, wilson


def configuration(experiment: dict[str, Any]) -> dict[str, Any]:
    """What an answer set records of how it was answered, as a row tells them apart:
    the model and effort, the harness and its transport, the tools offered."""
    agent = experiment.get("agent") or {}
    harness = experiment.get("harness") or {}
    return {
        "model": str(agent.get("model") or "unnamed model"),
        "effort": agent.get("effort"),
        "harness": harness.get("name"),
        "transport": harness.get("transport"),
        "tools": experiment.get("tools") or [],
    }


def configuration_key(experiment: dict[str, Any]) -> str:
    """A configuration's identity: its canonical digest."""
    return canonical.digest(configuration(experiment))


@dataclass(frozen=True)
class Result:
    """One answer set on one set, with the judgment that scores it (if any)."""

    answer_set: str  # an id the caller resolves (the site: the answer set's pk)
    family: str  # who committed it: a submitter, or the site's workers
    experiment: dict[str, Any]
    point_set: str
    committed: str  # when it was committed, sortable (ISO 8601 with a tie-breaker)
    # formal: received while its set was sealed, and the set is revealed since
    before_reveal: bool
    # the judgment that scores it: a summary (harness.points.metrics.summary) and
    # whether it is rankable (pinned judge, controls held); None: no usable judgment
    summary: dict[str, Any] | None = None
    rankable: bool = False
    why_not_rankable: str = ""
    judged_set: str = ""
    usage: dict[str, Any] = field(default_factory=dict)  # the answer set's summary

    @property
    def model(self) -> str:
        return str(configuration(self.experiment)["model"])


@dataclass
class Row:
    family: str
    configuration: dict[str, Any]
    point_sets: list[str] = field(default_factory=list)
    answer_sets: list[str] = field(default_factory=list)
    judged_sets: list[str] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)  # first answer sets without a judgment
    unscored_because: list[str] = field(default_factory=list)  # why, one per unscored
    attempts: int = 0  # later answer sets of the family on the same sets: never counted
    passed: int = 0
    failed: int = 0
    harness_error: int = 0
    class_counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    tokens: dict[str, int] = field(default_factory=dict)
    tool_calls: int = 0
    rank: str | None = None

    @property
    def judged(self) -> int:
        return self.passed + self.failed

    @property
    def accuracy(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.passed, self.judged) if self.judged else None

    def class_intervals(self) -> dict[str, tuple[float, float, float] | None]:
        """Each class's share of the judged answers, with its Wilson interval."""
        if not self.judged:
            return dict.fromkeys(CLASSES)
        return {c: (n / self.judged, *wilson(n, self.judged)) for c, n in self.class_counts.items()}


@dataclass(frozen=True)
class Apart:
    """A result listed apart from the ranked rows, and why."""

    result: Result
    because: str


@dataclass
class Board:
    rows: list[Row]  # formal, ranked where they have judged answers
    apart: list[Apart]  # informal: never ranked with the rows


def _family_of(result: Result) -> tuple[str, str]:
    return result.family, result.model


def why_informal(result: Result) -> str:
    """Why a result (a family's first on its set) is not formal, or empty."""
    if not result.before_reveal:
        return (
            "its answers were given when the labels were public (a public set, or after the reveal)"
        )
    if result.summary is None:
        return result.why_not_rankable or "not judged yet"
    if not result.rankable:
        return result.why_not_rankable or "its judgment is not rankable"
    return ""


def points_board(results: Iterable[Result]) -> Board:
    """The board over ``results`` (every answer set of every set, judged or not)."""
    firsts: dict[tuple[tuple[str, str], str], Result] = {}
    apart: list[Apart] = []
    later: Counter[tuple[str, str, str]] = Counter()  # (family, model, configuration)
    for result in sorted(results, key=lambda r: (r.committed, r.answer_set)):
        key = (_family_of(result), result.point_set)
        if not result.before_reveal:
            apart.append(Apart(result, why_informal(result)))
            continue
        if key in firsts:
            first = firsts[key]
            apart.append(
                Apart(result, f"a later attempt: answer set {first.answer_set} was this "
                      "family's first on this set, and only the first counts")
            )  # fmt: skip
            later[(*_family_of(first), configuration_key(first.experiment))] += 1
            continue
        firsts[key] = result
    rows: dict[tuple[str, str], Row] = {}
    for result in firsts.values():
        config = configuration_key(result.experiment)
        row = rows.setdefault(
            (result.family, config), Row(result.family, configuration(result.experiment))
        )
        row.point_sets.append(result.point_set)
        row.answer_sets.append(result.answer_set)
        because = why_informal(result)
        if because:
            row.unscored.append(result.answer_set)
            row.unscored_because.append(because)
            apart.append(Apart(result, f"the family's first on this set, unscored: {because}"))
            continue
        assert result.summary is not None
        _pool(row, result)
    for (family, _, config), n in later.items():
        if (family, config) in rows:
            rows[(family, config)].attempts += n
    ranked = sorted(rows.values(), key=_order)
    _rank([r for r in ranked if r.judged])
    return Board(rows=ranked, apart=apart)


def _pool(row: Row, result: Result) -> None:
    summary = result.summary or {}
    row.judged_sets.append(result.judged_set)
    row.passed += int(summary.get("pass") or 0)
    row.failed += int(summary.get("fail") or 0)
    row.harness_error += int(summary.get("harness_error") or 0)
    for c, n in (summary.get("class_counts") or {}).items():
        row.class_counts[c] = row.class_counts.get(c, 0) + int(n)
    for k, v in (result.usage.get("tokens") or {}).items():
        row.tokens[k] = row.tokens.get(k, 0) + int(v)
    row.tool_calls += int(result.usage.get("tool_calls") or 0)


def _order(row: Row) -> tuple[Any, ...]:
    interval = row.interval
    return (
        interval is None,
        -(interval[0] if interval else 0.0),
        row.family,
        row.configuration["model"],
    )


def _rank(rows: Sequence[Row]) -> None:
    ranges = rank_ranges([r.interval for r in rows if r.interval is not None])
    for row, (best, worst) in zip(rows, ranges, strict=True):
        row.rank = f"{best}" if best == worst else f"{best}-{worst}"
