"""What the site's job states mean to a submitter, and waiting for the last one.

A run's verification job moves ``received -> verifying -> verified | mismatch |
harness_error | unknown_release`` (``verifying -> received`` when the site retries its own
failure). An answer set's judge job moves ``queued -> running -> done | control_failed |
harness_error``, and a done job's judged set is ``usable`` or ``judge_unreliable``.

Each final state has its exit code (``harness.outcomes``): 0 verified (or judged with a
result), 1 refuted (a hash or score differs from what the site re-derived: the check is
named), 3 the site's problem (its verifier failed, it lost the release, its judge broke
its controls, nothing will judge the answers) or no verdict in time. A refusal (2) comes
before any job: the upload itself is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.outcomes import EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK
from harness.submit.client import SiteFailure, printable


@dataclass(frozen=True)
class Verdict:
    """One state as the command says it: ``code`` is the exit code once ``final``."""

    state: str
    words: str
    final: bool = False
    code: int = EXIT_INTERNAL


class NoVerdict(Exception):
    """The wait ended with no final state: the time ran out."""

    def __init__(self, last: Verdict | None, waited: float, error: str) -> None:
        said = f"; last state {last.state}" if last else ""
        failed = f"; last failure: {error}" if error else ""
        super().__init__(f"no verdict after {waited:.0f} s{said}{failed}")
        self.last = last


def _text(job: Mapping[str, Any], key: str) -> str:
    value = job.get(key)
    return printable(value if isinstance(value, str) else "", 500)


def run_verdict(job: Mapping[str, Any]) -> Verdict:
    """A verification job (``GET /api/jobs/<id>/``) in words."""
    state = _text(job, "state") or "unknown"
    message = _text(job, "message")
    if state == "received":
        return Verdict(state, "received: stored, waiting for a worker to verify it")
    if state == "verifying":
        return Verdict(state, "verifying: a worker is re-deriving every hash and score")
    if state == "verified":
        return Verdict(state, "verified: every hash and score re-derived and equal", True, EXIT_OK)
    if state == "mismatch":
        check = _text(job, "mismatch_check") or "a check"
        return Verdict(
            state,
            f"mismatch: {check} differs from what the site re-derived (refuted; the run's "
            "page shows the claim beside what was re-derived)",
            True,
            EXIT_MISMATCH,
        )
    if state == "harness_error":
        return Verdict(
            state,
            f"harness_error: the site's verifier failed ({message or 'no message'}); a "
            "problem of the site, not a verdict on the run",
            True,
            EXIT_INTERNAL,
        )
    if state == "unknown_release":
        return Verdict(
            state,
            f"unknown_release: {message or 'the site does not hold the release'}; a problem "
            "of the site, not a verdict on the run",
            True,
            EXIT_INTERNAL,
        )
    return Verdict(state, f"{state}: a state this pit-harness does not know; still waiting")


def judge_verdict(job: Mapping[str, Any], judged: Mapping[str, Any] | None) -> Verdict:
    """A judge job (its progress JSON) and, once done, its judged set (the API's)."""
    state = _text(job, "state") or "unknown"
    message = _text(job, "message")
    if state == "queued":
        return Verdict(state, "queued: waiting for a worker to judge the answers")
    if state == "running":
        return Verdict(state, "running: the site's judge is judging the answers")
    if state == "control_failed":
        return Verdict(
            state,
            f"control_failed: {message or 'a positive control failed'}; nothing was judged "
            "(a point or the site's judge is broken, not the answers)",
            True,
            EXIT_INTERNAL,
        )
    if state == "harness_error":
        return Verdict(
            state,
            f"harness_error: the site's judging failed ({message or 'no message'}); a "
            "problem of the site, not a verdict on the answers",
            True,
            EXIT_INTERNAL,
        )
    if state != "done":
        return Verdict(state, f"{state}: a state this pit-harness does not know; still waiting")
    if judged is None:
        raise SiteFailure("the judge job is done but the site names no judged set")
    status = _text(judged, "status")
    if status == "judge_unreliable":
        return Verdict(
            status,
            f"judge_unreliable: {_text(judged, 'figures_withheld_because')}; no figure is "
            "shown (the site's judge failed its controls, not a verdict on the answers)",
            True,
            EXIT_INTERNAL,
        )
    return Verdict(status or state, f"judged: {_figures(judged)}", True, EXIT_OK)


def _figures(judged: Mapping[str, Any]) -> str:
    def count(key: str) -> str:
        value = judged.get(key)
        return str(value) if isinstance(value, int) else "?"

    accuracy, low, high = (judged.get(k) for k in ("accuracy", "accuracy_low", "accuracy_high"))
    said = "accuracy n/a"
    if all(isinstance(x, float | int) for x in (accuracy, low, high)):
        said = f"accuracy {accuracy:.1%} (95% interval {low:.1%} to {high:.1%})"
    return (
        f"{said}, {count('pass')} PASS, {count('fail')} FAIL, "
        f"{count('harness_error')} harness errors (outside the denominator)"
    )


Poll = Callable[[], Verdict]


def wait_for(
    poll: Poll,
    *,
    timeout: float,
    said: Callable[[Verdict], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Verdict:
    """Poll until a final state, telling each state once, when it is first seen (a job
    the site retries goes back to a state already told, which is not told again).

    A failure to read the state (the site down a moment, a 5xx) is waited through until
    the time runs out; the last one is said then (``NoVerdict``)."""
    start = clock()
    last: Verdict | None = None
    told: set[str] = set()
    error = ""
    pause = 0.25
    while True:
        try:
            verdict = poll()
        except SiteFailure as exc:
            error = str(exc)
        else:
            error = ""
            if verdict.state not in told:
                told.add(verdict.state)
                said(verdict)
            last = verdict
            if verdict.final:
                return verdict
        waited = clock() - start
        if waited >= timeout:
            raise NoVerdict(last, waited, error)
        sleep(min(pause, timeout - waited))
        pause = min(pause * 1.5, 5.0)
