"""A run kept in a checkpoint (``run(..., checkpoint=FILE)``): each cell and each failed
attempt saved as it ends, atomically; a resume writes the finished cells from the file
and runs the others again, giving the trajectory and receipt body an uninterrupted run
gives; and a file made by another invocation is refused with nothing run and the file
left as it was. Runs are stopped here by their progress callback raising (the saves made
so far are what a kill leaves); the command line's test kills a real process."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness import RunConfig, run
from harness.agents import stub
from harness.agents.base import AgentSpec, Decision, Task
from harness.agents.stub import StubAgent
from harness.outcomes import AgentProcessExited, RuntimeFailure
from harness.rundata.config import ConfigError
from harness.runs import checkpoint
from harness.runs.checkpoint import SCHEMA, CheckpointRefused, contract_digest, write_atomically
from harness.runs.runner import cell_order
from tests.support.data import build_release
from tests.support.golden import body_text

WINDOW = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-07"}
SESSIONS = 6  # 2023-03-01, 02, 03, 06, 07 and the first session after the window
CELLS = 9


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(
        tmp_path_factory.mktemp("checkpoint") / "release", end=date(2023, 3, 31), seed=3, rows=4_000
    )


def _config(release: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
        "agent_process": "in_process",
        **WINDOW,
        **extra,
    }
    return RunConfig(**values)


Call = tuple[str, str, str, str]  # kind, arm, clock, session date (as the arm shows it)


def marking(calls: list[Call], fail_once: set[str] | None = None) -> AgentSpec:
    """The stub, noting every call it answers; in the cells of ``fail_once`` ("arm/clock")
    its first attempt ever fails on the harness's side (taken from the set as it fails, so
    the set is the agent's memory across runs: the failure happens once, interrupted or
    not)."""
    failing = fail_once if fail_once is not None else set()

    class Marking(StubAgent):
        def decide(self, task: Task, tools: Any) -> Decision:
            calls.append((task.kind, task.arm, task.clock, task.session_date))
            cell = f"{task.arm}/{task.clock}"
            if cell in failing and task.session_date.endswith("-03"):
                failing.discard(cell)
                raise RuntimeFailure("the transport dropped (test)")
            return super().decide(task, tools)

    return AgentSpec("marking", Marking)


class Stop(Exception):
    """The run stops here, as a kill would stop it."""


def stop_after(sessions: int) -> Any:
    def progress(done: int, total: int) -> None:
        if done == sessions:
            raise Stop(f"stopped after {sessions} sessions")

    return progress


def _same_run(a: Path, b: Path) -> None:
    assert (a / "trajectory.jsonl").read_bytes() == (b / "trajectory.jsonl").read_bytes()
    assert body_text(a / "receipt.json") == body_text(b / "receipt.json")


def _saved(path: Path) -> list[dict[str, Any]]:
    saved: list[dict[str, Any]] = json.loads(path.read_text())["saved"]
    return saved


@pytest.mark.parametrize("stopped_after", [1, 6, 7, 27, 53, 54])
def test_a_stopped_run_resumed_writes_what_an_uninterrupted_run_writes(
    release: Path, tmp_path: Path, stopped_after: int
) -> None:
    """Stopped in the first session, at a cell's last session, at the next cell's first,
    in the middle, and in the last cell (whose end leaves only the probe)."""
    run(marking([]), _config(release, tmp_path / "whole"))
    file = tmp_path / "checkpoint.json"
    with pytest.raises(Stop):
        run(
            marking([]),
            _config(release, tmp_path / "resumed"),
            progress=stop_after(stopped_after),
            checkpoint=file,
        )
    assert not (tmp_path / "resumed" / "trajectory.jsonl").exists()
    assert len(_saved(file)) == (stopped_after - 1) // SESSIONS
    run(marking([]), _config(release, tmp_path / "resumed"), checkpoint=file)
    _same_run(tmp_path / "whole", tmp_path / "resumed")
    assert [s["kind"] for s in _saved(file)] == ["cell"] * CELLS


def test_a_run_stopped_and_resumed_where_its_agent_runs_is_the_uninterrupted_run(
    release: Path, tmp_path: Path, agent_process: str
) -> None:
    """In the sandbox too: the checkpoint beside the run's outputs is hidden from the
    agent like them, and the capabilities the resumed run claims are its cells'."""
    run(stub(), _config(release, tmp_path / "whole", agent_process=agent_process))
    resumed = _config(release, tmp_path / "resumed", agent_process=agent_process)
    file = tmp_path / "resumed" / "checkpoint.json"
    with pytest.raises(Stop):
        run(stub(), resumed, progress=stop_after(3 * SESSIONS + 2), checkpoint=file)
    assert len(_saved(file)) == 3
    run(stub(), resumed, checkpoint=file)
    _same_run(tmp_path / "whole", tmp_path / "resumed")


def test_a_resume_runs_no_finished_cell_again(release: Path, tmp_path: Path) -> None:
    """Stopped in the fifth cell's third session: the resumed run calls the agent in the
    four finished cells not once, and runs the fifth again from its first session."""
    config = _config(release, tmp_path / "out")
    file = tmp_path / "checkpoint.json"
    first: list[Call] = []
    with pytest.raises(Stop):
        run(marking(first), config, progress=stop_after(4 * SESSIONS + 3), checkpoint=file)
    resumed: list[Call] = []
    run(marking(resumed), config, checkpoint=file)
    order = [f"{arm}/{clock}" for arm, clock in cell_order(config)]
    ran = Counter(f"{arm}/{clock}" for kind, arm, clock, _ in resumed if kind == "trade")
    assert [ran[cell] for cell in order] == [0, 0, 0, 0] + [SESSIONS] * 5
    fifth = [c for c in first if f"{c[1]}/{c[2]}" == order[4]]
    assert len(fifth) == 3
    assert [c for c in resumed if f"{c[1]}/{c[2]}" == order[4]][:3] == fifth
    assert any(kind == "probe" for kind, *_ in resumed)  # the probe runs again


@pytest.mark.parametrize(
    "change",
    [
        {"hold_sessions": 3},
        {"end": "2023-03-06"},
        {"clocks": ("dump", "pit", "leaky")},  # the same cells in another order
        {"probe": 5},
    ],
)
def test_a_changed_config_is_refused_with_nothing_run_and_the_file_untouched(
    release: Path, tmp_path: Path, change: dict[str, Any]
) -> None:
    file = tmp_path / "checkpoint.json"
    with pytest.raises(Stop):
        run(
            marking([]),
            _config(release, tmp_path / "a"),
            progress=stop_after(2 * SESSIONS + 1),
            checkpoint=file,
        )
    before = file.read_bytes()
    calls: list[Call] = []
    with pytest.raises(CheckpointRefused, match="contract differs") as refused:
        run(marking(calls), _config(release, tmp_path / "b", **change), checkpoint=file)
    assert "config_sha256" in str(refused.value)
    assert file.read_bytes() == before
    assert calls == []
    assert not (tmp_path / "b").exists()  # no trajectory, no partial one, no receipt


def test_another_agent_is_refused_and_never_started(release: Path, tmp_path: Path) -> None:
    file = tmp_path / "checkpoint.json"
    with pytest.raises(Stop):
        run(marking([]), _config(release, tmp_path / "a"), progress=stop_after(7), checkpoint=file)
    before = file.read_bytes()
    started: list[str] = []

    class Other(StubAgent):
        def __init__(self) -> None:
            started.append("started")

    with pytest.raises(CheckpointRefused, match=r"contract differs: .*agent"):
        run(AgentSpec("other", Other), _config(release, tmp_path / "b"), checkpoint=file)
    assert file.read_bytes() == before
    assert started == []
    assert not (tmp_path / "b").exists()


def _contract(file: Path) -> dict[str, Any]:
    contract: dict[str, Any] = json.loads(file.read_text())["contract"]
    return contract


@pytest.mark.parametrize(
    "forge",
    [
        lambda raw, c: b"not json at all",
        lambda raw, c: b"{}",
        lambda raw, c: json.dumps({"saved": []}).encode(),
        lambda raw, c: json.dumps(
            {"contract": {**c, "schema": "pit-harness.checkpoint.v0"}, "saved": []}
        ).encode(),
        lambda raw, c: json.dumps(
            {"contract": {**c, "runtime_attempts": "3"}, "saved": []}
        ).encode(),
        lambda raw, c: json.dumps({"contract": {**c, "extra": 1}, "saved": []}).encode(),
        # a contract edited to fit, its digest left: refused by the digest
        lambda raw, c: raw.replace(b'"runtime_attempts":3', b'"runtime_attempts":4'),
        # a consistent forgery of another retry policy (digest recomputed): refused as
        # differing from this invocation's
        lambda raw, c: json.dumps(
            {
                "contract": {**c, "runtime_attempts": 4},
                "contract_sha256": contract_digest(
                    msgspec.convert({**c, "runtime_attempts": 4}, checkpoint.Contract)
                ),
                "saved": [],
            }
        ).encode(),
    ],
    ids=[
        "not-json",
        "empty",
        "no-contract",
        "other-schema",
        "malformed",
        "unknown-field",
        "digest",
        "retry-policy",
    ],
)
def test_a_file_without_this_contract_is_refused(release: Path, tmp_path: Path, forge: Any) -> None:
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "out")
    with pytest.raises(Stop):
        run(marking([]), config, progress=stop_after(6), checkpoint=file)
    raw = file.read_bytes()
    file.write_bytes(forge(raw, _contract(file)))
    before = file.read_bytes()
    calls: list[Call] = []
    with pytest.raises(CheckpointRefused, match="contract differs"):
        run(marking(calls), config, checkpoint=file)
    assert file.read_bytes() == before and calls == []
    assert list((tmp_path / "out").iterdir()) == []  # the stopped run left nothing either


def test_saved_progress_that_no_run_saves_is_refused(release: Path, tmp_path: Path) -> None:
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "out")
    with pytest.raises(Stop):
        run(marking([]), config, progress=stop_after(11), checkpoint=file)
    data = json.loads(file.read_text())
    data["saved"].append(data["saved"][0])  # a cell twice
    file.write_text(json.dumps(data))
    calls: list[Call] = []
    with pytest.raises(CheckpointRefused, match="saved twice"):
        run(marking(calls), config, checkpoint=file)
    assert calls == []


def test_each_save_holds_the_state_before_it_and_one_more(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read back after every save: the file parses and holds what it held plus one item
    (a finished cell or a failed attempt), and each is saved before the next attempt or
    cell starts."""
    states: list[list[dict[str, Any]]] = []
    real = checkpoint.write_atomically

    def spy(path: Path, data: bytes, *, create: bool = False) -> None:
        real(path, data, create=create)
        saved = _saved(path)
        assert saved[:-1] == (states[-1] if states else []) or (create and saved == [])
        states.append(saved)

    monkeypatch.setattr(checkpoint, "write_atomically", spy)
    seen: list[tuple[str, str, str, list[str]]] = []

    class Watching(StubAgent):
        def decide(self, task: Task, tools: Any) -> Decision:
            last = states[-1][-1] if states and states[-1] else {}
            label = last.get("entry", {}).get("cell") or "{arm}/{clock}".format(
                **last.get("record", {"arm": "-", "clock": "-"})
            )
            seen.append((task.arm, task.clock, task.session_date, [last.get("kind"), label]))
            if (task.arm, task.clock) in failing and task.session_date.endswith("-03"):
                failing.discard((task.arm, task.clock))  # once: the retry goes through
                raise RuntimeFailure("the transport dropped (test)")
            return super().decide(task, tools)

    failing = {("main", "dump"), ("shifted", "pit")}
    result = run(
        AgentSpec("watching", Watching),
        _config(release, tmp_path / "out"),
        checkpoint=tmp_path / "checkpoint.json",
    )
    assert [entry["cell"] for entry in result.body["attempts"]] == ["main/dump", "shifted/pit"]
    kinds = [s["kind"] for s in states[-1]]
    assert len(states) == 1 + CELLS + 2 and kinds.count("attempt") == 2
    assert kinds[:3] == ["cell", "attempt", "cell"]
    # the first decision of every cell and attempt after the first saw the one before saved
    firsts = [s for s in seen if s[2] in ("2023-03-01", "2033-03-01")]
    assert [label for *_, (_, label) in firsts[1:4]] == ["main/leaky", "main/dump", "main/dump"]
    assert [kind for *_, (kind, _) in firsts[1:4]] == ["cell", "attempt", "cell"]
    assert not list(tmp_path.glob(".checkpoint.json.*"))  # no temporary sibling left


def test_failed_attempts_saved_before_a_stop_are_kept_and_counted(
    release: Path, tmp_path: Path
) -> None:
    """A cell's first attempt fails, its second is stopped: the resumed run writes the
    failed attempt, runs attempt two, and equals a run in which the same happened
    uninterrupted. The failure is neither laundered nor granted a fresh budget."""
    run(marking([], {"main/dump"}), _config(release, tmp_path / "whole"))
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "resumed")
    with pytest.raises(Stop):  # leaky's six, dump's first two, its retry's first three
        run(marking([], {"main/dump"}), config, progress=stop_after(11), checkpoint=file)
    assert [s["kind"] for s in _saved(file)] == ["cell", "attempt"]
    result = run(marking([]), config, checkpoint=file)
    assert [(a["cell"], a["attempt"]) for a in result.body["attempts"]] == [("main/dump", 1)]
    _same_run(tmp_path / "whole", tmp_path / "resumed")


def test_a_cell_whose_agent_exits_in_every_attempt_is_incomplete_across_a_stop(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped right after its second failed attempt was saved: the resumed run has one
    attempt left, not three, and the cell is incomplete as in a run never stopped."""

    class Exiting(StubAgent):
        def decide(self, task: Task, tools: Any) -> Decision:
            if (task.arm, task.clock) == ("main", "dump"):
                raise AgentProcessExited("the agent's process exited (test)")
            return super().decide(task, tools)

    exiting = AgentSpec("exiting", Exiting)
    run(exiting, _config(release, tmp_path / "whole"))
    real = checkpoint.write_atomically
    saves: list[int] = []

    def stopping(path: Path, data: bytes, *, create: bool = False) -> None:
        real(path, data, create=create)
        saves.append(len(_saved(path)))
        if saves[-1] == 3:  # main/leaky, then two failed attempts of main/dump
            raise Stop("killed just after a save")

    monkeypatch.setattr(checkpoint, "write_atomically", stopping)
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "resumed")
    with pytest.raises(Stop):
        run(exiting, config, checkpoint=file)
    monkeypatch.setattr(checkpoint, "write_atomically", real)
    assert [s["kind"] for s in _saved(file)] == ["cell", "attempt", "attempt"]
    result = run(exiting, config, checkpoint=file)
    cells = {(c["arm"], c["clock"]): c for c in result.body["cells"]}
    assert cells[("main", "dump")]["status"] == "incomplete"
    assert [a["attempt"] for a in result.body["attempts"]] == [1, 2, 3]
    _same_run(tmp_path / "whole", tmp_path / "resumed")


def test_a_resume_does_not_compare_a_rerun_cell_with_the_attempt_it_replaced(
    release: Path, tmp_path: Path
) -> None:
    """The stopped attempt picked nothing, its rerun picks: nothing compares them (that is
    re-execution's work), and only the rerun's decisions are in the trajectory."""
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "out")

    class Idle(StubAgent):
        def decide(self, task: Task, tools: Any) -> Decision:
            return Decision(text="idle")

    idle = AgentSpec("marking", Idle)  # the name and source of the agent that resumes
    with pytest.raises(Stop):
        run(idle, config, progress=stop_after(3), checkpoint=file)
    result = run(marking([]), config, checkpoint=file)
    assert result.valid
    assert '"text":"idle"' not in (tmp_path / "out" / "trajectory.jsonl").read_text()


def test_a_completed_checkpoint_resumed_writes_the_same_run(release: Path, tmp_path: Path) -> None:
    file = tmp_path / "checkpoint.json"
    config = _config(release, tmp_path / "first")
    run(marking([]), config, checkpoint=file)
    kept = file.read_bytes()
    calls: list[Call] = []
    run(marking(calls), _config(release, tmp_path / "again"), checkpoint=file)
    assert {kind for kind, *_ in calls} == {"probe"}
    assert file.read_bytes() == kept
    _same_run(tmp_path / "first", tmp_path / "again")


def test_the_contract_binds_the_release_the_agent_and_the_harness(
    release: Path, tmp_path: Path
) -> None:
    file = tmp_path / "checkpoint.json"
    result = run(marking([]), _config(release, tmp_path / "out"), checkpoint=file)
    contract = _contract(file)
    assert contract["schema"] == SCHEMA
    binding = result.body["binding"]
    assert contract["config_sha256"] == binding["config_sha256"]
    assert contract["bundle_content_digest"] == binding["bundle_content_digest"]
    assert contract["agent_sha256"] == result.body["config"]["agent_source_sha256"]
    assert contract["harness_version"] == result.body["harness"]["version"]
    assert contract["runtime_attempts"] == 3 and contract["fault_plan_sha256"] is None
    assert contract["cells"][:3] == ["main/leaky", "main/dump", "main/pit"]
    assert json.loads(file.read_text())["contract_sha256"] == contract_digest(
        msgspec.convert(contract, checkpoint.Contract)
    )


def test_a_checkpoint_where_no_file_can_be_kept_is_a_config_error(
    release: Path, tmp_path: Path
) -> None:
    config = _config(release, tmp_path / "out")
    for path, why in (
        (tmp_path, "a folder"),
        (tmp_path / "out" / "receipt.json", "is the receipt"),
        (tmp_path / "out" / "trajectory.jsonl", "is the trajectory"),
        (release / "checkpoint.json", "lies in the release"),
    ):
        with pytest.raises(ConfigError, match=why):
            run(marking([]), config, checkpoint=path)
    with pytest.raises(ConfigError, match="replayed"):
        run(marking([]), config, checkpoint=tmp_path / "c.json", model_replay=[])
    assert not (tmp_path / "out").exists()


def test_an_atomic_save_that_fails_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "state.json"
    write_atomically(file, b"one\n", create=True)
    with pytest.raises(FileExistsError):  # creating is exclusive
        write_atomically(file, b"two\n", create=True)

    def no_rename(src: str, dst: str) -> None:
        raise OSError("the disk went away (test)")

    monkeypatch.setattr(checkpoint.os, "replace", no_rename)
    with pytest.raises(OSError, match="disk went away"):
        write_atomically(file, b"three\n")
    assert file.read_bytes() == b"one\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
