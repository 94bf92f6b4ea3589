"""Writes on the commitment log: a registered agent committed to a release line's
benchmark, a commitment withdrawn, an answer set received for a sealed point set before
its reveal, and a live-shadow cohort sealed. Each appends one entry (``harness.forward.log``)
stamped with the site's time; nothing here edits or removes an entry. And the
forward-tested mark on the runs the site executed with a package a forward run proved.

Appending, concurrently: an entry names its predecessor's digest, so two appends must not
both build on the same tail. Each append locks the tail row (``SELECT ... FOR UPDATE``)
and then reads the tail again: under READ COMMITTED a waiter that wakes on the row it
locked does not see the entries committed meanwhile in that statement, but does in the
next one, and locks that newer tail in turn before it builds on it. The empty log has no
row to lock; there (and for whatever a lock cannot cover) the unique ``seq`` and
``digest`` refuse the second of two appends, which is tried again from a fresh tail.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import TypeVar

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from harness.agents.external import AgentCommandError
from harness.forward.log import (
    Answers,
    Commit,
    CommittedAgent,
    CommittedBenchmark,
    DeclaredModel,
    Entry,
    LogError,
    Seal,
    Withdraw,
    entry_digest,
    next_entry,
    parse_entry,
    plain,
    stamp,
    stamped_instant,
)
from harness.vocabulary import ARMS, CLOCKS
from pitweb.board.changes import board_changed
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import readable
from pitweb.execution.models import RegisteredAgent
from pitweb.execution.services import agent_spec, release_forms
from pitweb.forward.models import Commitment, ForwardRun, LogEntry
from pitweb.releases.models import Release
from pitweb.runs.models import Run

log = logging.getLogger(__name__)
T = TypeVar("T")

# appends tried again after losing a race for the tail (the empty log, or a tail that
# moved between its lock and its reading): each retry reads a newer tail, so a handful
# is plenty for a log appended to by people, not machines
APPEND_ATTEMPTS = 5
HOLD_MAX = 250
CUTOFF = re.compile(r"\d{4}-\d{2}-\d{2}")

HTTP_REFUSED = (
    "an HTTP agent cannot be committed: what answers behind a URL can change after the "
    "commitment, so no later run could show it was the agent committed. Commit an agent "
    "package installed on the workers (its content digest is what is committed)"
)


# -- the log's tail and the append ------------------------------------------------------------


def _locked_tail() -> LogEntry | None:
    """The log's last row, locked, and still the last once the lock is held (see the
    module's docstring)."""
    locked = LogEntry.objects.select_for_update().order_by("-seq").first()
    while locked is not None:
        newest = LogEntry.objects.order_by("-seq").only("pk").first()
        if newest is None or newest.pk == locked.pk:
            return locked
        locked = LogEntry.objects.select_for_update().get(pk=newest.pk)
    return None


def _previous(tail: LogEntry | None) -> Entry | None:
    """The tail as the entry it stores, refused if its body no longer hashes to its
    digest: an append over a damaged entry would name the damage as its predecessor."""
    if tail is None:
        return None
    try:
        entry: Entry | None = parse_entry(tail.body)
    except LogError:
        entry = None
    if entry is None or entry_digest(entry) != tail.digest or entry.seq != tail.seq:
        log.error("commitment log entry %s does not hash to its stored digest", tail.seq)
        raise SubmissionError(
            "log_damaged",
            f"the log's entry {tail.seq} no longer hashes to its published digest: "
            "nothing is appended until staff look at it",
            503,
        )
    return entry


def _stamp(tail: Entry | None, at: datetime | None) -> str:
    now = timezone.now()
    if at is not None and at > now:
        # a stamp ahead of the site's clock would hold every later append back until then
        raise SubmissionError("stamp_in_future", f"a stated time ({at}) may not be ahead of now")
    moment = now if at is None else at
    stamped = stamp(moment)
    if tail is not None and stamped < tail.stamped_at:
        raise SubmissionError(
            "stamp_before_log",
            f"the stamp {stamped} is before the log's last entry's {tail.stamped_at}: "
            "the log's clock never goes backwards",
            409,
        )
    return stamped


def _append(
    *,
    at: datetime | None,
    commit: Commit | None = None,
    withdraw: Withdraw | None = None,
    answers: Answers | None = None,
    seal: Seal | None = None,
) -> LogEntry:
    """Append one entry at the log's tail, in the caller's transaction."""
    previous = _previous(_locked_tail())
    try:
        entry = next_entry(previous, stamped_at=_stamp(previous, at), commit=commit,
                           withdraw=withdraw, answers=answers, seal=seal)  # fmt: skip
    except LogError as exc:
        raise SubmissionError("invalid_commitment", str(exc)) from None
    return LogEntry.objects.create(
        seq=entry.seq,
        digest=entry_digest(entry),
        prev=entry.prev or "",
        kind=entry.kind,
        stamped_at=stamped_instant(entry.stamped_at),
        body=plain(entry),
    )


def _with_retries(write: Callable[[], T]) -> T:
    for attempt in range(1, APPEND_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return write()
        except IntegrityError:
            if attempt == APPEND_ATTEMPTS:
                raise SubmissionError(
                    "log_busy", "the log was appended to by others meanwhile: try again", 503
                ) from None
    raise AssertionError("unreachable")


# -- commitments ------------------------------------------------------------------------------


def _chosen(values: list[str], allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A non-empty choice from a closed set, in the set's own order."""
    unknown = sorted(set(values) - set(allowed))
    if unknown or not values:
        raise SubmissionError(
            f"invalid_{what}", f"{what}: one or more of {', '.join(allowed)}"
            + (f" (not {', '.join(map(repr, unknown))})" if unknown else "")
        )  # fmt: skip
    return tuple(v for v in allowed if v in values)


def _benchmark(
    *, release: Release, forms: list[str], hold_sessions: int, clocks: list[str], arms: list[str]
) -> CommittedBenchmark:
    # the newest version of its line: no version the site holds grows it
    if release.children.exists():
        raise SubmissionError(
            "release_superseded",
            f"{release.name} has a newer version on the site: commit to the newest",
            409,
        )
    held = release_forms(release)
    unknown = sorted(set(forms) - set(held))
    if unknown or not forms:
        raise SubmissionError(
            "invalid_forms", f"forms: one or more of the release's ({', '.join(held)})"
            + (f", not {unknown}" if unknown else "")
        )  # fmt: skip
    if not isinstance(hold_sessions, int) or not 1 <= hold_sessions <= HOLD_MAX:
        raise SubmissionError("invalid_hold", f"hold_sessions: an integer from 1 to {HOLD_MAX}")
    return CommittedBenchmark(
        release=release.name,
        release_digest=release.content_digest,
        forms=tuple(sorted(set(forms))),
        hold_sessions=hold_sessions,
        clocks=_chosen(clocks, CLOCKS, "clocks"),
        arms=_chosen(arms, ARMS, "arms"),
    )


def _declared(model_version: str, training_cutoff: str) -> DeclaredModel:
    model_version = readable(model_version, "model_version").strip()
    training_cutoff = readable(training_cutoff, "training_cutoff").strip()
    if len(model_version) > 500:
        raise SubmissionError("invalid_model", "model_version: at most 500 characters")
    if training_cutoff:
        try:
            valid = bool(CUTOFF.fullmatch(training_cutoff)) and bool(
                date.fromisoformat(training_cutoff)
            )
        except ValueError:
            valid = False
        if not valid:
            raise SubmissionError(
                "invalid_cutoff", "training_cutoff: a date as YYYY-MM-DD, or empty"
            )
    return DeclaredModel(model_version=model_version, training_cutoff=training_cutoff)


def _package_unchanged(agent: RegisteredAgent) -> None:
    """The package on the workers now is the one registered: what is committed is what a
    forward run will execute."""
    try:
        spec = agent_spec(agent)
    except AgentCommandError as exc:
        raise SubmissionError("agent_changed", f"{agent.name}: {exc}", 409) from None
    now = spec.external.digest() if spec.external is not None else ""
    if now != agent.digest:
        raise SubmissionError(
            "agent_changed",
            f"{agent.name}'s package on the workers has changed since it was registered "
            f"({agent.digest} then, {now} now): staff register it again",
            409,
        )


def commitment_create(
    *,
    by: User,
    agent: RegisteredAgent,
    release: Release,
    forms: list[str],
    hold_sessions: int,
    clocks: list[str],
    arms: list[str],
    model_version: str = "",
    training_cutoff: str = "",
    at: datetime | None = None,
) -> Commitment:
    """The agent's owner commits it (its package's digest) to the benchmark of
    ``release``'s line: an entry appended to the log, stamped with the site's time.

    ``at``: the stamp's time instead of now, for the demo's management commands only (a
    stated time, never before the log's last stamp); no page or API passes it."""
    if agent.owner_id != by.pk:
        raise SubmissionError("not_owner", "only the agent's owner commits it", 403)
    if agent.transport != RegisteredAgent.Transport.STDIO:
        raise SubmissionError("http_not_committable", HTTP_REFUSED)
    benchmark = _benchmark(
        release=release, forms=forms, hold_sessions=hold_sessions, clocks=clocks, arms=arms
    )
    model = _declared(model_version, training_cutoff)
    _package_unchanged(agent)
    commit = Commit(
        agent=CommittedAgent(
            name=agent.name,
            digest=agent.digest,
            transport="stdio",
            dialect=agent.dialect,
            label=agent.label,
        ),
        benchmark=benchmark,
        model=model,
        submitter=by.username,
    )

    def write() -> Commitment:
        row = _append(at=at, commit=commit)
        commitment = Commitment.objects.create(
            entry=row, agent=agent, agent_digest=agent.digest, owner=by,
            release_name=release.name, release=release, forms=list(benchmark.forms),
            hold_sessions=benchmark.hold_sessions, clocks=list(benchmark.clocks),
            arms=list(benchmark.arms), model_version=model.model_version,
            training_cutoff=model.training_cutoff, committed_at=row.stamped_at,
        )  # fmt: skip
        audit_record(
            actor=by, action="commit", public=False,
            reason=f"{agent.name} committed to {release.name} (log entry {row.seq})",
        )  # fmt: skip
        return commitment

    return _with_retries(write)


def commitment_withdraw(*, by: User, commitment: Commitment, reason: str) -> LogEntry:
    """The owner (or staff) withdraws a commitment: a withdraw entry appended naming it
    by number and digest; the commitment's entry stays in the log."""
    if not (by.is_staff or commitment.owner_id == by.pk):
        raise SubmissionError("not_owner", "only the commitment's owner or staff withdraw it", 403)
    reason = readable(reason, "reason").strip()
    if not reason:
        raise SubmissionError("reason_required", "say why: the reason is published in the log")
    if len(reason) > 500:
        raise SubmissionError("invalid_reason", "reason: at most 500 characters")
    entry = commitment.entry
    withdraw = Withdraw(withdraws=entry.seq, entry=entry.digest, reason=reason,
                        submitter=by.username)  # fmt: skip

    def write() -> LogEntry:
        # the commitment locked too: two withdrawals of it cannot both pass the check
        locked = Commitment.objects.select_for_update().get(pk=commitment.pk)
        if locked.withdrawal_id is not None:
            raise SubmissionError(
                "already_withdrawn", f"commitment {entry.seq} is already withdrawn", 409
            )
        row = _append(at=None, withdraw=withdraw)
        Commitment.objects.filter(pk=locked.pk).update(withdrawal=row)
        audit_record(
            actor=by, action="withdraw commitment", public=by.pk != commitment.owner_id,
            reason=f"commitment {entry.seq} withdrawn (log entry {row.seq}): {reason}",
        )  # fmt: skip
        return row

    row = _with_retries(write)
    commitment.withdrawal = row
    return row


# -- the judged points' entries ----------------------------------------------------------------


def points_logged(
    then: Callable[[LogEntry], T],
    *,
    answers: Answers | None = None,
    seal: Seal | None = None,
    at: datetime | None = None,
) -> T:
    """An entry for the judged points appended, stamped with the site's time: answers
    received for a sealed set, or a live-shadow cohort sealed; and ``then`` (which stores
    what the entry acknowledges against it) in the same transaction, so neither exists
    without the other. ``at``: a stated stamp, for the demo's management commands only."""

    def write() -> T:
        return then(_append(at=at, answers=answers, seal=seal))

    return _with_retries(write)


# -- the forward-tested mark --------------------------------------------------------------


def forward_tested_mark(*, forward_run_id: int) -> list[int]:
    """Mark forward-tested the run a forward row settled as forward: the site's own
    execution of the committed package (its digest again: the engine checked it, and so
    does this) over sessions after the commitment. Only that run: forward-tested is said of
    forward runs alone, never of the same package's backtest or of its other runs, which
    proved nothing about the future. The board is told; idempotent (the runs it changed,
    none the second time)."""
    row = (
        ForwardRun.objects.select_related("commitment", "run")
        .filter(pk=forward_run_id, kind=ForwardRun.Kind.FORWARD, status=ForwardRun.Status.FORWARD)
        .first()
    )
    run = None if row is None else row.run
    if row is None or run is None or not run.executed:
        return []
    if not run.agent_digest or run.agent_digest != row.commitment.agent_digest:
        return []
    with transaction.atomic():
        if not Run.objects.filter(pk=run.pk, forward_tested=False).update(forward_tested=True):
            return []
        board_changed(runs=[run.pk])
    return [run.pk]
