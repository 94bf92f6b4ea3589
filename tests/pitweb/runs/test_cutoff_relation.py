"""Where a run's window lies against its model's declared training cutoff: read off the
receipt at intake (its P2 check) with the declared cutoff and the agent's digest, the
same for runs stored before the columns existed (the migration's backfill), and said
in words on the run's page."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)

# (fixture, P2 check in the receipt, relation stored, cutoff declared)
CASES = [
    ("picky_run", "window_starts_after_cutoff", "post_cutoff", "2022-12-31"),
    ("crossing_run", "window_crosses_cutoff", "crossing", "2023-03-03"),
    ("pre_cutoff_run", "window_ends_before_cutoff", "pre_cutoff", "2023-03-08"),
    ("stub_run", None, "", ""),
]
FIELDS = ("agent_digest", "training_cutoff", "cutoff_relation")


@pytest.mark.parametrize(("fixture", "check", "relation", "cutoff"), CASES)
def test_intake_stores_the_receipts_cutoff_relation(
    registered: Any, submitter: User, request: pytest.FixtureRequest,
    fixture: str, check: str | None, relation: str, cutoff: str,
) -> None:  # fmt: skip
    run = submit_run(submitter, request.getfixturevalue(fixture))
    assert run.body["protocol"]["P2_training_cutoffs"].get("check") == check
    assert (run.training_cutoff, run.cutoff_relation) == (cutoff, relation)
    assert run.agent_digest == ""  # a Python agent has no package digest


def test_intake_stores_the_digest_of_an_agent_in_another_process(
    registered: Any, submitter: User, memory_cheat_run: Artifacts
) -> None:
    run = submit_run(submitter, memory_cheat_run)
    digest = run.body["config"]["agent_digest"]
    assert digest.startswith("sha256:") and run.agent_digest == digest


def test_the_backfill_reads_each_stored_body_as_intake_does(
    registered: Any, submitter: User, picky_run: Artifacts, crossing_run: Artifacts,
    pre_cutoff_run: Artifacts, stub_run: Artifacts, memory_cheat_run: Artifacts,
) -> None:  # fmt: skip
    runs = [
        submit_run(submitter, a)
        for a in (picky_run, crossing_run, pre_cutoff_run, stub_run, memory_cheat_run)
    ]
    at_intake = {r.pk: tuple(getattr(r, f) for f in FIELDS) for r in runs}
    assert {v[2] for v in at_intake.values()} == {"post_cutoff", "crossing", "pre_cutoff", ""}
    Run.objects.update(agent_digest="", training_cutoff="", cutoff_relation="")  # stored before
    import_module("pitweb.runs.migrations.0023_holdouts_and_forward_tested").backfill(apps, None)
    assert {r.pk: tuple(getattr(r, f) for f in FIELDS) for r in Run.objects.all()} == at_intake


@pytest.mark.parametrize(
    ("fixture", "said"),
    [
        ("picky_run", "the window lies after the declared training cutoff"),
        ("pre_cutoff_run", "inside the training data"),
        ("crossing_run", "the window crosses the declared training cutoff"),
        ("stub_run", "no training cutoff declared"),
    ],
)
def test_the_run_page_says_the_relation_in_words(
    registered: Any, submitter: User, request: pytest.FixtureRequest, fixture: str, said: str
) -> None:
    run = submit_run(submitter, request.getfixturevalue(fixture))
    page = Client().get(f"/runs/{run.body_sha256[7:]}/").content.decode()
    start = page.index('id="cutoff-relation"')
    assert said in page[start : page.index("</dd>", start)]
