"""Pricing: registering a release's reference prices, and scoring each proven run with
them (the platform figures every ranked run is compared on).

A reference-price version is registered once and never edited. Registering one queues a
score for every proven run of the release and points each run at it, so until the new
score lands the run's row says "pending" with the version: no run is ranked on one
version beside a run priced with another. A run proven later is scored with the
release's newest version. Scores move pending -> scoring -> scored | refused |
harness_error (``PlatformScore.LEGAL_MOVES``, on the claimable-job machine); a harness
error is ours and never the run's result.

Imports go one way: pricing imports ``pitweb.runs``' models and board, ``pitweb.jobs``,
``pitweb.core`` and ``pitweb.releases``; ``pitweb.runs``' services never import pricing
(a proven run reaches ``platform_request`` through the ``run_proven`` signal). Tasks
import the scoring, which imports these services; these services reach a task only
through ``enqueue_score``, which sends it by name (``pitweb.jobs.dispatch``), never
importing it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from harness.market.index import load_index
from harness.market.prices import PriceError, load_prices
from harness.receipt.ratecard import RateCardError, read_rate_card
from harness.receipt.rescore import Tails
from pitweb.board.changes import board_changed
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import readable, require_reason
from pitweb.jobs import machine
from pitweb.jobs.dispatch import send_on_commit
from pitweb.pricing.models import PlatformScore, RateCard
from pitweb.releases.models import ReferencePrices, Release
from pitweb.runs.models import PROVEN_LEVELS, Run


def current_prices(release: Release | None) -> ReferencePrices | None:
    if release is None:
        return None
    return release.reference_prices.order_by("-version").first()


def reference_prices_register(
    *,
    release: Release,
    path: str | os.PathLike[str],
    source: str,
    pulled_at: str,
    staff: User | None,
    reason: str,
    index: IndexGiven | None = None,
) -> tuple[ReferencePrices, bool]:
    """Register a price file (and, with ``index``, the market index every run of the
    release is measured against) as the release's next reference version and queue a
    re-scoring of every proven run of the release. The same file and index again are the
    version they already are (nothing queued). Audited and published."""
    reason = require_reason(reason)
    source, pulled_at = readable(source, "source"), readable(pulled_at, "pulled_at")
    if not source.strip():
        raise SubmissionError("source_required", "say where the reference prices came from")
    try:
        prices = load_prices(path, source=source.strip(), pulled_at=pulled_at.strip())
    except (PriceError, OSError, ValueError) as exc:
        raise SubmissionError("invalid_prices", f"price file: {exc}") from None
    market = _index_fields(index) if index is not None else {}
    sha = _stored(path, "reference-prices")
    existing = release.reference_prices.filter(
        file_sha256=sha,
        index_sha256=market.get("index_sha256", ""),
        index_symbol=market.get("index_symbol", ""),
    ).first()
    if existing is not None:
        return existing, False
    name = f"reference-prices/{sha.removeprefix('sha256:')}.csv"
    with transaction.atomic():
        Release.objects.select_for_update().filter(pk=release.pk).first()  # one version at a time
        latest = release.reference_prices.order_by("-version").first()
        reference = ReferencePrices.objects.create(
            release=release,
            version=(latest.version + 1) if latest else 1,
            source=prices.source,
            pulled_at=prices.pulled_at,
            file_sha256=sha,
            file_name=name,
            basis=prices.basis,
            symbols=len(prices.symbols()),
            bars=len(prices),
            last_day=prices.last_day(),
            registered_by=staff,
            reason=reason,
            **market,
        )
        audit_record(
            actor=staff,
            action="reference_prices",
            run=None,
            reason=f"{release.name} prices v{reference.version} ({sha}, source {prices.source!r})"
            + (
                f" with market index {market['index_symbol']} ({market['index_sha256']}, "
                f"source {market['index_source']!r})"
                if market
                else ""
            )
            + f": {reason}",
            public=True,
        )
        runs = Run.objects.filter(release=release, verification_level__in=PROVEN_LEVELS)
        for run in runs:
            _queue(run, reference)
        board_changed()
    return reference, True


@dataclass(frozen=True)
class IndexGiven:
    """A market index as staff give it: a price file, the symbol of its series, and where
    it came from."""

    path: str | os.PathLike[str]
    symbol: str
    source: str
    pulled_at: str = ""


def _index_fields(index: IndexGiven) -> dict[str, Any]:
    symbol = readable(index.symbol, "index_symbol").strip()
    source = readable(index.source, "index_source").strip()
    pulled_at = readable(index.pulled_at, "index_pulled_at").strip()
    if not source:
        raise SubmissionError("source_required", "say where the index's levels came from")
    for name, value, most in (
        ("index_symbol", symbol, 200),
        ("index_source", source, 500),
        ("index_pulled_at", pulled_at, 100),
    ):
        if len(value) > most:
            raise SubmissionError("too_long", f"{name}: at most {most} characters")
    try:
        series = load_index(index.path, symbol=symbol, source=source, pulled_at=pulled_at)
    except (PriceError, OSError, ValueError) as exc:
        raise SubmissionError("invalid_index", f"index file: {exc}") from None
    sha = _stored(index.path, "reference-prices")
    return {
        "index_symbol": symbol,
        "index_source": source,
        "index_pulled_at": pulled_at,
        "index_sha256": sha,
        "index_name": f"reference-prices/{sha.removeprefix('sha256:')}.csv",
        "index_levels": len(series.levels),
    }


def _stored(path: str | os.PathLike[str], folder: str) -> str:
    """The file kept in artifact storage under its digest (once); its sha256."""
    with open(path, "rb") as handle:
        sha = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
    name = f"{folder}/{sha.removeprefix('sha256:')}.csv"
    if not default_storage.exists(name):
        with open(path, "rb") as handle:
            stored = default_storage.save(name, File(handle))
        if stored != name:
            default_storage.delete(stored)
    return sha


def current_rate_card() -> RateCard | None:
    return RateCard.objects.order_by("-version").first()


def rate_card_register(
    *, path: str | os.PathLike[str], staff: User | None, reason: str
) -> tuple[RateCard, bool]:
    """Register a rate card as the next version every run's measured model usage is
    priced with. The same card again is the version it already is. Audited, published."""
    reason = require_reason(reason)
    try:
        loaded = read_rate_card(path)
    except RateCardError as exc:
        raise SubmissionError("invalid_rate_card", str(exc)) from None
    existing = RateCard.objects.filter(sha256=loaded.sha256).first()
    if existing is not None:
        return existing, False
    card = loaded.card
    with transaction.atomic():
        latest = RateCard.objects.select_for_update().order_by("-version").first()
        made = RateCard.objects.create(
            version=(latest.version + 1) if latest else 1,
            content=Path(path).read_text(encoding="utf-8"),
            sha256=loaded.sha256,
            source=card.source if isinstance(card.source, str) else "",
            as_of=card.as_of if isinstance(card.as_of, str) else "",
            models_priced=len(card.models),
            registered_by=staff,
            reason=reason,
        )
        audit_record(
            actor=staff,
            action="rate_card",
            run=None,
            reason=f"rate card v{made.version} ({made.sha256}, {made.models_priced} models): "
            f"{reason}",
            public=True,
        )
        board_changed()
    return made, True


def platform_request(*, run: Run) -> PlatformScore | None:
    """Score a proven run with its release's newest reference prices (once per version).
    Nothing when the release has none yet: the run is listed as awaiting them."""
    reference = current_prices(run.release)
    if reference is None:
        return None
    with transaction.atomic():
        score = _queue(run, reference)
        board_changed(runs=[run.pk])
    return score


def _queue(run: Run, reference: ReferencePrices) -> PlatformScore:
    score, created = PlatformScore.objects.get_or_create(run=run, prices=reference)
    if not created and PlatformScore.may_move(score.state, PlatformScore.QUEUED):
        # proven again (a re-verification passed): try again with a clean slate
        created = machine.transition(
            PlatformScore, pk=score.pk, source=score.state, target=PlatformScore.QUEUED,
            attempts=0, message="", worker="",
        )  # fmt: skip
    Run.objects.filter(pk=run.pk).update(platform=score)
    if created:
        enqueue_score(score.pk)
    return score


def platform_claim(*, score_id: int, worker: str) -> bool:
    """pending -> scoring, for exactly one worker."""
    return machine.claim(PlatformScore, pk=score_id, worker=worker)


def _read_off(figures: dict[str, Any]) -> dict[str, Any]:
    cells = {(c["arm"], c["clock"]): c for c in figures["cells"]}
    out: dict[str, Any] = {}
    for arm in ("shifted", "main"):
        cell = cells.get((arm, "pit")) or {}
        interval = cell.get("interval_95") or [None, None]
        out[f"{arm}_pit"] = cell.get("total_return")
        out[f"{arm}_pit_low"], out[f"{arm}_pit_high"] = interval
    ranked = cells.get(("shifted", "pit")) or {}
    out["shifted_pit_priced"] = ranked.get("priced_trades")
    # at the site's stated cost level, and against the release's market index
    out["cost_bps"] = (figures.get("costs") or {}).get("bps_per_side")
    out["shifted_pit_after_costs"] = (ranked.get("after_costs") or {}).get("total_return")
    market = ranked.get("market") or {}
    out["shifted_pit_excess"] = market.get("excess_return")
    out["shifted_pit_beta"] = market.get("beta")
    pit = (figures.get("contamination") or {}).get("pit") or {}
    intervals = (figures.get("contamination_interval_95") or {}).get("pit") or {}
    for arm in ("shifted", "redacted"):
        out[f"delta_{arm}_pit"] = pit.get(f"main_minus_{arm}")
        interval = intervals.get(f"main_minus_{arm}") or [None, None]
        out[f"delta_{arm}_pit_low"], out[f"delta_{arm}_pit_high"] = interval
    return out


def _tell_board(score_id: int, state: str) -> None:
    board_changed(runs=PlatformScore.objects.filter(pk=score_id).values_list("run_id", flat=True))


def platform_finish(
    *,
    score_id: int,
    worker: str,
    state: str,
    figures: dict[str, Any] | None = None,
    tails: Tails | None = None,
    trades: dict[str, Any] | None = None,
    message: str = "",
) -> bool:
    """scoring -> scored | refused | harness_error, only by the worker that holds it.
    ``tails``: the ranked cell's bootstrap tails, kept for its family-wise interval;
    ``trades``: each cell's trades, kept for a run of the forward track."""
    fields: dict[str, Any] = {"message": message}
    if figures is not None:
        fields.update(figures=figures, **_read_off(figures))
        fields["shifted_pit_tails"] = None if tails is None else tails.to_json()
        fields["trades"] = trades
    return machine.finish(
        PlatformScore, pk=score_id, worker=worker, state=state, then=_tell_board, **fields
    )


def platform_retry(*, score_id: int, worker: str, message: str) -> int | None:
    """Our own failure: scoring -> pending while attempts remain (the seconds to wait are
    returned), else a final harness_error."""
    return machine.give_up_or_release(
        PlatformScore, pk=score_id, worker=worker, message=message, then=_gave_up
    )


def _gave_up(score_id: int, state: str) -> None:
    if state == PlatformScore.GAVE_UP:
        _tell_board(score_id, state)


def platform_requeue_stale(*, older_than: timedelta | None = None) -> list[int]:
    """The sweep's share: a score whose worker stopped heart-beating goes back to pending
    (or, past its attempts, ends as harness_error), and pending scores whose message was
    lost are sent again."""
    swept = machine.sweep_stale(PlatformScore, older_than=older_than, then=_gave_up)
    for pk in swept.to_dispatch:
        enqueue_score(pk)
    return swept.to_dispatch


SCORE_TASK = "pitweb.pricing.tasks.rescore_run_task"


def enqueue_score(score_id: int) -> None:
    """Send score ``score_id`` to a worker once the transaction commits: the one place
    these services reach the tasks."""
    send_on_commit(SCORE_TASK, score_id)
