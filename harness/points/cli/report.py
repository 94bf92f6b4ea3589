"""The lines the judge and verify commands print about a judged set: its judge, its
controls' verdict on it, its figures, each made safe for a terminal."""

from __future__ import annotations

import re
from typing import Any

from harness.points.demo import DEMO_MODEL
from harness.points.gates import USABLE
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL
from harness.points.markdown import Point
from harness.points.metrics import CLASSES
from harness.points.model import AnswerSet, Controls, JudgedSet, Reliability


def unpinned_lines(body: JudgedSet) -> list[str]:
    """A line saying the judge is not the seed's pinned one (none when it is), and, for
    the demo model, that its verdicts are a string rule."""
    if body.capabilities.get("judge_pinned"):
        return []
    judge = body.judge
    named = f"{judge.model}/{judge.effort}"
    returned = ", ".join(judge.models_returned) or "none"
    lines = [
        f"  judge unpinned ({named}, returned {returned}): not the seed's pinned judge "
        f"({DEFAULT_MODEL}/{DEFAULT_EFFORT}); these figures do not compare with a pinned "
        "judge's and are not for ranking"
    ]
    if DEMO_MODEL in (judge.model, *judge.models_returned):
        lines.append(
            f"  DEMO: {DEMO_MODEL} is not a model; its verdicts are a fixed string rule, "
            "for trying the commands only"
        )
    return lines


def kappa_text(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def reliability_lines(reliability: Reliability) -> tuple[bool, list[str]]:
    """Whether the judge's controls make the set a result, and the lines that say so:
    the rules it broke, each named, or the rules it met."""
    rules, found = reliability.rules, reliability.figures
    if reliability.status == USABLE:
        kappa = found.fleiss_kappa
        return True, [
            f"  usable: the judge's controls held (negative controls failed on "
            f"{found.negative_controls_failed} of {found.points} point(s), at most "
            f"{rules.negative_control_failure_share_max:.0%}; flip rate "
            f"{found.flip_rate:.2f}, at most {rules.flip_rate_max:.2f}; kappa "
            + (f"{kappa:.2f}, at least {rules.fleiss_kappa_min:.2f})" if kappa is not None
               else "undefined (every rating one class): the flip rate decides)")
        ]  # fmt: skip
    return False, [
        "JUDGE UNRELIABLE: this judged set is not a result and nothing may rank it; it broke:",
        *(f"  - {rule}" for rule in reliability.broken),
    ]


def _figure_lines(figures: dict[str, Any]) -> list[str]:
    """A usable set's figures: its counts, accuracy and interval, the range over its
    harness errors, pass@k and the six classes."""
    errors = figures["harness_errors"]
    lines = [
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  HARNESS_ERROR "
        f"{figures['harness_error']} (agent {errors['agent']}, judge {errors['judge']}; "
        "outside every denominator)"
    ]
    if figures["accuracy"] is not None:
        low, high = figures["accuracy_interval_95"]
        lines.append(
            f"  accuracy {figures['pass']}/{figures['judged']} = {figures['accuracy']:.4f}  "
            f"95% Wilson [{low:.4f}, {high:.4f}] (per answer"
            + ("" if figures["accuracy_interval_basis"].endswith("(one per point)") else
               "; too narrow with several samples per point: read pass@k")
            + ")"
        )  # fmt: skip
    if figures["harness_error"]:
        low, high = figures["accuracy_range_over_harness_errors"]
        lines.append(
            f"  were the {figures['harness_error']} harness error(s) resolved: accuracy "
            f"between {low:.4f} and {high:.4f}"
        )
    for k, value in figures["pass_at_k"].items():
        if value["value"] is not None:
            lines.append(f"  pass@{k} {value['value']:.4f} over {value['points']} point(s)")
    return lines + [f"  {name:<27} {figures['class_counts'][name]}" for name in CLASSES]


def _withheld_lines(figures: dict[str, Any]) -> list[str]:
    """What an unreliable set shows of its verdicts: how many there are and how many got
    none; no count, share or rate of its classes (a failed judge's figures are none)."""
    errors = figures["harness_errors"]
    return [
        f"  {figures['judged'] + figures['harness_error']} answer(s) judged by a judge that "
        f"failed its controls: no figure of its verdicts is shown; HARNESS_ERROR "
        f"{figures['harness_error']} (agent {errors['agent']}, judge {errors['judge']})"
    ]


def judged_lines(figures: dict[str, Any], controls: Controls, usable: bool = True) -> list[str]:
    lines = _figure_lines(figures) if usable else _withheld_lines(figures)
    flagged = [n.point_id for n in controls.negative if n.flagged]
    lines.append(
        f"  controls: positive passed on {len(controls.positive)} point(s); negative "
        f"flagged on {', '.join(flagged) if flagged else 'none'}"
    )
    steady = controls.stability
    if steady.items:
        lines.append(
            f"  stability: {steady.items} answer(s) x {steady.repeats}: flip rate "
            f"{steady.flip_rate:.2f}  raw agreement {steady.raw_agreement:.2f}  "
            f"Fleiss kappa {kappa_text(steady.fleiss_kappa)}"
            + (
                f"  ({len(steady.items_with_harness_errors)} set apart: judge errors)"
                if steady.items_with_harness_errors
                else ""
            )
        )
    return lines


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(line: str) -> str:
    """A line as a terminal should show it: control characters written as escapes, so
    text from a file cannot move the cursor over what was verified."""
    return CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode(), line)


def suite_line(body: AnswerSet, points: list[Point], folder: str) -> str:
    ran = body.point_count
    whole = "the whole suite" if ran == len(points) else "a PARTIAL suite"
    failed = body.summary.harness_error
    answers = f"answers {body.status}" + (f": {failed} not given" if failed else "")
    return f"  suite: {ran} of the {len(points)} point(s) in {folder} ({whole}); {answers}"
