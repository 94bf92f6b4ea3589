"""Reads of the commitment log and its commitments: the log as published (each entry's
stored body exactly as it was hashed, never rebuilt from the other columns), its head,
and the commitments with their forward runs, in a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet

from harness.forward.log import FORMAT
from pitweb.core.params import id_or_none
from pitweb.execution.models import RegisteredAgent
from pitweb.forward.models import Commitment, ForwardRun, LogEntry

# the commitments a page lists, newest first (the log itself lists every entry)
LISTED = 500


def log_entries() -> QuerySet[LogEntry]:
    return LogEntry.objects.order_by("seq")


def log_head() -> dict[str, Any]:
    """The log's head, ``{"seq", "digest"}`` (``0`` and None: the empty log): the last
    row's stored digest, one indexed query."""
    last = LogEntry.objects.order_by("-seq").only("seq", "digest").first()
    return {"seq": 0, "digest": None} if last is None else {"seq": last.seq, "digest": last.digest}


def log_document() -> dict[str, Any]:
    """The log as ``harness.forward.log.document`` lays it out, over the stored bodies as
    they are: a row changed behind the site's back is published changed, and
    ``verify_log`` (or ``pit-harness commitments verify``) names it. The head is the
    stored digest of the last row, as every page states it."""
    return {
        "log": FORMAT,
        "entries": [row.body for row in log_entries()],
        "head": log_head(),
    }


def _with_runs(commitments: QuerySet[Commitment]) -> QuerySet[Commitment]:
    runs = ForwardRun.objects.select_related("release", "run").order_by("kind", "start", "pk")
    return commitments.select_related(
        "entry", "withdrawal", "agent", "owner", "release"
    ).prefetch_related(Prefetch("runs", queryset=runs, to_attr="forward_runs"))


def public_commitments() -> QuerySet[Commitment]:
    """Every commitment, live and withdrawn, newest first: the log is public."""
    return _with_runs(Commitment.objects.all())[:LISTED]


def commitments_of(user: User) -> QuerySet[Commitment]:
    return _with_runs(Commitment.objects.filter(owner=user))[:LISTED]


def commitments_of_agent(agent: RegisteredAgent) -> QuerySet[Commitment]:
    return _with_runs(Commitment.objects.filter(agent=agent))[:LISTED]


@dataclass(frozen=True)
class CommitmentDetail:
    commitment: Commitment
    entry: LogEntry
    withdrawal: LogEntry | None
    runs: list[ForwardRun]


def commitment_by_seq(raw: str | int) -> CommitmentDetail | None:
    """A commitment by its entry's sequence number (a path's text: a malformed or
    out-of-range number answers like a missing one), with its entries and forward runs."""
    seq = id_or_none(str(raw))
    if seq is None:
        return None
    found = _with_runs(Commitment.objects.filter(entry__seq=seq)).first()
    if found is None:
        return None
    return CommitmentDetail(
        commitment=found, entry=found.entry, withdrawal=found.withdrawal,
        runs=list(getattr(found, "forward_runs", [])),
    )  # fmt: skip


def commitment_rows(commitments: Iterable[Commitment]) -> list[dict[str, Any]]:
    """The commitments as the table's rows (the page, its CSV and JSON)."""
    return [
        {
            "seq": c.entry.seq,
            "agent": c.agent.name,
            "agent_digest": c.agent_digest,
            "submitter": c.owner.username,
            "release": c.release_name,
            "release_digest": c.release.content_digest,
            "forms": c.forms,
            "hold_sessions": c.hold_sessions,
            "clocks": c.clocks,
            "arms": c.arms,
            "model_version": c.model_version,
            "training_cutoff": c.training_cutoff,
            "committed_at": c.committed_at,
            "entry_digest": c.entry.digest,
            "state": "live" if c.withdrawal is None else "withdrawn",
            "withdrawn_by_entry": None if c.withdrawal is None else c.withdrawal.seq,
            "forward_runs": [
                {
                    "kind": r.kind,
                    "release": r.release.name,
                    "start": r.start.isoformat(),
                    "end": r.end.isoformat(),
                    "sessions": r.sessions,
                    "status": r.status,
                }
                for r in getattr(c, "forward_runs", [])
            ],
        }
        for c in commitments
    ]


def shown_clock(clocks: Iterable[str]) -> str | None:
    """The clock a forward run's figure is shown at: pit where it was committed, else
    dump; never leaky (its entry is unreachable: a bound on look-ahead, never a result)."""
    committed = set(clocks)
    return next((c for c in ("pit", "dump") if c in committed), None)


def _platform_cell(
    figures: dict[str, Any] | None, arm: str, clock: str | None
) -> dict[str, Any] | None:
    for cell in (figures or {}).get("cells") or []:
        if cell.get("arm") == arm and cell.get("clock") == clock:
            return dict(cell)
    return None


def forward_run_rows(limit: int = LISTED) -> list[dict[str, Any]]:
    """Every forward run and backtest, newest first, with what it proved and, once the
    release's reference prices scored it, its platform figure on the main and shifted arms
    of its commitment's first clock ("awaiting prices" until then). One query."""
    runs = ForwardRun.objects.select_related(
        "commitment__agent",
        "commitment__entry",
        "release",
        "run",
        "run__platform",
        "run__platform__prices",
    ).order_by("-release__window_end", "commitment__entry__seq", "kind")[:limit]
    rows = []
    for r in runs:
        clock = shown_clock(r.commitment.clocks)
        score = r.run.platform if r.run is not None else None
        through = score.prices.last_day if score is not None else None
        # shown only once the reference prices reach the end of its hold: a figure over
        # the trades priced so far would be a different, luckier number
        covered = through is not None and through >= r.priced_through
        scored = score is not None and score.state == "scored" and covered
        figures = score.figures if scored and score is not None else None
        main, shifted = (_platform_cell(figures, arm, clock) for arm in ("main", "shifted"))
        rows.append(
            {
                "seq": r.commitment.entry.seq,
                "agent": r.commitment.agent.name,
                "kind": r.kind,
                "release_version": getattr(r.release, "version", None),
                "release_digest": r.release.content_digest,
                "start": r.start.isoformat(),
                "end": r.end.isoformat(),
                "sessions": r.sessions,
                "status": r.status,
                "problems": list(r.problems or []),
                "run_id": r.run.run_id if r.run is not None else None,
                "run_sha": r.run.body_sha256.removeprefix("sha256:") if r.run else None,
                "level": r.run.verification_level if r.run is not None else None,
                "clock": clock,
                "priced": scored,
                "priced_through": r.priced_through.isoformat(),
                "prices_end": None if through is None else through.isoformat(),
                "main_return": None if main is None else main.get("total_return"),
                "shifted_return": None if shifted is None else shifted.get("total_return"),
                "priced_trades": None if main is None else main.get("priced_trades"),
                "trades": None if main is None else main.get("trades"),
            }
        )
    return rows
