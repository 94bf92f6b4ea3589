"""The run page draws the placebo split of a window that crosses the declared training
cutoff from the run's platform figures (the proven numbers), with its table and a caption
that says only what the intervals support; any other run's page draws none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.receipt.placebo import placebo_reading
from tests.pitweb.conftest import Artifacts, make_run, submit_run

pytestmark = pytest.mark.django_db(transaction=True)  # verification runs on commit

CUTOFF = "2023-03-03"


@pytest.fixture(scope="module")
def crossing_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, reference_file: Path
) -> Artifacts:
    """An agent that trades differently per arm only up to its declared cutoff (as a
    model that remembers the period up to there would), over a window that crosses it."""
    from harness.agents.adapters.plain import from_callable

    def remembers_until_cutoff(prompt: str, tools: Any) -> list[str]:
        listed = tools.pit_list(limit=None)
        rows = listed["rows"]
        if listed["session_date"] <= CUTOFF and any(r.get("issuer") for r in rows):
            return [r["row_key"] for r in rows[::2]]  # the main arm, before the cutoff
        return [r["row_key"] for r in rows]

    return make_run(
        site_release,
        tmp_path_factory.mktemp("crossing"),
        reference_file,
        agent=from_callable(remembers_until_cutoff, name="remembers-until-cutoff"),
        training_cutoff=CUTOFF,
    )


def _page(run: Any) -> str:
    sha = run.body_sha256.removeprefix("sha256:")
    html: str = Client().get(f"/runs/{sha}/?submission={run.pk}").content.decode()
    return html


def test_a_crossing_run_draws_its_placebo_split_with_table_and_caption(
    priced_release: Any, submitter: User, crossing_run: Artifacts
) -> None:
    run = submit_run(submitter, crossing_run)
    assert run.status == "verified" and run.platform.state == "scored"
    split = run.platform.figures["placebo"]
    assert split["cutoff"] == CUTOFF
    html = _page(run)
    assert f"Placebo split at the declared training cutoff {CUTOFF}" in html
    assert 'id="placebo-table"' in html
    figure = json.loads(
        html.split('id="fig-placebo" type="application/json">')[1].split("</script>")[0]
    )
    before, after = figure["data"]
    assert (before["name"], after["name"]) == ("before the cutoff", "after the cutoff")
    pit = split["clocks"]["pit"]
    assert before["x"][-1] == "pit"
    assert before["y"][-1] == pytest.approx(pit["before"]["main_minus_shifted"] * 100)
    assert before["error_y"]["array"][-1] == pytest.approx(
        (pit["before"]["main_minus_shifted_interval_95"][1] - pit["before"]["main_minus_shifted"])
        * 100
    )
    assert after["y"][-1] == pytest.approx(0)  # every arm bought alike after the cutoff
    caption = html.split('id="placebo-caption">')[1].split("</p>")[0]
    reading = placebo_reading(split, "pit").replace("'", "&#x27;")
    assert reading in caption and "memory predicts a delta before it and none after" in caption


def test_a_run_whose_window_does_not_cross_a_cutoff_draws_no_split(
    priced_release: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts
) -> None:
    for artifacts in (stub_run, picky_run):  # no cutoff; a cutoff before the window
        run = submit_run(submitter, artifacts)
        assert run.status == "verified" and run.platform.state == "scored"
        assert "placebo" not in run.platform.figures
        html = _page(run)
        assert 'id="fig-deltas"' in html or "no bar to draw" in html  # the page drew its figures
        for absent in ("fig-placebo", "placebo-table", "placebo-caption", "Placebo split"):
            assert absent not in html
