"""The scheduler of the forward track: when a release line gains a version, every live
commitment on that line is executed over the sessions after its commitment (its forward
run) and, like for like, over as many sessions just before it (its backtest).

Idempotent: one forward run and one backtest per (commitment, version), enforced by a
unique constraint, so the signal, the periodic sweep and a retry may all ask at once. What
decides the windows is the engine's (``harness.forward.windows``): the site only asks.
"""

from __future__ import annotations

import logging
from datetime import date

from django.db import IntegrityError, transaction

from harness.forward.check import NEW_YORK
from harness.forward.windows import backtest_window, forward_window, priced_through
from harness.market.calendar import sessions_for
from pitweb.artifacts import release_copy, release_held
from pitweb.core.errors import SubmissionError
from pitweb.execution.services import forward_execution_queue
from pitweb.forward.models import Commitment, ForwardRun, LogEntry
from pitweb.releases.models import Release

log = logging.getLogger(__name__)


def _sessions(start: date, end: date) -> int:
    """NYSE sessions in ``start..end``, both included."""
    return sum(1 for day in sessions_for(start, end).sessions if start <= day <= end)


def descends_from(release: Release, ancestor_id: int) -> bool:
    """Whether ``release`` is the version ``ancestor_id`` or a later one of its line."""
    seen: set[int] = set()
    node: Release | None = release
    while node is not None and node.pk not in seen:
        if node.pk == ancestor_id:
            return True
        seen.add(node.pk)
        node = node.parent
    return False


def newest_versions() -> list[Release]:
    """The newest version of every release line that live commitments enter."""
    lines = set(
        Commitment.objects.filter(withdrawal__isnull=True).values_list("release_name", flat=True)
    )
    newest = []
    for name in sorted(lines):
        leaf = Release.objects.filter(name=name, children__isnull=True).order_by("-window_end")
        found = leaf.first()
        if found is not None:
            newest.append(found)
    return newest


def _head() -> dict[str, object]:
    last = LogEntry.objects.order_by("-seq").first()
    return {"seq": 0, "digest": None} if last is None else {"seq": last.seq, "digest": last.digest}


def forward_queue(*, release: Release) -> list[ForwardRun]:
    """Queue, for every live commitment whose line ``release`` continues, its forward run
    and its backtest on this version (those not queued already). Returns what it queued."""
    if not release_held(release):
        return []
    commitments = (
        Commitment.objects.filter(release_name=release.name, withdrawal__isnull=True)
        .select_related("agent", "entry")
        .order_by("entry__seq")
    )
    queued: list[ForwardRun] = []
    folder = None
    for commitment in commitments:
        if not descends_from(release, commitment.release_id):
            continue
        done = set(
            ForwardRun.objects.filter(commitment=commitment, release=release).values_list(
                "kind", flat=True
            )
        )
        if {ForwardRun.Kind.FORWARD, ForwardRun.Kind.BACKTEST} <= done:
            continue
        if commitment.committed_at.astimezone(NEW_YORK).date() >= release.window_end:
            continue  # no day of this version is after it: nothing to read the release for
        folder = folder or release_copy(release)
        stamped = str(commitment.entry.body["stamped_at"])
        ahead = forward_window(folder, stamped)
        if ahead is None:
            continue  # no session of this version is after the commitment yet
        start, end = (date.fromisoformat(d) for d in ahead)
        sessions = _sessions(start, end)
        windows = {ForwardRun.Kind.FORWARD: (start, end)}
        behind = backtest_window(folder, stamped, sessions)
        if behind is not None:
            windows[ForwardRun.Kind.BACKTEST] = (
                date.fromisoformat(behind[0]),
                date.fromisoformat(behind[1]),
            )
        for kind, (lo, hi) in windows.items():
            if kind in done:
                continue
            made = _queue(commitment, release, kind, lo, hi, sessions)
            if made is not None:
                queued.append(made)
    return queued


def _queue(
    commitment: Commitment, release: Release, kind: str, start: date, end: date, sessions: int
) -> ForwardRun | None:
    binding = {
        "kind": kind,
        "entry": commitment.entry.digest,
        "seq": commitment.entry.seq,
        "stamped_at": commitment.entry.body["stamped_at"],
        "agent_digest": commitment.agent_digest,
        "log_head": _head(),
    }
    try:
        with transaction.atomic():
            # the commitment's row, locked: a withdrawal (which locks it too) either comes
            # first, and nothing is queued, or waits until this run is queued
            live = Commitment.objects.select_for_update().filter(
                pk=commitment.pk, withdrawal__isnull=True
            )
            if not live.exists():
                return None
            job = forward_execution_queue(
                agent=commitment.agent, release=release, start=start, end=end,
                forms=list(commitment.forms), arms=list(commitment.arms),
                clocks=list(commitment.clocks), hold_sessions=commitment.hold_sessions,
                forward=binding,
                model_version=commitment.model_version,
                training_cutoff=commitment.training_cutoff,
                reason=f"{kind} run of commitment #{commitment.entry.seq} on {release.name} "
                f"({release.digest_hex[:12]})",
            )  # fmt: skip
            return ForwardRun.objects.create(
                commitment=commitment, kind=kind, release=release, start=start, end=end,
                sessions=sessions, job=job,
                priced_through=priced_through(end.isoformat(), commitment.hold_sessions),
            )  # fmt: skip
    except IntegrityError:  # queued meanwhile by another caller: theirs counts
        return None
    except SubmissionError as exc:
        log.warning("commitment %s: %s not queued: %s", commitment.entry.seq, kind, exc)
        return None
