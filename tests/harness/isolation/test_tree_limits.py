"""Limits hold for the agent's whole process tree, not for each process alone: memory,
CPU time and the number of processes are summed across the cell's processes (and the
files of its tmpfs), a decision's wall-clock budget counts its tool calls, and passing
any of them ends the cell as the agent's ``resource_limit``, never as a retryable
failure of ours."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.isolation.drivers import IsolatedDrivers, capability_line, not_enforced
from harness.isolation.sandbox import limits
from harness.isolation.sandbox.outside import SandboxSettings
from tests.support.sandbox import require_sandbox, sandbox_config


def config(release: Path, out: Path, **extra: Any) -> RunConfig:
    """The sandbox tests' run, narrowed to one cell and no probe."""
    return sandbox_config(
        release, out, **{"probe": 0, "arms": ("main",), "clocks": ("pit",), **extra}
    )


def only_cell(release: Path, out: Path, agent: Any, settings: SandboxSettings) -> dict[str, Any]:
    require_sandbox()
    body = run(from_callable(agent), config(release, out), sandbox=settings).body
    [cell] = body["cells"]
    return dict(cell)


def decision_texts(out: Path) -> list[str]:
    lines = (out / "trajectory.jsonl").read_text().splitlines()
    return [e["text"] for e in map(json.loads, lines) if e["event"] == "decision"]


# -- each attack on per-process limits, now held for the tree -------------------------------


def _children_holding(count: int, size: int, hold: float = 5.0) -> str:
    """Fork ``count`` children that each hold ``size`` bytes, keep them ``hold`` seconds
    (a tree limit kills them all long before), and report how many held their share."""
    import time

    ready, ready_w = os.pipe()
    release, release_w = os.pipe()
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            os.close(release_w)
            try:
                block = bytearray(b"\x01") * size
                os.write(ready_w, b"y" if len(block) == size else b"n")
            except MemoryError:
                os.write(ready_w, b"n")
            os.read(release, 1)
            os._exit(0)
        children.append(pid)
    held = sum(os.read(ready, 1) == b"y" for _ in children)
    time.sleep(hold)
    os.close(release_w)
    for pid in children:
        os.waitpid(pid, 0)
    return f"{held} held"


def test_children_together_cannot_pass_the_memory_limit(
    march_release: Path, tmp_path: Path
) -> None:
    """Four children of 200 MiB each, under 256 MiB: each alone is within its address
    space, together they are four times over, and the tree is killed for it."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        return {"picks": [], "text": _children_holding(4, 200 << 20)}

    cell = only_cell(march_release, tmp_path, agent, SandboxSettings(memory_bytes=256 << 20))
    assert cell["status"] == "agent_error", cell
    assert cell["agent_fault"]["kind"] == "resource_limit"
    assert cell["agent_fault"]["message"] == (
        "memory limit of 256 MiB reached for the agent's process tree"
    )


def test_files_in_the_cells_tmpfs_count_as_memory(march_release: Path, tmp_path: Path) -> None:
    """/tmp is memory: 300 MiB written there, under a 256 MiB limit, kills the tree."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import time

        with open("/tmp/hoard", "wb") as handle:
            for _ in range(300):
                handle.write(b"\x01" * (1 << 20))
        time.sleep(5)
        return {"picks": [], "text": "hoarded"}

    cell = only_cell(march_release, tmp_path, agent, SandboxSettings(memory_bytes=256 << 20))
    assert cell["status"] == "agent_error", cell
    assert cell["agent_fault"]["message"].startswith("memory limit of 256 MiB")


def test_children_together_cannot_pass_the_cpu_limit(march_release: Path, tmp_path: Path) -> None:
    """Four children of 1.2 s of CPU each, under 2 s: each alone is within its own CPU
    limit, together they use 4.8 s; the tree is killed once its sum passes 2 s."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import time

        children = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                while time.process_time() < 1.2:
                    pass
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
        return {"picks": [], "text": "burned"}

    cell = only_cell(march_release, tmp_path, agent, SandboxSettings(cpu_seconds=2))
    assert cell["status"] == "agent_error", cell
    assert cell["agent_fault"]["kind"] == "resource_limit"
    assert cell["agent_fault"]["message"] == (
        "CPU time limit of 2 s reached for the agent's process tree"
    )


def test_the_tree_cannot_hold_more_processes_than_the_limit(
    march_release: Path, tmp_path: Path
) -> None:
    """150 processes at once, under the default limit of 64, kill the tree."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import time

        release, release_w = os.pipe()
        children = []
        try:
            while len(children) < 150:
                pid = os.fork()
                if pid == 0:
                    os.close(release_w)
                    os.read(release, 1)
                    os._exit(0)
                children.append(pid)
        except OSError as exc:
            return {"picks": [], "text": f"fork failed after {len(children)}: {exc}"}
        time.sleep(5)
        os.close(release_w)
        for pid in children:
            os.waitpid(pid, 0)
        return {"picks": [], "text": f"{len(children)} at once"}

    assert SandboxSettings().max_processes == 64
    cell = only_cell(march_release, tmp_path, agent, SandboxSettings())
    assert cell["status"] == "agent_error", cell
    assert cell["agent_fault"]["kind"] == "resource_limit"
    assert cell["agent_fault"]["message"] == (
        "process limit of 64 processes at once reached for the agent's process tree"
    )


def test_a_decision_budget_is_wall_clock_with_tool_calls_included(
    march_release: Path, tmp_path: Path
) -> None:
    """A tool call every half second keeps the channel busy, but the decision's budget
    of 2 s runs out all the same: the cell is killed, as the agent's resource limit (not
    a runtime failure of ours, which would be retried)."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import time

        for _ in range(16):
            tools.pit_coverage()
            time.sleep(0.5)
        return {"picks": [], "text": "8 s later"}

    settings = SandboxSettings(decision_timeout=2)
    cell = only_cell(march_release, tmp_path, agent, settings)
    assert cell["status"] == "agent_error", cell
    assert cell["agent_fault"]["kind"] == "resource_limit"
    assert cell["agent_fault"]["message"].startswith(
        "decision time limit of 2 s (wall clock, tool calls included) reached"
    )
    assert decision_texts(tmp_path) == []


def test_a_decision_within_its_budget_and_limits_completes(
    march_release: Path, tmp_path: Path
) -> None:
    """The limits end only what passes them: a few children, some CPU, some memory and
    tool calls, all within bounds, complete every decision."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        tools.pit_coverage()
        return {"picks": [], "text": _children_holding(3, 32 << 20, hold=0.1)}

    settings = SandboxSettings(memory_bytes=1 << 30, decision_timeout=30)
    cell = only_cell(march_release, tmp_path, agent, settings)
    assert cell["status"] == "complete", cell
    assert set(decision_texts(tmp_path)) == {"3 held"}


def test_an_agent_exiting_with_a_limits_code_is_not_read_as_a_limit(
    march_release: Path, tmp_path: Path
) -> None:
    """The codes that name a limit (100 and up) are the cell's own: an agent that exits
    with one is an agent whose process exited, not one that hit a limit."""

    def agent(prompt: str, tools: Any) -> list[str]:
        os._exit(102)

    cell = only_cell(march_release, tmp_path, agent, SandboxSettings())
    assert cell["status"] == "incomplete", cell
    assert "resource_limit" not in json.dumps(cell)


# -- the capability fields say what held for the tree ---------------------------------------


def test_the_capabilities_report_limits_held_for_the_tree(
    march_release: Path, tmp_path: Path
) -> None:
    require_sandbox()
    body = run(from_callable(lambda p, t: []), config(march_release, tmp_path)).body
    caps = body["capabilities"]
    assert caps["memory_enforced"] is caps["cpu_enforced"] is caps["processes_enforced"] is True
    assert caps["limits_scope"] == "process_tree_accounting"
    assert caps["limits"]["max_processes"] == 64
    assert "processes_enforced=True" in body["capability_line"]
    assert not any("process tree" in line for line in body["limits"])


class _Found:
    """A sandbox whose probe found ``capabilities``."""

    def __init__(self, capabilities: dict[str, Any]) -> None:
        self.capabilities = capabilities
        self.settings = SandboxSettings()


def _fields(found: dict[str, Any]) -> dict[str, Any]:
    drivers = IsolatedDrivers.__new__(IsolatedDrivers)
    drivers.sandbox = _Found(found)  # type: ignore[assignment]
    return drivers.capabilities()


def test_a_limit_held_per_process_only_reads_false() -> None:
    """Per-process rlimits that hold, with no tree limit seen to hold, are not enough:
    the tree's fields read False, the scope says per_process, and the receipt's list of
    what is not enforced names each."""
    found = {"per_process_limits": {"memory": True, "cpu": True}, "tree_limits": {}}
    caps = _fields(found)
    assert (caps["memory_enforced"], caps["cpu_enforced"], caps["processes_enforced"]) == (
        False,
        False,
        False,
    )
    assert caps["limits_scope"] == "per_process"
    assert "memory_enforced=False cpu_enforced=False processes_enforced=False" in caps["line"]
    missing = not_enforced(caps)
    for start in ("memory: ", "cpu: ", "process count: "):
        assert any(line.startswith(start) and "process tree" in line for line in missing), start

    partly = _fields({**found, "tree_limits": {"memory": True, "cpu": False, "processes": True}})
    assert partly["memory_enforced"] and partly["processes_enforced"]
    assert partly["cpu_enforced"] is False and partly["limits_scope"] == "per_process"
    assert capability_line(partly) == partly["line"]


# -- the accounting itself ----------------------------------------------------------------


def _stat(pid: int, ppid: int, ticks: tuple[int, int, int, int], rss: int) -> str:
    utime, stime, cutime, cstime = ticks
    rest = [0] * 49
    rest[0], rest[1] = "S", ppid  # type: ignore[call-overload]
    rest[11], rest[12], rest[13], rest[14], rest[21] = utime, stime, cutime, cstime, rss
    return f"{pid} (a (tricky) name) " + " ".join(map(str, rest))


def test_a_stat_line_reads_past_a_command_name_with_parentheses() -> None:
    stat = limits.parse_stat(_stat(7, 1, (10, 5, 100, 20), 300))
    assert stat == limits.ProcStat(ppid=1, cpu_ticks=135, rss_pages=300)


def test_the_tree_is_the_root_and_every_descendant_only() -> None:
    table = {
        pid: limits.parse_stat(_stat(pid, ppid, (0, 0, 0, 0), 1))
        for pid, ppid in [(1, 0), (5, 1), (9, 1), (10, 5), (11, 10), (20, 2), (21, 20)]
    }
    assert sorted(limits.tree(table, 1)) == [1, 5, 9, 10, 11]
    assert sorted(limits.tree(table, 5)) == [5, 10, 11]
    assert limits.tree(table, 99) == []


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        ({"max_processes": 2}, limits.PROCESSES),
        ({"cpu_seconds": 0.5}, limits.CPU),
        ({}, None),
    ],
)
def test_a_limit_is_passed_by_the_sum_over_the_tree(bound: dict[str, Any], expected: Any) -> None:
    """Three processes of 0.3 s each (one of them already reaped, counted in its
    parent's): no one passes 0.5 s, the tree does; three processes pass a limit of two."""
    tick = os.sysconf("SC_CLK_TCK")
    third = int(0.3 * tick)
    table = {
        100: limits.parse_stat(_stat(100, 1, (third, 0, third, 0), 1)),
        101: limits.parse_stat(_stat(101, 100, (0, third, 0, 0), 1)),
        102: limits.parse_stat(_stat(102, 100, (0, 0, 0, 0), 1)),
        200: limits.parse_stat(_stat(200, 1, (100 * tick, 0, 0, 0), 1)),  # not in the tree
    }
    values = {"memory_bytes": 1 << 40, "cpu_seconds": 10.0, "max_processes": 10, **bound}
    proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert limits.passed(limits.TreeLimits(**values), proc, 100, table) == expected
    finally:
        os.close(proc)
