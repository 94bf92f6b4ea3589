"""A run's cells run one by one, in any order and each in a sandbox of its own
(``run_cell``), then joined (``assemble``): the trajectory and the receipt's body are the
ones ``run`` writes for the same agent and config, byte for byte. And records that do not
make that run are refused."""

from __future__ import annotations

import random
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents import stub
from harness.agents.baselines import earliest_five
from harness.agents.external import command_agent
from harness.runs.records import AssemblyError, CellRecord
from harness.runs.runner import assemble, cell_order, run_cell
from tests.support.data import build_prices, build_release
from tests.support.golden import body_text
from tests.support.sandbox import require_sandbox

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"
WINDOW = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-08"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cells")
    release = build_release(folder / "release", end=date(2023, 3, 31), seed=3, rows=6_000)
    return release, build_prices(folder / "prices-SYNTHETIC.csv", release, seed=2)


def _config(release: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
        **WINDOW,
        **extra,
    }
    return RunConfig(**values)


def _both(agent: Any, release: Path, tmp_path: Path, **extra: Any) -> tuple[Path, Path]:
    """The run as the CLI makes it, and the same run cell by cell (in a shuffled order,
    as workers finish) then assembled. Each writes to a folder of its own with the same
    file names (the body names its trajectory file)."""
    whole = _config(release, tmp_path / "whole", **extra)
    run(agent, whole)
    split = _config(release, tmp_path / "split", **extra)
    order = cell_order(split)
    random.Random(7).shuffle(order)
    records = [run_cell(agent, split, arm, clock) for arm, clock in order]
    # a record travels as bytes between a worker and the job machine's tables
    import msgspec

    records = [msgspec.json.decode(msgspec.json.encode(r), type=CellRecord) for r in records]
    assemble(agent, split, records)
    return tmp_path / "whole", tmp_path / "split"


def _same(whole: Path, split: Path) -> None:
    assert (split / "trajectory.jsonl").read_bytes() == (whole / "trajectory.jsonl").read_bytes()
    assert body_text(split / "receipt.json") == body_text(whole / "receipt.json")


def test_a_stub_run_cell_by_cell_equals_the_whole_run(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    whole, split = _both(stub(), inputs[0], tmp_path, agent_process="in_process")
    _same(whole, split)
    assert '"event":"probe_item"' in (split / "trajectory.jsonl").read_text()


def test_a_priced_baseline_cell_by_cell_equals_the_whole_run(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    release, prices = inputs
    priced = {"path": str(prices), "source": "SYNTHETIC cell prices", "pulled_at": "generated"}
    whole, split = _both(
        earliest_five, release, tmp_path, agent_process="in_process", prices=priced
    )
    _same(whole, split)


@pytest.mark.slow  # a sandbox per cell, twice over
def test_an_external_agent_in_the_sandbox_cell_by_cell_equals_the_whole_run(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Each cell in a sandbox of its own, the probe in the assembler's: the capabilities
    and the probe's answers (served with the last shifted cell's tools) agree."""
    require_sandbox()
    agent = command_agent([sys.executable, str(EXAMPLES / "pit_stdio.py")])
    whole, split = _both(agent, inputs[0], tmp_path, agent_process="isolated", probe=4)
    _same(whole, split)
    assert '"event":"probe_item"' in (split / "trajectory.jsonl").read_text()


def test_records_that_do_not_make_the_run_are_refused(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    release = inputs[0]
    config = _config(release, tmp_path / "a", agent_process="in_process", arms=("main",))
    records = [run_cell(stub(), config, arm, clock) for arm, clock in cell_order(config)]
    with pytest.raises(AssemblyError, match="cells missing: \\['main/leaky'\\]"):
        assemble(stub(), config, records[1:])
    with pytest.raises(AssemblyError, match="given twice"):
        assemble(stub(), config, [*records, records[0]])
    # a cell of another run (another window) cannot be joined into this one
    other = _config(release, tmp_path / "b", agent_process="in_process", arms=("main",))
    other = RunConfig(**{**vars(other), "end": "2023-03-07"})
    stray = run_cell(stub(), other, "main", "pit")
    mixed = [r for r in records if r.clock != "pit"] + [stray]
    with pytest.raises(AssemblyError, match="main/pit: run under config"):
        assemble(stub(), config, mixed)
    assert not (tmp_path / "a" / "trajectory.jsonl").exists()
    assert not (tmp_path / "a" / "receipt.json").exists()
    with pytest.raises(Exception, match="not a cell of this config"):
        run_cell(stub(), config, "shifted", "pit")


def test_a_reexecution_that_compared_nothing_is_no_reproduction(tmp_path: Path) -> None:
    from harness.runs.reexecute import FAILED, compare

    empty = tmp_path / "a.jsonl"
    empty.write_text('{"event":"run_start","seq":0}\n')
    result = compare(empty, empty)
    assert result.result == FAILED and not result.ok
    assert "no score-bearing step" in (result.failure or "")
