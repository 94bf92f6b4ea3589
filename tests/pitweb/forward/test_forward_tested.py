"""The forward-tested mark: on a forward run settled as forward, the site's execution of
the committed package, and on no other run. Never on a run whose agent digest differs
from the commitment's, never on an upload (whatever digest it states), never while the
forward row is anything but forward, never on another run of the same package (its
backtest proved nothing about the future); shown on the run's page (with its
commitment), its board row and its family.

The forward row is settled here as the engine's check would leave it; the check itself,
over real executions, is in test_forward_execution.py."""

from __future__ import annotations

import shlex
import sys
from datetime import date
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from harness.agents import memory_cheat
from harness.agents.external import command_agent
from pitweb.board.query import SECTIONS
from pitweb.execution import services as execution
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.forward.services import commitment_create, forward_tested_mark
from pitweb.releases.models import Release
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, make_run

pytestmark = pytest.mark.django_db(transaction=True)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"


@pytest.fixture(scope="module")
def other_package_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, reference_file: Path
) -> Artifacts:
    """Another agent package (the stdio example) over the cheat's benchmark."""
    command = shlex.join([sys.executable, str(EXAMPLES / "pit_stdio.py")])
    return make_run(
        site_release, tmp_path_factory.mktemp("other-package"), reference_file,
        agent=command_agent(command), agent_cmd=command, agent_process="in_process",
    )  # fmt: skip


@pytest.fixture()
def cheat(settings: Any, memory_cheat_run: Artifacts, staff: User, submitter: User) -> Any:
    """The cheat's command registered as a package on the workers: its digest is the one
    ``memory_cheat_run``'s receipt states."""
    memory = memory_cheat_run.receipt.parent.parent / "memory.json"
    settings.PITWEB_AGENT_PACKAGES = {
        "cheat": {"argv": [sys.executable, memory_cheat.__file__, str(memory)], "dialect": "pit"}
    }
    return execution.agent_register(by=staff, name="cheat", owner=submitter, package="cheat")


@pytest.fixture()
def commitment(cheat: RegisteredAgent, priced_release: Release, submitter: User) -> Commitment:
    return commitment_create(
        by=submitter, agent=cheat, release=priced_release, forms=["8-K"], hold_sessions=5,
        clocks=["pit"], arms=["main", "shifted"],
    )  # fmt: skip


def settled(
    commitment: Commitment, status: str, run: Run, kind: str = ForwardRun.Kind.FORWARD
) -> ForwardRun:
    """A forward row of the commitment whose run is ``run``, settled with ``status``."""
    job = ExecutionJob.objects.create(
        kind=ExecutionJob.Kind.EXECUTE, state="executed", agent=commitment.agent,
        release=commitment.release, config={},
    )  # fmt: skip
    return ForwardRun.objects.create(
        commitment=commitment, kind=kind, release=commitment.release, start=date(2023, 3, 13),
        end=date(2023, 3, 15), sessions=3, priced_through=date(2023, 3, 20), job=job,
        status=status, run=run,
    )  # fmt: skip


def stored(user: User, artifacts: Artifacts, *, executed: bool) -> Run:
    files = artifacts.files()
    run = services.run_submit(
        user=user, receipt=files["receipt"], trajectory=files["trajectory"],
        prices=files.get("prices"), executed=executed,
    ).run  # fmt: skip
    run.refresh_from_db()
    return run


@pytest.fixture()
def runs(
    commitment: Commitment, submitter: User, other: User, memory_cheat_run: Artifacts,
    other_package_run: Artifacts,
) -> dict[str, Run]:  # fmt: skip
    """The committed package executed by the site, the same receipt uploaded by someone
    else, and another package executed by the site."""
    found = {
        "executed": stored(submitter, memory_cheat_run, executed=True),
        "uploaded": stored(other, memory_cheat_run, executed=False),
        "other_package": stored(submitter, other_package_run, executed=True),
    }
    assert found["executed"].agent_digest == commitment.agent_digest
    assert found["uploaded"].agent_digest == commitment.agent_digest
    assert found["other_package"].agent_digest not in ("", commitment.agent_digest)
    return found


def marks(runs: dict[str, Run]) -> dict[str, bool]:
    return {name: Run.objects.get(pk=run.pk).forward_tested for name, run in runs.items()}


def board_rows(run: Run) -> list[dict[str, Any]]:
    assert run.benchmark is not None
    board = Client().get("/api/leaderboard/", {"benchmark": run.benchmark.key}).json()
    return [r for n in SECTIONS for r in board[n] if r["submission"] == run.pk]


def test_only_the_forward_run_itself_is_marked(
    commitment: Commitment, runs: dict[str, Run], submitter: User, memory_cheat_run: Artifacts
) -> None:
    row = settled(commitment, ForwardRun.Status.FORWARD, runs["executed"])
    assert forward_tested_mark(forward_run_id=row.pk) == [runs["executed"].pk]
    assert marks(runs) == {"executed": True, "uploaded": False, "other_package": False}
    assert forward_tested_mark(forward_run_id=row.pk) == []  # once
    # the same package executed again (its backtest, say): nothing about it is forward
    backtest = settled(commitment, ForwardRun.Status.BACKTEST, runs["other_package"],
                       kind=ForwardRun.Kind.BACKTEST)  # fmt: skip
    assert forward_tested_mark(forward_run_id=backtest.pk) == []
    assert not Run.objects.get(pk=runs["other_package"].pk).forward_tested


@pytest.mark.parametrize("which", ["uploaded", "other_package"])
def test_never_a_run_whose_digest_differs_or_that_the_site_did_not_execute(
    commitment: Commitment, runs: dict[str, Run], which: str
) -> None:
    """A forward row settled forward whose run is an upload, or another package's run
    (the engine would not settle it so; the mark checks again)."""
    row = settled(commitment, ForwardRun.Status.FORWARD, runs[which])
    assert forward_tested_mark(forward_run_id=row.pk) == []
    assert not any(marks(runs).values())


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (ForwardRun.Status.NOT_FORWARD, ForwardRun.Kind.FORWARD),
        (ForwardRun.Status.FAILED, ForwardRun.Kind.FORWARD),
        (ForwardRun.Status.QUEUED, ForwardRun.Kind.FORWARD),
        (ForwardRun.Status.BACKTEST, ForwardRun.Kind.BACKTEST),
    ],
)
def test_no_run_is_marked_unless_its_forward_row_is_forward(
    commitment: Commitment, runs: dict[str, Run], status: str, kind: str
) -> None:
    row = settled(commitment, status, runs["executed"], kind)
    assert forward_tested_mark(forward_run_id=row.pk) == []
    assert not any(marks(runs).values())
    assert all(not row["forward_tested"] for row in board_rows(runs["executed"]))


def test_a_later_execution_of_a_proven_package_is_not_marked(
    commitment: Commitment, runs: dict[str, Run], staff: User, memory_cheat_run: Artifacts
) -> None:
    row = settled(commitment, ForwardRun.Status.FORWARD, runs["executed"])
    forward_tested_mark(forward_run_id=row.pk)
    again = stored(staff, memory_cheat_run, executed=True)
    assert again.agent_digest == commitment.agent_digest and not again.forward_tested


def test_the_mark_reaches_the_board_row_family_and_run_page(
    commitment: Commitment, runs: dict[str, Run]
) -> None:
    run = runs["executed"]
    [before] = board_rows(run)  # the public board, now cached
    assert before["forward_tested"] is False
    forward = settled(commitment, ForwardRun.Status.FORWARD, run)
    forward_tested_mark(forward_run_id=forward.pk)
    [row] = board_rows(run)  # the board was told: no stale answer
    assert row["forward_tested"] is True
    assert [r["forward_tested"] for r in board_rows(runs["uploaded"])] == [False]
    family = Client().get(f"/api/families/{run.family_id}/").json()
    assert family["forward_tested"] is True
    assert (
        Client().get(f"/api/families/{runs['uploaded'].family_id}/").json()["forward_tested"]
        is False
    )
    heading = Client().get(f"/families/{run.family_id}/").content.decode().split("</h1>")[0]
    assert "forward-tested</span>" in heading
    page = Client().get(f"/runs/{run.body_sha256[7:]}/?submission={run.pk}").content.decode()
    assert 'id="forward-tested"' in page
    assert f'href="/forward/commitments/{commitment.entry.seq}/"' in page
    uploaded = runs["uploaded"]
    other_page = Client().get(f"/runs/{uploaded.body_sha256[7:]}/?submission={uploaded.pk}")
    assert 'id="forward-tested"' not in other_page.content.decode()


def test_the_migration_marks_the_runs_stored_before_the_mark_existed(
    commitment: Commitment, runs: dict[str, Run]
) -> None:
    settled(commitment, ForwardRun.Status.FORWARD, runs["executed"])
    settled(commitment, ForwardRun.Status.BACKTEST, runs["other_package"], ForwardRun.Kind.BACKTEST)
    import_module("pitweb.runs.migrations.0023_holdouts_and_forward_tested").backfill(apps, None)
    assert marks(runs) == {"executed": True, "uploaded": False, "other_package": False}
