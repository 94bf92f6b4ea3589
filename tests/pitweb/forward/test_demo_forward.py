"""The demo's forward track, as `make demo` seeds it, on a real worker: the memorising
agent's backtest beats its forward run by more than chance explains (its decay's interval
lies above zero), the reference agent's decay cannot be told from zero, both labelled
SYNTHETIC; and the cheat's run across its declared cutoff shows the placebo split, a
contamination delta before the cutoff and none the data can tell after it. Then the formal
cohorts the demo seeds after it: a sealed set answered before its reveal and judged after,
and a live-shadow cohort resolved."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape

from harness.forward.log import verify_log
from harness.receipt.placebo import placebo_reading
from pitweb.forward.models import LogEntry
from pitweb.jobs.models import WorkerBeat
from pitweb.points.models import PointSet
from pitweb.runs.models import Run
from tests.pitweb.execution.test_execution_workers import real_broker  # noqa: F401 - autouse
from tests.pitweb.jobs.test_worker_integration import stop, wait_for, worker, worker_env
from tests.support.sandbox import require_sandbox

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_demo_forward_board_shows_the_cheat_s_decay_and_the_reference_s_none(
    settings: Any, artifact_dir: Path, tmp_path: Path
) -> None:
    require_sandbox()
    settings.VAR_DIR = tmp_path / "var"  # the demo's files, the worker's too
    staff = User.objects.create_user("staff", password="x", is_staff=True)
    User.objects.create_user("demo", password="x")
    log = tmp_path / "worker.log"
    process = worker(worker_env(artifact_dir), log, "demo-forward")
    try:
        wait_for(lambda: WorkerBeat.objects.filter(stopped_at=None).exists(), "a worker", log)
        call_command("demo_forward", staff=staff.username, submitter="demo", timeout=900)
        # then the formal cohorts, whose log entries follow the forward track's
        call_command("demo_cohorts", staff=staff.username, submitter="demo", timeout=300,
                     stdout=io.StringIO())  # fmt: skip
    finally:
        stop(process)
    _formal_cohorts_seeded()
    answer = Client().get("/forward/board/", {"format": "json"})
    rows = {r["agent"]: r for r in answer.json()["forward-board"]}
    cheat, reference = rows["memory-cheat-forward"], rows["reference-pit"]
    assert cheat["ranked"] and reference["ranked"], (cheat, reference)
    assert cheat["backtest_return"] > cheat["forward_return"]
    assert cheat["decay_interval_95"][0] > 0  # the edge is gone forward
    assert reference["decay_interval_95"][0] < 0 < reference["decay_interval_95"][1]
    assert cheat["backtest_delta_shifted"] > 0  # its backtest beat its own shifted arm
    assert cheat["cutoff_precedes_backtest"] == "no"  # the backtest is inside its "memory"
    page = Client().get("/forward/board/").content.decode()
    assert "SYNTHETIC" in page and "edge lost" in page and "no decay the data can tell" in page

    crossing = Run.objects.get(executed=True, window_start="2024-02-01")
    assert crossing.body["protocol"]["P2_training_cutoffs"]["check"] == "window_crosses_cutoff"
    assert crossing.platform is not None
    split = crossing.platform.figures["placebo"]
    before, after = split["clocks"]["pit"]["before"], split["clocks"]["pit"]["after"]
    assert before["main_minus_shifted_interval_95"][0] > 0
    assert (
        after["main_minus_shifted_interval_95"][0]
        <= 0
        <= after["main_minus_shifted_interval_95"][1]
    )
    run_page = Client().get(f"/runs/{crossing.body_sha256.removeprefix('sha256:')}/")
    assert escape(placebo_reading(split, "pit")) in run_page.content.decode()


def _formal_cohorts_seeded() -> None:
    """The demo's formal cohorts: the sealed one answered before its reveal (two log
    entries) and judged after, with one answer set given after the reveal listed apart;
    the live-shadow one sealed before its as-of date and every point resolved."""
    sealed = PointSet.objects.get(name="markets-cohort")
    assert sealed.state == "revealed"
    before = sealed.answer_sets.filter(timing="before_reveal")
    assert before.count() == 2 and all(a.log_entry is not None for a in before)
    assert all(a.judged.exists() for a in sealed.answer_sets.all())
    live = PointSet.objects.get(name="synthetic-march-2024")
    assert live.state == "revealed" and live.live
    assert not live.points.filter(resolved_at__isnull=True).exists()
    assert live.answer_sets.get().judged.exists()
    kinds = list(LogEntry.objects.order_by("seq").values_list("kind", flat=True))
    assert kinds == ["commit", "commit", "seal", "answers", "answers", "answers"]
    verify_log(Client().get("/forward/log.json").json())
    apart = Client().get("/points/board/", {"format": "json", "table": "apart"}).json()
    late = [a for a in apart["points_apart"] if a["timing"] == "after_reveal"]
    assert [a["point_set"] for a in late] == ["markets-cohort"]
