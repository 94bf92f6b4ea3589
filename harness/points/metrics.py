"""Judged-point metrics under seed 004's rules: three outcomes, harness errors outside
every denominator, accuracy with its interval, the error classes as a distribution,
unbiased pass@k, and agreement corrected for chance."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

CLASSES = (
    "completely_correct",
    "numeric_factual_error",
    "non_numeric_factual_error",
    "analysis_assumption_error",
    "analysis_logic_error",
    "other_error",
)
ERROR_CLASSES = CLASSES[1:]
PASS, FAIL, HARNESS_ERROR = "PASS", "FAIL", "HARNESS_ERROR"


def outcome(judged_class: str | None) -> str:
    """PASS for completely_correct, FAIL for any error class, HARNESS_ERROR for no usable
    verdict (never the agent's result)."""
    if judged_class is None:
        return HARNESS_ERROR
    if judged_class not in CLASSES:
        raise ValueError(f"{judged_class!r} is not one of the six classes")
    return PASS if judged_class == CLASSES[0] else FAIL


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of ``successes`` out of ``n``."""
    if n <= 0:
        raise ValueError("an interval needs at least one judged answer")
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): the chance that k of n answers, drawn without
    replacement, hold at least one of the c correct ones. k > n is refused; when fewer
    than k answers are wrong a pass is guaranteed and the estimate is exactly 1.0."""
    if not 0 <= c <= n:
        raise ValueError(f"{c} correct answers out of {n}")
    if k < 1 or k > n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n (n = {n})")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def fleiss_kappa(ratings: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa over items each rated by the same number of raters (at least two):
    agreement beyond what the raters' class frequencies give by chance. None (undefined,
    not 1.0) when every rating is one class: chance agreement is then total, and kappa's
    denominator is zero."""
    if not ratings:
        raise ValueError("kappa needs at least one rated item")
    raters = len(ratings[0])
    if raters < 2 or any(len(r) != raters for r in ratings):
        raise ValueError("every item needs the same number of ratings, at least two")
    items = len(ratings)
    totals: Counter[str] = Counter()
    observed = 0.0
    for item in ratings:
        counts = Counter(item)
        totals.update(counts)
        observed += (sum(v * v for v in counts.values()) - raters) / (raters * (raters - 1))
    observed /= items
    expected = sum((v / (items * raters)) ** 2 for v in totals.values())
    if len(totals) == 1:
        return None
    return (observed - expected) / (1 - expected)


def raw_agreement(ratings: Sequence[Sequence[str]]) -> float:
    """The share of items whose ratings all agree."""
    return sum(1 for r in ratings if len(set(r)) == 1) / len(ratings)


def summary(classes: Sequence[str | None]) -> dict[str, object]:
    """Outcomes, accuracy over the judged answers (harness errors excluded and shown
    beside), its 95% Wilson interval, and the six classes as a distribution."""
    outcomes = Counter(outcome(c) for c in classes)
    judged = outcomes[PASS] + outcomes[FAIL]
    counts = Counter(c for c in classes if c is not None)
    low_high = wilson(outcomes[PASS], judged) if judged else None
    return {
        "pass": outcomes[PASS],
        "fail": outcomes[FAIL],
        "harness_error": outcomes[HARNESS_ERROR],
        "judged": judged,
        "accuracy": outcomes[PASS] / judged if judged else None,
        "accuracy_interval_95": list(low_high) if low_high else None,
        "class_counts": {c: counts.get(c, 0) for c in CLASSES},
    }


def class_shares(
    class_counts: dict[str, int],
) -> dict[str, tuple[float, float, float] | None]:
    """Each of the six classes' share of the judged answers with its 95% Wilson interval
    (None for every class when nothing was judged)."""
    judged = sum(class_counts.get(c, 0) for c in CLASSES)
    if not judged:
        return dict.fromkeys(CLASSES)
    return {
        c: (class_counts.get(c, 0) / judged, *wilson(class_counts.get(c, 0), judged))
        for c in CLASSES
    }


def harness_error_range(passed: int, failed: int, errors: int) -> tuple[float, float] | None:
    """The accuracy were every harness error resolved: (every one a fail, every one a
    pass), each over all ``passed + failed + errors`` answers. The accuracy over the
    judged answers lies inside it; None when there is no answer at all."""
    if min(passed, failed, errors) < 0:
        raise ValueError(f"counts cannot be negative: {passed}, {failed}, {errors}")
    scored = passed + failed + errors
    if not scored:
        return None
    return passed / scored, (passed + errors) / scored


def rank_ranges(intervals: Sequence[tuple[float, float]]) -> list[tuple[int, int]]:
    """Each interval's range of ranks (1 = best, higher is better) among ``intervals``:
    it ranks below every interval wholly above it and above every interval wholly below
    it; where intervals overlap, the order between them is not known, and the range says
    so rather than pick one."""
    ranges = []
    for n, (low, high) in enumerate(intervals):
        others = [iv for m, iv in enumerate(intervals) if m != n]
        above = sum(1 for other_low, _ in others if other_low > high)
        not_below = sum(1 for _, other_high in others if other_high >= low)
        ranges.append((1 + above, 1 + not_below))
    return ranges
