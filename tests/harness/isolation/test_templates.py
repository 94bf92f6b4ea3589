"""Sandboxes kept from one run to the next (a site's worker keeps them across cell jobs):
later runs fork their cells from the kept template and write what a fresh sandbox would,
nothing an agent leaves in a cell reaches a later run's cell, and a template that died, or
whose run failed or left a cell open, is never lent again."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents.adapters.plain import from_callable
from harness.agents.stub import stub
from harness.isolation.drivers import CELL_START, open_drivers
from harness.isolation.sandbox.outside import SandboxSettings, harness_root
from harness.isolation.templates import LOG_KEPT, Templates
from harness.runs.inputs import resolve_inputs
from harness.runs.records import CellRecord
from harness.runs.runner import assemble, cell_order, run_cell
from tests.harness.isolation.test_sandbox import MARKS, _leave_marks, _marks_found
from tests.support.sandbox import require_sandbox
from tests.support.sandbox import sandbox_config as config


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    require_sandbox()


@pytest.fixture
def templates() -> Iterator[Templates]:
    kept = Templates()
    yield kept
    kept.close()


def texts(record: CellRecord) -> list[dict[str, Any]]:
    """What the agent said in each decision of the cell, read back as JSON."""
    lines = [json.loads(line) for line in record.events.splitlines()]
    return [json.loads(e["text"]) for e in lines if e["event"] == "decision"]


def test_later_runs_fork_from_the_kept_template_and_write_what_the_cli_writes(
    march_release: Path, tmp_path: Path, templates: Templates
) -> None:
    site = config(march_release, tmp_path / "site")
    records = [
        run_cell(stub(), site, arm, clock, templates=templates) for arm, clock in cell_order(site)
    ]
    assembled = assemble(stub(), site, records, templates=templates)
    # nine cells and the assembly (its probe) from one sandbox, kept for the next run
    assert templates.started == 1 and len(templates) == 1
    cli = run(stub(), config(march_release, tmp_path / "cli"))
    assert assembled.body == cli.body
    assert assembled.body["capabilities"]["cell_start"] == CELL_START == "forked_from_template"
    assert assembled.body["capabilities"]["cells_isolated"] is True
    # a cell of a run started from nothing writes the same record
    fresh = run_cell(stub(), site, "shifted", "pit")
    assert (fresh.events, fresh.outcome) == (records[-1].events, records[-1].outcome)


def test_nothing_one_runs_agent_leaves_reaches_another_runs_cell_through_the_template(
    march_release: Path, tmp_path: Path, templates: Templates
) -> None:
    """Run A's agent leaves marks in every kernel channel it can find (a child process
    holding sockets, System V memory, the host name, /dev/shm, /tmp, the environment);
    run B, another agent whose cell forks from the same template, must find none."""

    def leaves_marks(prompt: str, tools: Any) -> dict[str, Any]:
        found = {**_marks_found(), "environment": "MAIN_PICKS" in os.environ}
        if not MARKS:
            _leave_marks()
            os.environ["MAIN_PICKS"] = "1"
        return {"picks": [], "text": json.dumps(found)}

    def looks_for_marks(prompt: str, tools: Any) -> dict[str, Any]:
        found = {**_marks_found(), "environment": "MAIN_PICKS" in os.environ}
        return {"picks": [], "text": json.dumps(found)}

    a = run_cell(
        from_callable(leaves_marks), config(march_release, tmp_path / "a"), "main", "leaky",
        templates=templates,
    )  # fmt: skip
    b = run_cell(
        from_callable(looks_for_marks), config(march_release, tmp_path / "b"), "main", "leaky",
        templates=templates,
    )  # fmt: skip
    assert templates.started == 1, "run B did not fork from run A's template: nothing tested"
    # the marks held within the cell that left them...
    left = texts(a)[1:]
    assert left and all(found["tmp"] and found["sysv_shm"] for found in left)
    assert all(found["abstract_socket"] and found["environment"] for found in left)
    # ...and reach nothing of run B's
    seen = texts(b)
    assert seen and all(not any(found.values()) for found in seen), seen


def test_a_template_whose_zygote_died_is_replaced_and_the_cell_runs(
    march_release: Path, tmp_path: Path, templates: Templates
) -> None:
    cfg = config(march_release, tmp_path)
    run_cell(stub(), cfg, "main", "leaky", templates=templates)
    [kept] = templates.idle()
    assert kept.pid is not None
    os.kill(kept.pid, signal.SIGKILL)
    os.waitpid(kept.pid, 0)
    record = run_cell(stub(), cfg, "main", "pit", templates=templates)
    assert record.outcome["status"] == "complete"
    assert templates.started == 2 and templates.idle() != [kept]


def test_a_run_that_fails_or_leaves_a_cell_open_does_not_give_its_sandbox_back(
    march_release: Path, tmp_path: Path, templates: Templates
) -> None:
    cfg = config(march_release, tmp_path)
    spec = resolve_inputs(stub(), cfg, None, None).spec
    hidden = [str(march_release), str(tmp_path)]

    had: list[Any] = []

    def one_run(*, fail: bool, close_cell: bool) -> Any:
        """A run's drivers from ``templates``: one cell opened, then closed or left
        open, and the run ending cleanly or failing; the sandbox it had."""
        with open_drivers(
            spec, cfg, hidden=hidden, settings=SandboxSettings(), templates=templates
        ) as drivers:
            had.append(drivers.sandbox)  # type: ignore[attr-defined]
            drivers.ready()
            cell = drivers.open()
            if close_cell:
                cell.close()
            if fail:
                raise RuntimeError("the run failed")
        return drivers.sandbox  # type: ignore[attr-defined]

    with pytest.raises(RuntimeError, match="the run failed"):
        one_run(fail=True, close_cell=True)
    assert len(templates) == 0 and templates.started == 1 and not had[-1].alive
    # a run that ends without closing its cell: the cell is still open, so not kept
    left_open = one_run(fail=False, close_cell=False)
    assert len(templates) == 0 and not left_open.alive
    # the same run closing its cell gives the sandbox back
    kept = one_run(fail=False, close_cell=True)
    assert templates.idle() == [kept] and kept.alive and templates.started == 3


def test_a_template_is_lent_only_where_bubblewrap_would_start_the_same_sandbox(
    templates: Templates,
) -> None:
    settings = SandboxSettings()
    first = templates.take(binds=(), hidden=["/nowhere/shown"], settings=settings, by_value=False)
    first.start()
    templates.give_back(first, keep=True)
    # a hidden path under a shown folder is masked: another command, another sandbox
    masked = str(Path(harness_root()) / "agents")
    other = templates.take(binds=(), hidden=[masked], settings=settings, by_value=False)
    assert other is not first
    templates.give_back(other, keep=False)
    # other limits or another way of loading the agent: another sandbox
    tighter = SandboxSettings(max_processes=8)
    for kwargs in (
        {"settings": tighter, "by_value": False},
        {"settings": settings, "by_value": True},
    ):
        another = templates.take(binds=(), hidden=[], **kwargs)  # type: ignore[arg-type]
        assert another is not first
        templates.give_back(another, keep=False)
    assert templates.idle() == [first]  # none of those was kept
    # hidden paths outside every shown folder are out of sight either way: the same one
    same = templates.take(binds=(), hidden=["/elsewhere/too"], settings=settings, by_value=False)
    assert same is first and same.alive
    templates.give_back(same, keep=True)
    assert templates.started == 4


def test_a_template_whose_agents_wrote_much_output_is_not_kept(
    march_release: Path, tmp_path: Path, templates: Templates
) -> None:
    """A by-value agent's prints land in the sandbox's one output file, which a kept
    template would carry from job to job: past ``LOG_KEPT`` bytes it is ended instead."""

    def loud(prompt: str, tools: Any) -> dict[str, Any]:
        os.write(2, b"x" * (LOG_KEPT // 2))  # the cell's own stderr, as a subprocess's
        return {"picks": [], "text": ""}

    cfg = config(march_release, tmp_path)
    run_cell(stub(), cfg, "main", "leaky", templates=templates)
    [quiet] = templates.idle()
    run_cell(from_callable(loud), cfg, "main", "dump", templates=templates)
    assert templates.started == 2 and len(templates) == 1  # stub's is by reference: kept
    assert templates.idle() == [quiet]
