"""``pitfall-suite``: PITFALL's sealed-suite and live-shadow artifacts, verified offline,
each on its own and those given together against each other, and each suite summarized."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

import msgspec

from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.points.cli.report import printable
from harness.points.pitfall_cohort import SuiteSummary, check_together, summarize
from harness.points.pitfall_records import (
    LABEL,
    PLAN,
    PLAN_COMMITMENT,
    RESOLUTION,
    SEAL,
    SUITE,
    PitfallArtifactError,
)
from harness.points.pitfall_suite import Verified, read_file

MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError)
TIMESTAMP_NOTE = (
    "a commitment binds bytes, not a time: PITFALL asks for each public commitment and seal "
    "to be timestamped on an external append-only surface; nothing here proves when they existed"
)


def _read(path: str, now: datetime) -> Verified[Any] | PitfallArtifactError:
    try:
        return read_file(path, now=now)
    except PitfallArtifactError as exc:
        return exc
    except OSError as exc:
        return PitfallArtifactError(path, "unreadable", exc.strerror or str(exc))
    except MALFORMED as exc:  # a shape no rule foresaw: refused, never a traceback
        return PitfallArtifactError(path, "malformed", f"{type(exc).__name__}: {exc}")


def _about(artifact: Verified[Any]) -> str:
    """What one verified artifact is, in a few words."""
    r, kind = artifact.record, artifact.artifact_type
    if kind == PLAN_COMMITMENT:
        return f"suite {r.suite_id}: {r.case_count} case(s) registered {r.registered_at}"
    if kind == PLAN:
        return f"suite {r.suite_id}: the private plan, {len(r.cases)} case(s)"
    if kind == SUITE:
        return f"suite {r.suite_id}: {len(r.members)} member(s), {r.outcome_status}"
    if kind == SEAL:
        done = sum(a.status == "completed" for a in r.results)
        scenario = r.scenario_source
        return (
            f"scenario {scenario.get('id')} as of {scenario.get('as_of')}: "
            f"{len(r.results)} attempt(s), {done} completed"
        )
    outcome = "event" if r.event_occurred else "no event"
    if kind == LABEL:
        return f"scenario {r.scenario_id}: {outcome}, resolved {r.resolved_at} (no commitment)"
    assert kind == RESOLUTION
    return f"scenario {r.scenario_id}: {outcome}, resolved {r.resolved_at}"


def _case_line(case: Any) -> str:
    seal = "no seal yet"
    if case.seal_commitment_sha256:
        checked = "checked" if case.seal_checked else "not given"
        seal = (
            f"{case.completed_count}/{case.attempt_count} completed, "
            f"seal {case.seal_commitment_sha256} ({checked})"
        )
    state = "unresolved"
    if case.resolution:
        outcome = "event" if case.resolution.event_occurred else "no event"
        state = f"resolved {case.resolution.resolved_at}: {outcome}"
    return (
        f"    {case.slot_id}  {case.family}  {case.scenario_id}  as of {case.as_of}, "
        f"window ends {case.window_end}; {seal}; {state}"
    )


def _summary_lines(summary: SuiteSummary) -> list[str]:
    families = ", ".join(f"{name} {n}" for name, n in summary.family_counts.items())
    models = summary.required_models and f" ({', '.join(summary.required_models)})"
    effort = f" at {summary.reasoning_effort} effort" if summary.reasoning_effort else ""
    lines = [
        f"suite {summary.suite_id}: {summary.stage}; registered {summary.registered_at or 'at a time no artifact given says'}"
        + (f", finalized {summary.created_at}" if summary.created_at else ""),
        f"  {summary.case_count} case(s) in {len(summary.family_counts)} famil(ies) "
        f"({families}); as of {summary.first_as_of} onward, windows end by "
        f"{summary.last_window_end}",
        f"  {summary.required_model_count} model(s){models or ''} x {summary.repeats} "
        f"repeat(s){effort}"
        + (f"; primary metric {summary.primary_metric}" if summary.primary_metric else ""),
    ]
    if summary.stage != "registered":
        status = summary.outcome_status or "not finalized"
        lines.append(
            f"  outcome {status}: {summary.sealed_count} of {summary.case_count} sealed, "
            f"{summary.resolved_count} of {summary.case_count} resolved"
        )
        lines += [_case_line(case) for case in summary.cases]
    return lines


def _report(
    paths: list[str], read: list[Verified[Any] | PitfallArtifactError]
) -> tuple[dict[str, Any], list[str]]:
    """The machine report and the lines a person reads."""
    verified = [item for item in read if isinstance(item, Verified)]
    refused = [item for item in read if isinstance(item, PitfallArtifactError)]
    together = check_together(verified)
    summaries = summarize(verified)
    failures = refused + together.failures
    lines = []
    for path, item in zip(paths, read, strict=True):
        if isinstance(item, Verified):
            lines.append(f"verified  {path}  {item.artifact_type}  sha256 {item.digest}")
            lines.append(f"  {_about(item)}")
        else:
            lines.append(f"REFUSED   {item}")
    lines += [f"held      {said}" for said in together.held]
    lines += [f"FAILED    {failure}" for failure in together.failures]
    for summary in summaries:
        lines += _summary_lines(summary)
    if verified:
        lines.append(f"note: {TIMESTAMP_NOTE}")
    lines.append(
        f"ALL HOLD: {len(verified)} artifact(s), {len(together.held)} check(s) between them"
        if not failures
        else f"NOT verified: {len(failures)} failure(s)"
    )
    machine = {
        "ok": not failures,
        "artifacts": [
            {
                "file": path,
                "artifact_type": item.artifact_type,
                "verified": isinstance(item, Verified),
                "payload_sha256": item.digest if isinstance(item, Verified) else None,
                "error": None if isinstance(item, Verified) else item.rule,
            }
            for path, item in zip(paths, read, strict=True)
        ],
        "held": together.held,
        "failures": [str(failure) for failure in failures],
        "suites": msgspec.to_builtins(summaries),
        "note": TIMESTAMP_NOTE,
    }
    return machine, lines


def cmd_pitfall_suite(args: argparse.Namespace) -> int:
    """Verify each file, then the files against each other; exit 0 only when all hold."""
    now = datetime.now(UTC)
    read = [_read(path, now) for path in args.files]
    machine, lines = _report(args.files, read)
    if args.json:
        print(json.dumps(machine, ensure_ascii=False, indent=2))
    else:
        print("\n".join(printable(line) for line in lines))
    return EXIT_OK if machine["ok"] else EXIT_MISMATCH


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    verb = verbs.add_parser(
        "pitfall-suite",
        help="verify PITFALL's sealed-suite and live-shadow artifacts offline, each and "
        "together, and summarize each suite",
        description="Verify PITFALL's sealed-suite artifacts as its own tools write them: "
        f"the private plan ({PLAN}), its public commitment ({PLAN_COMMITMENT}), the "
        f"finalized suite ({SUITE}), live-shadow seals ({SEAL}), labels ({LABEL}) and "
        f"resolutions ({RESOLUTION}). Each file's commitment (a label has none) is recomputed "
        "(sha256 over json-sort-keys-utf8-v1; any other, or one changed byte, is refused) and each "
        "artifact checked as PITFALL's verifier checks it; the earlier finagentbench_* "
        "namespace is refused. Files given together are one cohort and are checked against "
        "each other: the public commitment against its plan, the suite against both, each "
        "seal against its slot (one per slot, the policy's matrix and searches, not before "
        "registration), each resolution and label against its seal; a file that matches "
        "nothing given beside it is a failure. Prints one line per "
        "artifact, each check between them, and a summary per suite. Exit 0 when everything "
        "holds, 1 naming each failure.",
    )
    verb.add_argument("files", nargs="+", metavar="FILE", help="a PITFALL artifact (JSON)")
    verb.add_argument(
        "--json", action="store_true", help="print the report as JSON (the same checks)"
    )
    verb.set_defaults(func=cmd_pitfall_suite)
