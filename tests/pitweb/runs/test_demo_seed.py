"""The demo data goes through the same upload and verification paths as real runs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from pitweb.board.models import Snapshot
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.releases.models import ReferencePrices
from pitweb.runs.models import Family, JobState, Run

pytestmark = pytest.mark.django_db(transaction=True)


def test_demo_seed_submits_and_verifies_three_baselines(settings: Any, tmp_path: Path) -> None:
    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("demo_seed", rows=3000, stdout=out)
    runs = list(Run.objects.filter(is_baseline=True))
    assert len(runs) == 3
    assert {r.status for r in runs} == {JobState.VERIFIED}
    verdicts = {r.agent.rsplit(":", 1)[-1]: r.body["probe"]["verdict"] for r in runs}
    assert verdicts == {
        "stub": "mask_holds",
        "earliest_five": "mask_holds",
        "date_reader": "mask_leaks",
    }
    text = out.getvalue()
    assert "staff sign-in: staff / " in text and "submitter API token (user demo): pit_" in text
    assert all(
        r.body["protocol"]["P4_costs_and_frictions"]["prices"]["source"].startswith("SYNTHETIC")
        for r in runs
    )
    # the release has reference prices, and every run has platform figures priced with them
    [reference] = ReferencePrices.objects.all()
    assert reference.version == 1 and reference.source.startswith("SYNTHETIC reference")
    assert "registered reference prices v1" in text
    assert {r.platform.state for r in Run.objects.select_related("platform")} == {"scored"}
    # the reference agent: registered, uploaded, executed by the workers and re-executed
    [agent] = RegisteredAgent.objects.all()
    # and executed again under the demo's fault plan, whose run is ranked apart
    jobs = {(j.kind, "fault_plan" in j.config): j for j in ExecutionJob.objects.filter(agent=agent)}
    assert set(jobs) == {("execute", False), ("reexecute", False), ("execute", True)}
    execute, reexecute = jobs[("execute", False)], jobs[("reexecute", False)]
    assert execute.state == "executed" and reexecute.state == "reproduced"
    executed, uploaded = execute.made, reexecute.checked
    assert executed is not None and uploaded is not None and executed.executed
    assert {executed.verification_level, uploaded.verification_level} == {"reexecuted"}
    under_plan = jobs[("execute", True)].made
    assert under_plan is not None and under_plan.body["fault_injection"]["rank_neutral"]
    assert "under fault plan" in under_plan.benchmark.name
    assert "execution" in text and "reproduced" in text
    assert "published snapshot " in text and " sha256:" in text
    board = Client().get("/api/leaderboard/").json()
    # three holds among the baselines and the run under a fault plan: four benchmarks,
    # listed grouped, ranked across none
    assert board["grouped"] and len(board["benchmarks"]) == 4
    assert all(r["rank"] is None for r in board["ranked"])
    assert {r["agent"].rsplit(":", 1)[-1] for r in board["mask_leaks"]} == {"date_reader"}
    assert board["ranked"] and all(r["prices_version"] == 1 for r in board["ranked"])
    # the tuner's three holds are three benchmarks: an attempt each, each ranked on its own
    tuned = [r for r in board["ranked"] if r["submitter"] == "tuner"]
    assert len({r["benchmark"] for r in tuned}) == 3 and {r["attempts"] for r in tuned} == {1}
    for row in tuned:
        own = Client().get("/api/leaderboard/", {"benchmark": row["benchmark"]}).json()
        assert [r["rank"] for r in own["ranked"] if r["submitter"] == "tuner"] != [None]
        family = Client().get(f"/api/families/{row['family']}/").json()
        assert family["attempts"] == 1 and family["benchmark"]["key"] == row["benchmark"]
    call_command("demo_seed", rows=3000, stdout=io.StringIO())  # twice: nothing new
    # the baselines, the tuner's three, the cheat, the model-calling agent and the executions
    assert Run.objects.count() == 11 and ReferencePrices.objects.count() == 1
    model = Run.objects.get(agent="model_agent:agent")
    row = next(r for r in board["unranked"] + board["ranked"] if r["run_id"] == model.run_id)
    assert row["model_tokens"] > 0 and row["rate_card_version"] == 1
    assert row["model_cost_usd"].startswith("$0.") and row["model_cost_whole"] is True
    assert Snapshot.objects.count() == 4  # one per benchmark, not one per seeding
    assert [f.attempts for f in Family.objects.filter(submitter__username="tuner")] == [1, 1, 1]
    assert ExecutionJob.objects.count() == 3


def test_demo_seed_fails_when_a_baseline_does_not_complete(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A demo whose baseline ended in agent errors says so and exits non-zero, instead of
    printing a board of runs that show nothing."""
    from django.core.management.base import CommandError

    from pitweb.runs.management.commands import demo_seed

    settings.VAR_DIR = tmp_path
    monkeypatch.setattr(demo_seed, "AGENTS", ("tests.support.failing_baseline:decide",))
    with pytest.raises(CommandError, match=r"baseline tests.support.failing_baseline:decide"):
        call_command("demo_seed", rows=3000, stdout=io.StringIO())
    assert Run.objects.count() == 0


def test_demo_seed_answers_and_judges_the_demo_points_through_the_jobs(
    settings: Any, tmp_path: Path
) -> None:
    """Two demo readers of different quality answer the project's twelve points and the
    demo judge judges both, through real answer and judge jobs; the set is revealed."""
    from pitweb.points.models import JudgedSet, PointSet, PointsJob

    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("demo_seed", rows=3000, stdout=out)
    point_set = PointSet.objects.get(name="finance-demo")
    assert point_set.state == "revealed" and point_set.points.count() == 12
    assert set(PointsJob.objects.values_list("kind", "state")) == {
        ("answer", "done"),
        ("judge", "done"),
    }
    judged = {j.answer_set.model: j for j in JudgedSet.objects.select_related("answer_set")}
    careful = judged["demo-reader-careful-not-a-model"].summary
    hasty = judged["demo-reader-hasty-not-a-model"].summary
    assert careful["pass"] > hasty["pass"] and careful["pass"] + careful["fail"] == 12
    assert {j.status for j in judged.values()} == {"usable"}  # the demo's controls hold
    assert not any(j.rankable for j in judged.values())  # a demo judge: never ranked
    page = Client().get("/points/finance-demo/").content.decode()
    assert 'data-figure="fig-radar"' in page and 'data-figure="fig-suites"' in page
    assert point_set.salt in page and "demo-judge" in page
    call_command("demo_seed", rows=3000, stdout=io.StringIO())  # twice: nothing new
    assert JudgedSet.objects.count() == 2 and PointsJob.objects.count() == 4
