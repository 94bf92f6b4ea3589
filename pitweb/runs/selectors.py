"""Reads. Each costs a fixed number of queries however many runs there are."""

from __future__ import annotations

import bisect
import json
import re
from datetime import timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import F, Q, QuerySet, Value, Window
from django.db.models.functions import Coalesce, RowNumber
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from harness import canonical
from harness import snapshot as snapshots
from harness.receipt.attempts import family_interval, sidak_confidence
from harness.receipt.rescore import RankRange, Tails, rank_ranges
from pitweb.core.models import AuditEvent
from pitweb.jobs import machine
from pitweb.jobs.models import WorkerBeat
from pitweb.pricing.models import PlatformScore
from pitweb.releases.models import ReferencePrices
from pitweb.runs import boardcache, boardkeys
from pitweb.runs.board import board_read, board_stamp
from pitweb.runs.models import (
    PROVEN_LEVELS,
    Family,
    JobState,
    Run,
    Snapshot,
    VerificationJob,
    VerificationLevel,
)

VERIFIED_LEVEL = VerificationLevel.HASHES_VERIFIED


def visible_runs(user: User | AnonymousUser) -> QuerySet[Run]:
    """Public runs neither hidden nor withdrawn; plus a submitter's own; staff see
    everything."""
    runs = Run.objects.select_related("release", "submitter", "family")
    if user.is_authenticated and user.is_staff:
        return runs
    public = Q(visibility="public", hidden=False, withdrawn_at=None)
    if user.is_authenticated:
        return runs.filter(public | Q(submitter=user))
    return runs.filter(public)


LEVEL_WORDS = {
    VerificationLevel.SELF_REPORTED: "self-reported: stored as uploaded, not checked",
    VerificationLevel.HASHES_VERIFIED: "hashes verified: the arithmetic was re-derived from "
    "the trajectory; the agent was not re-run",
    VerificationLevel.REEXECUTED: "re-executed: the agent was run again on the same frozen "
    "data and repeated every score-bearing decision",
}
LEVEL_SHORT = {
    VerificationLevel.SELF_REPORTED: "not checked",
    VerificationLevel.HASHES_VERIFIED: "arithmetic re-derived; agent not re-run",
    VerificationLevel.REEXECUTED: "agent re-run; decisions repeated",
}
DECLARED = "declared by the submitter's harness (not verifiable)"


REFUTED_WORDS = (
    "refuted: the system re-derived the receipt from its trajectory and release, and it "
    "does not hold"
)


def level_words(run: Run) -> str:
    """The run's verification level in words; a refuted receipt was checked, so it is
    never called "not checked"."""
    if run.status == JobState.MISMATCH:
        return REFUTED_WORDS
    return LEVEL_WORDS.get(run.verification_level, run.verification_level)  # type: ignore[call-overload,no-any-return]


MASK_WORDS = {
    "mask_leaks": "mask leaks: the probe recovered real dates or issuers from shifted rows, so "
    "the shifted arm is no control and its delta no measure of memory",
    "mask_holds": "mask holds: no probe answer gave a real date or issuer away",
}


def header_verdicts(run: Run) -> list[tuple[str, str]]:
    """Every verdict that qualifies the run's numbers, as (kind, words), for the top of
    its page: the mask, the cells that did not complete, and the level (good, bad or
    warn, for the badge's colour)."""
    verdict = run.mask_verdict
    mask = MASK_WORDS.get(
        verdict, f"mask probe {verdict.replace('_', ' ')}: no verdict on the mask"
    )
    kinds = {"mask_holds": "good", "mask_leaks": "bad"}
    if run.proven:
        out = [(kinds.get(verdict, "warn"), mask)]
    else:  # the receipt's word until the system has re-derived it
        out = [("warn", f"{verdict.replace('_', ' ')} by the receipt's own word, not proven")]
    broken = [f"{c.arm}/{c.clock} {c.status}" for c in run.receipt.cells if c.status != "complete"]
    if broken:
        out.append(
            (
                "bad",
                f"{len(broken)} of {len(run.receipt.cells)} cells did not complete: "
                + ", ".join(broken),
            )
        )
    if run.withdrawn_at is not None:
        out.append(("bad", f"withdrawn by its submitter on {run.withdrawn_at:%Y-%m-%d}"))
    attempts = run_attempts(run)
    if attempts > 1:
        out.append(("warn", f"one of {attempts} attempts of its family: {ATTEMPTS_WORDS}"))
    if run.status == JobState.MISMATCH:
        out.append(("bad", "refuted"))
    elif not run.proven:
        out.append(
            (
                "warn",
                f"{run.status.replace('_', ' ')}: not proven, no figure of it is shown as a result",
            )
        )
    else:
        out.append(("good", LEVEL_SHORT.get(run.verification_level, "")))  # type: ignore[call-overload]
    return out


ATTEMPTS_WORDS = "a best of many is ranked on its family-wise (Šidák) interval"


def run_attempts(run: Run) -> int:
    """How many uploads the run's family counts (1 for a run stored around intake)."""
    return run.family.attempts if run.family is not None else 1


def shifted_delta_reading(interval: list[float] | None) -> str:
    """What the pit clock's main minus shifted interval supports, in words."""
    if interval is None:
        return (
            "This run's figures carry no interval for the delta (priced before intervals "
            "were drawn, or a control cell without a priced trade): read its size with care."
        )
    low, high = interval
    if low > 0:
        return (
            "At the pit clock its interval lies above zero: the agent did better on the real "
            "dates than on the shifted ones, by more than chance explains."
        )
    if high < 0:
        return (
            "At the pit clock its interval lies below zero: the agent did better on the "
            "shifted dates; such a delta measures no memory (the seed's lesson: masked "
            "deltas mix memory, lost information and distraction)."
        )
    return (
        "At the pit clock its interval spans zero: these trades cannot tell a memory of the "
        "period from none."
    )


def isolation_words(run: Run) -> str:
    """Whose word the run's isolation is: measured by our workers for a run the site
    executed; the submitter's for an upload, re-executed or not."""
    declared = f"{'isolated' if run.agent_isolated else 'not isolated'}: {DECLARED}"
    if run.executed:
        isolated = "isolated" if run.agent_isolated else "not isolated"
        return f"executed by the site, {isolated}: measured by its workers"
    if run.verification_level == VerificationLevel.REEXECUTED:
        return f"re-executed by the site; {declared}"
    return declared


def could_read_future(run: Run) -> bool:
    """By its own receipt, nothing kept the agent from the release and prices on disk:
    it ran in the harness's process (or unconfined), and the site did not re-run it."""
    return not run.agent_isolated and run.verification_level != VerificationLevel.REEXECUTED


def platform_status(run: Run) -> str:
    """Where the run's platform figures stand, in words (never a stated value)."""
    score = run.platform
    if score is None:
        return "awaiting reference prices for this release"
    version = f"prices v{score.prices.version}"
    if score.state in (PlatformScore.State.PENDING, PlatformScore.State.SCORING):
        return f"pending ({version})"
    if score.state == PlatformScore.State.REFUSED:
        return f"no figure ({version}): {score.message}"
    if score.state == PlatformScore.State.HARNESS_ERROR:
        return f"no figure ({version}): the scorer failed (ours, not the run's)"
    if score.shifted_pit is None:
        return f"no priced trade in shifted/pit ({version})"
    if score.shifted_pit_tails is None:
        return f"scored before attempts were counted: being scored again ({version})"
    if (score.shifted_pit_priced or 0) < settings.PITWEB_MIN_RANKED_TRADES:
        return (
            f"{score.shifted_pit_priced} priced trades in shifted/pit, fewer than the "
            f"{settings.PITWEB_MIN_RANKED_TRADES} a ranked run needs ({version})"
        )
    return "scored"


def platform_numbers(run: Run) -> dict[str, Any]:
    score = run.platform
    out: dict[str, Any] = {"platform_status": platform_status(run)}
    if score is None:
        return out
    out.update(
        {
            "prices_version": score.prices.version,
            "prices_source": score.prices.source,
            "prices_pulled_at": score.prices.pulled_at,
            "prices_sha256": score.prices.file_sha256,
            "prices_basis": score.prices.basis,
        }
    )
    if score.state == PlatformScore.State.SCORED:
        out.update(
            {
                "platform_shifted_pit": score.shifted_pit,
                "platform_shifted_pit_low": score.shifted_pit_low,
                "platform_shifted_pit_high": score.shifted_pit_high,
                "platform_shifted_pit_priced": score.shifted_pit_priced,
                "platform_main_pit": score.main_pit,
                "platform_main_pit_low": score.main_pit_low,
                "platform_main_pit_high": score.main_pit_high,
                "platform_delta_shifted_pit": score.delta_shifted_pit,
                "platform_delta_redacted_pit": score.delta_redacted_pit,
            }
        )
    return out


KEY = re.compile(r"[0-9a-f]{12,64}")


def matching(runs: QuerySet[Run], key: str) -> QuerySet[Run]:
    """The runs (among ``runs``: those the requester may see) a key names: a whole body
    hash, a run id (16 hex), or a body-hash prefix of 12 or more hex digits."""
    key = key.lower().removeprefix("sha256:")
    if not KEY.fullmatch(key):
        return runs.none()
    if len(key) == 64:
        found = runs.filter(body_sha256=f"sha256:{key}")
    else:
        found = runs.filter(Q(body_sha256__startswith=f"sha256:{key}") | Q(run_id=key))
    return found.order_by("submitted_at", "pk")


def pick(runs: QuerySet[Run], key: str, wanted: int | None) -> tuple[Run | None, list[Run]]:
    """The run a key names, and the candidates when it names several bodies. The
    submission asked for by id (``?submission=``, parsed by the caller) wins; several
    submissions of one body give the earliest. Only runs the requester may see are ever
    considered, so nothing is revealed about the others."""
    found = matching(runs, key)
    if wanted is not None:
        found = found.filter(pk=wanted)
    candidates = list(found[:51])
    if len({r.body_sha256 for r in candidates}) == 1:
        return candidates[0], candidates
    return None, candidates


def submission(runs: QuerySet[Run], key: str, wanted: int | None) -> Run | None:
    """The one run a key names, or None (none visible, or several bodies)."""
    return pick(runs, key, wanted)[0]


def other_submissions(user: User | AnonymousUser, run: Run) -> list[Run]:
    """The other submissions of the same body that the requester may see."""
    return list(
        visible_runs(user)
        .filter(body_sha256=run.body_sha256)
        .exclude(pk=run.pk)
        .order_by("submitted_at", "pk")
    )


def leaderboard_row(run: Run) -> dict[str, Any]:
    """A board row. Numbers only for a run whose numbers were proved: the platform
    figures (every run priced with its release's reference prices) and, labelled, the
    receipt's self-reported ones. Any other run says why its numbers are withheld (the
    failed check by name, or pending)."""
    numbers: dict[str, Any] = (
        {
            **platform_numbers(run),
            **{
                f"self_reported_{k}": v
                for k, v in run.summary.items()
                if k.startswith(("main_", "delta_"))
            },
            "mask_verdict": run.summary.get("mask_verdict"),
            "probe_recovered": run.summary.get("probe_recovered"),
            "numbers": "proven",
        }
        if run.proven
        else {"numbers": "withheld", "withheld_because": run.withheld_reason}
    )
    return {
        "run_id": run.run_id,
        "body_sha256": run.body_sha256,
        "submission": run.pk,
        "submitter": run.submitter.username,
        "release": run.release.name if run.release else run.release_digest,
        "forms": run.forms,
        "window": f"{run.window_start}..{run.window_end}",
        "agent": run.agent,
        "model_version": run.model_version or None,
        "baseline": run.is_baseline,
        "attempts": run_attempts(run),
        "family": run.family_id,
        "family_page": reverse("family", args=[run.family_id]) if run.family_id else None,
        **numbers,
        "protocol_gaps": run.summary.get("protocol_gaps", ""),
        "error_cells": run.error_cells,
        "failed_check": run.failed_check if run.status == "mismatch" else "",
        "verification": run.status,
        "verification_level": run.verification_level,
        "verification_level_words": level_words(run),
        "verification_level_short": LEVEL_SHORT.get(run.verification_level, ""),  # type: ignore[call-overload]
        "agent_isolated": run.agent_isolated,
        "isolation": isolation_words(run),
        "could_read_future_data": could_read_future(run),
        "valid": run.valid,
        "protocol_complete": run.protocol_complete,
        "flag": run.flag,
        "withdrawn": run.withdrawn_at is not None,
        "submitted_at": run.submitted_at.isoformat(),
    }


PER_PAGE = 100
# a page of the site shows half the API's rows: the table and its chart are drawn by the
# visitor's browser, whose time grows with every row (the API's answer is read by code)
PAGE_ROWS = 50
APART_LIMIT = 200


def _board_runs(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
    isolated: bool = False,
) -> QuerySet[Run]:
    runs = (
        visible_runs(user)
        .filter(withdrawn_at=None)
        .select_related("platform", "platform__prices")
        .defer(
            "body",
            "config",
            "release__manifest",
            "platform__figures",
        )
    )
    if release:
        runs = runs.filter(Q(release__name=release) | Q(release_digest=release))
    if form:
        runs = runs.filter(forms__regex=rf"(^|,){re.escape(form)}(,|$)")
    if start:
        runs = runs.filter(window_start=start)
    if end:
        runs = runs.filter(window_end=end)
    if isolated:
        runs = runs.filter(
            Q(agent_isolated=True) | Q(verification_level=VerificationLevel.REEXECUTED)
        )
    return runs


def _clean(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Proven, valid runs whose controls hold: every cell ran and the mask held."""
    return runs.filter(valid=True, verification_level__in=PROVEN_LEVELS, error_cells="").exclude(
        mask_verdict="mask_leaks"
    )


def _rankable() -> Q:
    return Q(
        platform__state=PlatformScore.State.SCORED,
        platform__shifted_pit__isnull=False,
        platform__shifted_pit_priced__gte=settings.PITWEB_MIN_RANKED_TRADES,
        platform__shifted_pit_tails__isnull=False,
    )


RANKING = (F("platform__shifted_pit").desc(), "run_id", "pk")


def ranked_runs(runs: QuerySet[Run]) -> QuerySet[Run]:
    """What survives the controls, ranked on it: the platform pit-clock return of the
    shifted arm, for proven, valid runs whose every cell ran, whose mask held and that
    have enough priced trades; one row per family, its best (the others are on the
    family's page). A re-verification in progress, or one the verifier itself failed
    (harness_error), does not take a run off the board; a mismatch does."""
    rankable = _clean(runs).filter(_rankable())
    family = Coalesce("family_id", Value(0) - F("pk"))  # a run with no family is its own
    nth = Window(RowNumber(), partition_by=[family], order_by=RANKING)
    return rankable.annotate(nth_of_family=nth).filter(nth_of_family=1).order_by(*RANKING)


def _apart(runs: QuerySet[Run]) -> dict[str, QuerySet[Run]]:
    """Runs never ranked, each for its own reason. Only proven runs show numbers; a run
    whose last conclusive verification failed is listed with the failed check, a run not
    yet verified as pending, whatever its receipt says."""
    newest = runs.order_by("-submitted_at", "-pk")
    unproven = newest.exclude(verification_level__in=PROVEN_LEVELS)
    proven_runs = newest.filter(verification_level__in=PROVEN_LEVELS)
    valid = proven_runs.filter(valid=True)
    return {
        "unranked": _clean(newest).exclude(_rankable()),
        "mask_leaks": valid.filter(error_cells="", mask_verdict="mask_leaks"),
        "errors": valid.exclude(error_cells=""),
        "failed": unproven.filter(status="mismatch"),
        "pending": unproven.exclude(status="mismatch"),
        "invalid": proven_runs.filter(valid=False),
    }


SECTIONS = ("ranked", "unranked", "mask_leaks", "errors", "failed", "pending", "invalid")


class Ranks:
    """Every ranked row's family-wise interval, rank range and cursor, in ranking order
    (the whole filtered board's, not one page's)."""

    def __init__(self, ranked: QuerySet[Run]) -> None:
        found = list(
            ranked.values_list(
                "platform__shifted_pit_tails", "family__attempts", "platform__shifted_pit",
                "run_id", "pk",
            )
        )  # fmt: skip
        self.attempts = [n or 1 for _, n, *_ in found]
        # ranked runs all have tails (the ranking filter asks for them)
        self.intervals = [
            family_interval(Tails.from_json(cast(dict[str, Any], tails)), n)
            for (tails, *_), n in zip(found, self.attempts, strict=True)
        ]
        self.ranges: list[RankRange] = rank_ranges(self.intervals)
        # ranked runs all have a return (the ranking filter asks for it)
        self.keys = [boardkeys.Cursor(-cast(float, r), code, pk) for *_, r, code, pk in found]

    def __len__(self) -> int:
        return len(self.ranges)

    def offset(self, after: str | None, before: str | None, per_page: int) -> int | None:
        """Where the page asked for by cursor starts (None: no cursor given)."""
        # the keys are in ranking order, which is their order as cursors
        if after is not None:
            return bisect.bisect_right(self.keys, boardkeys.Cursor.parse(after))
        if before is not None:
            end = bisect.bisect_left(self.keys, boardkeys.Cursor.parse(before))
            return max(0, end - per_page)
        return None

    def number(self, rows: list[dict[str, Any]], offset: int) -> None:
        """Label ``rows`` (the ranked rows from ``offset`` on, read in the same
        ``board_read`` as these ranks) with their ranks. A row that is not the run these
        ranks hold at its place is refused: a label is never attached to another run's
        row."""
        for n, row in enumerate(rows, start=offset):
            if n >= len(self.keys) or self.keys[n].pk != row["submission"]:
                raise RuntimeError("the board's ranks and rows were not read together")
            found, (low, high) = self.ranges[n], self.intervals[n]
            row.update(
                rank=found.label, rank_low=found.low, rank_high=found.high, position=n + 1,
                ranked_interval=[low, high],
                ranked_confidence=sidak_confidence(self.attempts[n]),
            )  # fmt: skip


def leaderboard(
    *,
    user: User | AnonymousUser,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
    isolated: bool = False,
    page: int = 1,
    per_page: int = PER_PAGE,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    """A page of ranked runs and, apart, each for its reason: unranked (no platform
    figure yet, or too few trades), mask leaks (control void), cells that failed, failed
    and pending verification (no numbers), invalid. Paged by number or by key (``after``
    / ``before`` a row's cursor). The public board a visitor can reach from its links is
    read from its stored copy (``boardstore``: a fixed number of indexed queries however
    many runs); a signed-in user's, which holds their own unpublished runs, is computed."""
    args = (release, form, start, end, isolated, page, per_page, after, before)
    if user.is_authenticated or per_page not in (PER_PAGE, PAGE_ROWS):
        return _leaderboard(user, *args)
    filters = {"release": release, "form": form, "start": start, "end": end, "isolated": isolated}
    if boardcache.key("board", board_stamp(), filters) is not None:
        from pitweb.runs import boardstore

        found = boardstore.stored_leaderboard(
            filters, page=page, per_page=per_page, after=after, before=before
        )
        if found is not None:
            return found
    # a query no link of the board leads to (a value no public run has: an empty board),
    # or a board whose first computation is under way elsewhere
    return _leaderboard(user, *args)


def _leaderboard(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
    isolated: bool,
    page: int,
    per_page: int,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    with board_read():
        return _leaderboard_read(
            user, release, form, start, end, isolated, page, per_page, after, before
        )


def _leaderboard_read(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
    isolated: bool,
    page: int,
    per_page: int,
    after: str | None,
    before: str | None,
) -> dict[str, Any]:
    runs = _board_runs(user, release, form, start, end, isolated)
    ranked = ranked_runs(runs)
    ranks = Ranks(ranked)
    total = len(ranks)
    offset = ranks.offset(after, before, per_page)
    if offset is None:
        pages = max(1, -(-total // per_page))
        offset = (min(max(1, page), pages) - 1) * per_page
    rows = [leaderboard_row(r) for r in ranked[offset : offset + per_page]]
    ranks.number(rows, offset)
    return {
        "ranked": rows,
        **{
            name: [_apart_row(name, r) for r in qs[:APART_LIMIT]]
            for name, qs in _apart(runs).items()
        },
        "pagination": boardkeys.pages_around(
            ranks.keys[offset : offset + len(rows)], offset + 1, total, per_page
        ),
        "min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES,
        "computed_at": timezone.now().isoformat(),
        "current": True,
    }


def _apart_row(section: str, run: Run) -> dict[str, Any]:
    row = leaderboard_row(run)
    if section == "unranked":
        row["why_apart"] = row.get("platform_status", "")
    elif section == "mask_leaks":
        row["why_apart"] = "the mask probe recovered real dates: the shifted arm's control is void"
    elif section == "errors":
        row["why_apart"] = f"cells that did not complete: {run.error_cells}"
    elif section == "invalid":
        row["why_apart"] = "invalid: network egress or aborted"
    else:
        row["why_apart"] = row.get("withheld_because", "")
    return row


def leaderboard_export(
    *,
    user: User | AnonymousUser,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
    isolated: bool = False,
) -> dict[str, Any]:
    """The whole board for CSV/JSON export: every ranked run, then the rest, read
    together (``board_read``)."""
    runs = _board_runs(user, release, form, start, end, isolated)
    ranked_qs = ranked_runs(runs)
    with board_read():
        ranks = Ranks(ranked_qs)
        ranked = [leaderboard_row(r) for r in ranked_qs.iterator(chunk_size=2000)]
        ranks.number(ranked, 0)
        return {
            "ranked": ranked,
            **{name: [_apart_row(name, r) for r in qs] for name, qs in _apart(runs).items()},
        }


def family_attempts(user: User | AnonymousUser, family_id: int | None) -> dict[str, Any] | None:
    """A family's attempts as ``user`` may see them, each as a board row, the ranked best
    (if any) with its family-wise interval for every attempt counted; None when the
    requester may see none of its runs (a family of only hidden runs answers like one
    that does not exist). Counted attempts include what the requester cannot see."""
    if family_id is None:
        return None
    family = Family.objects.select_related("submitter").filter(pk=family_id).first()
    if family is None:
        return None
    runs = (
        visible_runs(user)
        .filter(family=family)
        .select_related("platform", "platform__prices")
        .defer("body", "config", "release__manifest", "platform__figures")
    )
    shown = list(runs.order_by("submitted_at", "pk")[:APART_LIMIT])
    if not shown:
        return None
    best = ranked_runs(runs.filter(withdrawn_at=None)).first()
    rows = [leaderboard_row(r) for r in shown]
    out: dict[str, Any] = {
        "family": family.pk,
        "submitter": family.submitter.username,
        "agent": family.agent,
        "release_digest": family.release_digest,
        "window": f"{family.window_start}..{family.window_end}",
        "attempts": family.attempts,
        "attempts_shown": runs.count(),
        "confidence": sidak_confidence(max(1, family.attempts)),
        "best": None,
        "runs": rows,
    }
    if best is not None:
        score = best.platform
        assert score is not None and score.shifted_pit_tails is not None  # ranked
        low, high = family_interval(Tails.from_json(score.shifted_pit_tails), family.attempts)
        out["best"] = {
            "run_id": best.run_id,
            "submission": best.pk,
            "body_sha256": best.body_sha256,
            "platform_shifted_pit": score.shifted_pit,
            "interval_95_alone": [score.shifted_pit_low, score.shifted_pit_high],
            "interval_family_wise": [low, high],
        }
        for row in rows:
            row["family_best"] = row["submission"] == best.pk
    return out


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


def latest_snapshot(filters: dict[str, Any]) -> Snapshot | None:
    """The newest snapshot of a board drawn with ``filters``: what "cite this board" names."""
    from pitweb.runs.services.snapshots import filters_key

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


def worker_label(name: str, user: User | AnonymousUser) -> str:
    """A worker as the requester may see it: staff see its name (host and process id);
    anyone else a stable pseudonym, the same on every page, that tells workers apart
    and names no host."""
    if not name or (user.is_authenticated and user.is_staff):
        return name
    return "worker-" + salted_hmac("pitweb.runs.worker", name).hexdigest()[:10]


def _as_seen_by(jobs: list[VerificationJob], user: User | AnonymousUser) -> list[VerificationJob]:
    """The jobs for display: each worker by ``worker_label`` (the rows are never saved)."""
    for job in jobs:
        job.worker = worker_label(job.worker, user)
    return jobs


def run_jobs(run: Run, *, user: User | AnonymousUser) -> list[VerificationJob]:
    """A run's jobs, oldest first, as ``user`` may see them."""
    jobs = list(run.jobs.select_related("requested_by").order_by("created_at", "id"))
    return _as_seen_by(jobs, user)


def visible_job(user: User | AnonymousUser, job_id: int) -> VerificationJob | None:
    """A job of a run the requester may see, or None: a job of any other run answers
    exactly like a job that does not exist."""
    found = list(
        VerificationJob.objects.select_related("run", "requested_by").filter(
            pk=job_id, run__in=visible_runs(user).values("pk")
        )
    )
    return _as_seen_by(found, user)[0] if found else None


def job_diffs(jobs: list[VerificationJob]) -> list[dict[str, Any]]:
    """Each job beside what changed since the previous one (state and per-check results)."""
    out = []
    before: dict[str, str] = {}
    previous_state = None
    for job in jobs:
        now = {c["name"]: c["status"] for c in job.checks}
        changed = (
            sorted(
                f"{name}: {before.get(name, '-')} -> {status}"
                for name, status in now.items()
                if before.get(name) != status
            )
            if before
            else []
        )
        out.append(
            {
                "job": job,
                "changed": changed,
                "state_changed": previous_state is not None and previous_state != job.state,
            }
        )
        if now:
            before = now
        previous_state = job.state
    return out


def changelog(limit: int = 200) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(public=True).select_related("actor", "run")[:limit]


def _recent_job_row(job: VerificationJob, shown: bool) -> dict[str, Any]:
    """A finished job's row. Of a run the requester may not see, only its state and how
    long it took: no job number, run id, body hash or link."""
    row: dict[str, Any] = {"job": None, "run_id": None, "page": None}
    if shown:
        row = {
            "job": job.pk,
            "run_id": job.run.run_id,
            "page": reverse("run", args=[job.run.body_sha256.removeprefix("sha256:")])
            + f"?submission={job.run.pk}",
        }
    return {
        **row,
        "state": job.state,
        "seconds": round((job.finished_at - job.created_at).total_seconds(), 3),  # type: ignore[operator]
    }


def status_data(user: User | AnonymousUser) -> dict[str, Any]:
    """The queue, every worker marked live or stale by its heartbeat, and the latest jobs,
    as ``user`` may see them: every job is counted, but only the runs ``visible_runs``
    lets them see are named, and workers go by ``worker_label``. Six queries, however
    many workers and jobs."""
    now = timezone.now()
    queue = machine.queue_summary(VerificationJob)
    stale_after = timedelta(seconds=settings.PITWEB_STALE_AFTER_SECONDS)
    workers = [
        {
            "worker": worker_label(w.name, user),
            "last_heartbeat": w.last_seen.isoformat(),
            "agent_isolation": "available"
            if w.isolation
            else f"unavailable: {w.isolation_unavailable or 'not probed'}",
            "state": "stopped"
            if w.stopped_at
            else ("live" if now - w.last_seen <= stale_after else "stale"),
        }
        for w in WorkerBeat.objects.order_by("-last_seen")[:50]
    ]
    recent = list(
        VerificationJob.objects.exclude(finished_at=None)
        .select_related("run")
        .only("state", "created_at", "finished_at", "run", "run__run_id", "run__body_sha256")
        .order_by("-finished_at")[:20]
    )
    shown = set(
        visible_runs(user).filter(pk__in={j.run_id for j in recent}).values_list("pk", flat=True)
    )
    return {
        "queue_depth": queue["depth"],
        "verifying": queue["running"],
        "oldest_waiting_seconds": (now - queue["oldest"]).total_seconds()
        if queue["oldest"]
        else None,
        "workers": workers,
        "recent_latencies": [_recent_job_row(j, j.run_id in shown) for j in recent],
    }
