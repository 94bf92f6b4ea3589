"""A release's page lists the declared models it is a holdout for: the (model, training
cutoff) of its public runs whose numbers were proven and whose window lies wholly after
that cutoff. A run that is hidden, withdrawn, private, unproven, or whose window crosses
or precedes its cutoff names no model there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, make_run, submit_run

pytestmark = pytest.mark.django_db(transaction=True)

LISTED = "<td>demo-1</td><td>2022-12-31</td>"  # picky_run's model and cutoff
OTHER = "<td>demo-later</td><td>2022-06-30</td>"


@pytest.fixture(scope="module")
def later_model_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """The stub agent declaring another model whose cutoff is before the window."""
    return make_run(
        site_release, tmp_path_factory.mktemp("later-model"), site_prices,
        model_version="demo-later", training_cutoff="2022-06-30",
    )  # fmt: skip


def _page(run: Run) -> str:
    assert run.release is not None
    return Client().get(f"/releases/{run.release.digest_hex}/").content.decode()


def _section(page: str) -> str:
    start = page.index('id="holdouts"')
    return page[start : page.index('id="versions"')]


def test_a_proven_public_post_cutoff_run_names_its_model(
    registered: Any, submitter: User, picky_run: Artifacts
) -> None:
    run = submit_run(submitter, picky_run)
    assert run.proven and run.cutoff_relation == "post_cutoff"
    section = _section(_page(run))
    assert "wholly after the model's declared training cutoff" in section
    assert LISTED in section


def test_runs_inside_or_across_their_cutoff_name_no_model(
    registered: Any, submitter: User, crossing_run: Artifacts, pre_cutoff_run: Artifacts
) -> None:
    crossing, pre = submit_run(submitter, crossing_run), submit_run(submitter, pre_cutoff_run)
    assert crossing.proven and pre.proven
    section = _section(_page(crossing))
    assert "demo-crossing" not in section and "demo-trained-on-it" not in section
    assert 'class="empty"' in section


def _hidden(run: Run, staff: User) -> None:
    services.run_set_hidden(run=run, staff=staff, hidden=True, reason="test: hidden")


def _withdrawn(run: Run, staff: User) -> None:
    services.run_withdraw(run=run, owner=run.submitter, reason="test: withdrawn")


def _private(run: Run, staff: User) -> None:
    Run.objects.filter(pk=run.pk).update(visibility="private")


def _unproven(run: Run, staff: User) -> None:
    # as a run stands before its verification has finished
    Run.objects.filter(pk=run.pk).update(verification_level="self_reported", status="received")


@pytest.mark.parametrize("made", [_hidden, _withdrawn, _private, _unproven])
def test_a_run_the_public_board_would_not_show_names_no_model(
    registered: Any, submitter: User, staff: User, picky_run: Artifacts,
    later_model_run: Artifacts, made: Callable[[Run, User], None],
) -> None:  # fmt: skip
    shown = submit_run(submitter, picky_run)
    kept_back = submit_run(submitter, later_model_run)
    assert OTHER in _section(_page(kept_back))
    made(kept_back, staff)
    section = _section(_page(shown))
    assert LISTED in section and OTHER not in section


def test_the_list_costs_the_same_queries_however_many_models(
    registered: Any, submitter: User, picky_run: Artifacts, later_model_run: Artifacts
) -> None:
    run = submit_run(submitter, picky_run)
    _page(run)  # warmed: what a first visit reads once (the archive's seal)
    with CaptureQueriesContext(connection) as one:
        assert LISTED in _page(run)
    submit_run(submitter, later_model_run)
    _page(run)
    with CaptureQueriesContext(connection) as two:
        page = _page(run)
    assert LISTED in page and OTHER in page
    assert 0 < len(two.captured_queries) == len(one.captured_queries)
