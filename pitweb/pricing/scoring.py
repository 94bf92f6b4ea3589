"""The work behind the scoring task: a run's platform figures with one reference-price
version. What the submitted bytes cause is theirs (refused); our own faults are retried
and then harness_error.

Imports go one way: the task imports this scoring, the scoring imports the services;
the services send the task by name and never import it or this module."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from harness.forward.standing import trades_json
from harness.market.frictions import CostModel
from harness.market.index import load_index
from harness.market.prices import load_prices
from harness.receipt.attempts import ranked_tails
from harness.receipt.rescore import Rescore, RescoreRefused, rescore
from pitweb.artifacts import copy_to, job_folder, release_copy
from pitweb.jobs import machine
from pitweb.jobs.machine import Outcome, retry_outcome
from pitweb.pricing import services
from pitweb.pricing.models import PlatformScore
from pitweb.releases.models import ReferencePrices
from pitweb.runs.models import Run

log = logging.getLogger(__name__)


def _rescored(score_id: int, run: Run, reference: ReferencePrices, release_dir: Path) -> Rescore:
    with job_folder("score", score_id) as work:
        prices = load_prices(
            copy_to(reference.file_name, work / "reference.csv"),
            source=reference.source,
            pulled_at=reference.pulled_at,
        )
        index = None
        if reference.index_symbol:
            index = load_index(
                copy_to(reference.index_name, work / "index.csv"),
                symbol=reference.index_symbol,
                source=reference.index_source,
                pulled_at=reference.index_pulled_at,
            )
        return rescore(
            copy_to(run.receipt_name, work / "receipt.json"),
            trajectory=copy_to(run.trajectory_name, work / "trajectory.jsonl"),
            release=release_dir,
            prices=prices,
            check_release=False,  # the copy was checked against the release's digest
            costs=site_costs(),
            index=index,
        )


def site_costs() -> CostModel:
    """The cost level the site states (``PITWEB_COST_BPS`` a side): every run's platform
    figures are computed at it as well as at zero."""
    return CostModel(settings.PITWEB_COST_BPS)


def score_run(*, score_id: int, worker: str) -> Outcome:
    """A run's platform figures with one reference-price version."""
    if not services.platform_claim(score_id=score_id, worker=worker):
        return Outcome("not claimed")
    score = PlatformScore.objects.select_related("run", "run__release", "prices").get(pk=score_id)
    run, reference = score.run, score.prices
    try:
        assert run.release is not None  # a run is stored only for a release the server holds
        with machine.Heartbeat(PlatformScore, score_id, worker):
            result = _rescored(score_id, run, reference, release_copy(run.release))
    except RescoreRefused as exc:  # by name: no stated value repeated
        refused = "the artifacts do not hold together: " + ", ".join(c.name for c in exc.failed)
        services.platform_finish(
            score_id=score_id, worker=worker, state=PlatformScore.State.REFUSED, message=refused
        )
        return Outcome(PlatformScore.State.REFUSED)
    except Exception as exc:  # our failure, never the run's
        log.exception("platform score %s failed", score_id)
        message = f"scorer error: {type(exc).__name__}: {exc}"[:2000]
        retry_in = services.platform_retry(score_id=score_id, worker=worker, message=message)
        return retry_outcome(PlatformScore, retry_in)
    services.platform_finish(
        score_id=score_id,
        worker=worker,
        state=PlatformScore.State.SCORED,
        figures=result.to_json(),
        tails=ranked_tails(result),
        # the forward board joins a commitment's runs trade by trade (a window's figure
        # alone cannot be pooled); other runs keep figures only: a whole release makes
        # millions of trades
        trades=trades_json(result.trades) if run.body["config"].get("forward") else None,
    )
    return Outcome(PlatformScore.State.SCORED)
