"""Reads of published snapshots: one as the public may see it now (the rows taken down
since redacted), its signed form and its place in its board's chain, the newest of a
board's filters, and what has happened since to the runs it holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import BooleanField, ExpressionWrapper, Q

from harness import canonical
from harness import snapshot as snapshots
from harness.attest import dsse
from harness.attest.snapshots import signed_document
from pitweb.board.filters import filters_key
from pitweb.board.models import Snapshot
from pitweb.board.query import SECTIONS
from pitweb.core.models import AuditEvent
from pitweb.releases.models import ReferencePrices
from pitweb.runs.models import VerificationJob
from pitweb.runs.selectors import visible_runs


def snapshot_by_id(snapshot_id: int | None) -> Snapshot | None:
    return None if snapshot_id is None else Snapshot.objects.filter(pk=snapshot_id).first()


def _taken_down(content: dict[str, Any]) -> set[int]:
    """The submissions a snapshot holds that the public may no longer see (withdrawn,
    hidden or made private since, or gone): one query."""
    held = {
        row["submission"]
        for rows in content["board"].values()
        for row in rows
        if not snapshots.is_removed(row)
    }
    public = visible_runs(AnonymousUser()).filter(pk__in=held).values_list("pk", flat=True)
    return held - set(public)


def snapshot_board(snapshot: Snapshot) -> dict[str, Any]:
    """A snapshot's frozen content, decoded, as anyone may see it now: a row whose run
    was withdrawn or hidden after publication is "removed after this snapshot", its row
    digest all that is left of it (so the snapshot's digest still verifies, and nothing
    taken down is published again)."""
    content: dict[str, Any] = json.loads(snapshot.content)
    removed = _taken_down(content)
    return snapshots.redacted(content, removed) if removed else content


def snapshot_text(snapshot: Snapshot) -> str:
    """A snapshot's JSON as served: the stored text, or with the rows taken down since
    removed (``snapshot_board``); ``pit-harness snapshot verify`` checks either."""
    content: dict[str, Any] = json.loads(snapshot.content)
    removed = _taken_down(content)
    return canonical.line(snapshots.redacted(content, removed)) if removed else snapshot.content


def signed_snapshot(snapshot: Snapshot) -> dict[str, Any] | None:
    """A snapshot's signed form (``harness.attest.snapshots.signed_document``) as the
    public may see it now (``snapshot_board``: the signature is over the digest, which
    rows taken down since leave unchanged); None for a snapshot published before
    snapshots were signed."""
    if not snapshot.signature:
        return None
    return signed_document(snapshot_board(snapshot), json.loads(snapshot.signature))


# a key id as the harness prints it (pit-harness snapshot verify): enough to tell keys apart
SHORT_KEYID = 16


@dataclass(frozen=True)
class SignedBy:
    keyid: str
    signed_at: str  # as the statement says it: UTC, to the second, with Z

    @property
    def short(self) -> str:
        return self.keyid[:SHORT_KEYID]


def snapshot_signer(snapshot: Snapshot) -> SignedBy | None:
    """Which key signed a snapshot and when, as its envelope says (checked offline by
    ``pit-harness snapshot verify --keys``, not here); None: published unsigned."""
    if not snapshot.signature:
        return None
    _kind, payload, signatures = dsse.parts(json.loads(snapshot.signature))
    statement = json.loads(payload)
    return SignedBy(keyid=signatures[0][0], signed_at=statement["predicate"]["signed_at"])


@dataclass(frozen=True)
class Link:
    """A snapshot of a board's chain, as a page names it."""

    pk: int
    digest: str
    signed: bool


@dataclass(frozen=True)
class ChainPlace:
    """Where a snapshot stands in its board's chain: the snapshot it names (None: the
    board's first, or a snapshot published before chains), the one naming it, and the
    signed snapshots of the chain up to it, oldest first (at most ``CHAIN_SHOWN``)."""

    previous: Link | None
    next: Link | None
    chain: list[Link]
    chain_length: int  # every signed snapshot of the chain up to this one


# the links a page lists in its command: a chain checked from any snapshot on is checked
# link by link from there (the first given is taken as it names its predecessor)
CHAIN_SHOWN = 10


def snapshot_chain(snapshot: Snapshot) -> ChainPlace:
    """The snapshot's place in its board's chain: one query over the board's snapshots
    (their digests and predecessors, not their content)."""
    rows = (
        Snapshot.objects.filter(filters_key=snapshot.filters_key)
        .annotate(signed=ExpressionWrapper(~Q(signature=""), output_field=BooleanField()))
        .order_by()
        .values_list("pk", "content_digest", "previous_digest", "signed")
    )
    links: dict[str, Link] = {}
    names: dict[str, str] = {}  # a snapshot's digest -> the digest it names
    named_by: dict[str, Link] = {}  # a digest -> the snapshot naming it
    for pk, digest, previous, signed in rows:
        links[digest] = Link(pk, digest, bool(signed))
        if previous is not None:
            names[digest] = previous
            named_by[previous] = links[digest]
    chain: list[Link] = []
    at: str | None = snapshot.content_digest
    for _ in range(len(links)):  # a chain holds each snapshot once: no loop runs longer
        link = links.get(at) if at is not None else None
        if link is None or not link.signed:
            break
        chain.append(link)
        at = names.get(link.digest)
    chain.reverse()
    return ChainPlace(
        previous=links.get(snapshot.previous_digest) if snapshot.previous_digest else None,
        next=named_by.get(snapshot.content_digest),
        chain=chain[-CHAIN_SHOWN:],
        chain_length=len(chain),
    )


def latest_snapshot(filters: dict[str, Any]) -> Snapshot | None:
    """The newest snapshot of a board drawn with ``filters``: what "cite this board" names."""
    key = filters_key(filters)
    return Snapshot.objects.filter(filters_key=key).defer("content").first()


def snapshot_since(snapshot: Snapshot, board: dict[str, Any]) -> list[dict[str, Any]]:
    """What has happened since the snapshot to the runs it holds, oldest first: public
    staff actions (flag, hide, re-verify...) and withdrawals, verification jobs (with
    their outcome) and new reference-price versions of their releases. A fixed number
    of queries."""
    # a row removed after the snapshot names no run, and none of its history is listed
    rows = [r for name in SECTIONS for r in board.get(name, []) if not snapshots.is_removed(r)]
    held = {r["submission"]: r["run_id"] for r in rows}
    releases = {r["release"] for r in rows}
    taken = snapshot.taken_at
    out: list[dict[str, Any]] = []
    for event in AuditEvent.objects.filter(
        public=True, run_id__in=held, created_at__gt=taken
    ).order_by("created_at", "id")[:500]:
        out.append(
            {"at": event.created_at, "run_id": held[event.run_id], "submission": event.run_id,
             "what": f"{event.action}: {event.reason}"}
        )  # fmt: skip
    for job in VerificationJob.objects.filter(run_id__in=held, created_at__gt=taken).order_by(
        "created_at", "id"
    )[:500]:
        out.append(
            {"at": job.created_at, "run_id": held[job.run_id], "submission": job.run_id,
             "what": f"{'re-' if job.kind == 'reverify' else ''}verification job {job.pk}: "
             f"{job.state}"}
        )  # fmt: skip
    for prices in ReferencePrices.objects.filter(
        Q(release__name__in=releases) | Q(release__content_digest__in=releases),
        registered_at__gt=taken,
    ).select_related("release")[:100]:
        out.append(
            {"at": prices.registered_at, "run_id": None, "submission": None,
             "what": f"reference prices v{prices.version} registered for "
             f"{prices.release.name}: every run of it priced again"}
        )  # fmt: skip
    return sorted(out, key=lambda e: e["at"])
