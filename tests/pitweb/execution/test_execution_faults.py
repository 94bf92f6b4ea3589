"""The site executes a registered agent under a fault plan staff choose (seed 002): the
plan refused by rule before anything is queued, the run's receipt carrying the plan and
its rank-neutral evidence, the run page showing both, the run ranked only beside runs
under the same plan, and a re-execution run under the same faults.

Celery runs eagerly here (each cell, then the assembly, then the verification)."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.core.errors import SubmissionError
from pitweb.execution import services
from pitweb.execution.models import ExecutionJob, ExecutionState
from pitweb.runs.models import JobState
from tests.pitweb.conftest import token_client
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)
WINDOW = {"start": date(2023, 3, 1), "end": date(2023, 3, 8), "forms": ["8-K"], "probe": 0}
PLAN = {
    "schema_version": "sharpebench.fault-plan.v1",
    "seed": 3,
    "declared_relaxations": ["submission_acceptance", "position_sign_convention"],
    "faults": [
        {"id": "limit", "cohort_ppm": 1_000_000,
         "fault": {"mode": "rate_limit", "max_rejected_presentations": 2}},
        {"id": "flip", "cohort_ppm": 1_000_000,
         "fault": {"mode": "amount_sign", "max_span_steps": 3}},
    ],
}  # fmt: skip


@pytest.fixture()
def packages(settings: Any) -> None:
    settings.PITWEB_AGENT_PACKAGES = {
        "pit-stdio-python": {
            "argv": ["python3", "{examples}/agents/pit_stdio.py"],
            "dialect": "pit",
        },
    }


def test_staff_execute_an_agent_under_a_plan_and_the_run_page_shows_its_evidence(
    priced_release: Any, submitter: User, staff: User, packages: None
) -> None:
    require_sandbox()
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    plain = services.execution_request(by=submitter, agent=agent, release=priced_release, **WINDOW)
    job = services.execution_request(
        by=staff, agent=agent, release=priced_release, fault_plan=PLAN, **WINDOW
    )
    job.refresh_from_db()
    plain.refresh_from_db()
    assert job.state == ExecutionState.EXECUTED, job.message
    made, unfaulted = job.made, plain.made
    assert made is not None and unfaulted is not None
    assert made.status == JobState.VERIFIED
    # the owner's run, though staff asked for it: it counts in the owner's family
    assert made.submitter == submitter and job.requested_by == staff
    assert made.family is not None and made.family.submitter == submitter
    body = made.body
    report = body["fault_injection"]
    assert body["config"]["fault_plan"]["sha256"] == report["plan_sha256"]
    assert {d["fault_id"]: d["assigned"] for d in report["denominators"]} == {"limit": 9, "flip": 9}
    assert any(d["fired"] for d in report["denominators"])
    # the book is the agent's own: the reference agent restates, so it loses nothing
    trades = {(c["arm"], c["clock"]): c["trades"] for c in body["cells"]}
    assert trades == {(c["arm"], c["clock"]): c["trades"] for c in unfaulted.body["cells"]}
    # ranked only beside runs under the same plan
    assert made.benchmark_id != unfaulted.benchmark_id
    assert "under fault plan " + report["plan_sha256"][:12] in made.benchmark.name

    page = Client().get(f"/runs/{made.body_sha256.removeprefix('sha256:')}/").content.decode()
    assert 'id="fault-plan"' in page and report["plan_sha256"] in page
    assert "submission acceptance is relaxed" in page
    assert "enters no figure and no rank" in page
    plain_page = Client().get(f"/runs/{unfaulted.body_sha256.removeprefix('sha256:')}/")
    assert 'id="fault-plan"' not in plain_page.content.decode()

    # a re-execution runs under the same faults, and reproduces every decision
    again = services.reexecution_request(by=staff, run=made, reason="check the faults")
    again.refresh_from_db()
    assert again.state == ExecutionState.REPRODUCED, (again.state, again.message)
    assert again.config["fault_plan"]["sha256"] == report["plan_sha256"]


def test_only_staff_choose_a_plan_and_a_refused_plan_queues_nothing(
    registered: Any, submitter: User, staff: User, packages: None
) -> None:
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    with pytest.raises(SubmissionError, match="only staff") as refused:
        services.execution_request(by=submitter, agent=agent, release=registered,
                                   fault_plan=PLAN, **WINDOW)  # fmt: skip
    assert refused.value.http_status == 403
    undeclared = {**PLAN, "declared_relaxations": ["submission_acceptance"]}
    with pytest.raises(SubmissionError, match="used but not declared: position_sign_convention"):
        services.execution_request(by=staff, agent=agent, release=registered,
                                   fault_plan=undeclared, **WINDOW)  # fmt: skip
    with pytest.raises(SubmissionError, match="not JSON"):
        services.execution_request(by=staff, agent=agent, release=registered,
                                   fault_plan="{", **WINDOW)  # fmt: skip
    assert not ExecutionJob.objects.exists()

    # the API says the same, with a 400 and nothing queued
    given = {"release": registered.content_digest, "start": "2023-03-01", "end": "2023-03-08",
             "fault_plan": {**PLAN, "faults": PLAN["faults"] + [PLAN["faults"][0]]}}  # fmt: skip
    answer = token_client(staff).post("/api/agents/ref/executions/", given, format="json")
    assert answer.status_code == 400, answer.content
    assert "used twice" in json.dumps(answer.json())
    answer = token_client(submitter).post(
        "/api/agents/ref/executions/", {**given, "fault_plan": PLAN}, format="json"
    )
    assert answer.status_code == 403
    assert not ExecutionJob.objects.exists()
