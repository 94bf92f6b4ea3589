"""Which runs a board holds, and in which section: the ranked ones in ranking order, and
the others apart, each for its reason. Querysets only; every read of the board (computed,
stored, exported) starts here."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import F, Q, QuerySet, Value, Window
from django.db.models.functions import Coalesce, RowNumber

from pitweb.board.filters import CUTOFFS
from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import PROVEN_LEVELS, Run, VerificationLevel
from pitweb.runs.selectors import visible_runs

PER_PAGE = 100
# a page of the site shows half the API's rows: the table and its chart are drawn by the
# visitor's browser, whose time grows with every row (the API's answer is read by code)
PAGE_ROWS = 50
APART_LIMIT = 200
SECTIONS = ("ranked", "unranked", "mask_leaks", "errors", "failed", "pending", "invalid")


def board_runs(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
    isolated: bool = False,
    benchmark: str | None = None,
    cutoff: str | None = None,
) -> QuerySet[Run]:
    runs = (
        visible_runs(user)
        .filter(withdrawn_at=None)
        .select_related("platform", "platform__prices", "benchmark")
        .defer(
            "body",
            "config",
            "release__manifest",
            "platform__figures",
        )
    )
    if benchmark:
        runs = runs.filter(benchmark__key=benchmark)
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
    if cutoff:
        runs = runs.filter(cutoff_relation=CUTOFFS[cutoff])
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


def apart(runs: QuerySet[Run]) -> dict[str, QuerySet[Run]]:
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
