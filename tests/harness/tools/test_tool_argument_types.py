"""A tool argument of the wrong type (a JSON object, list or number where the table says
string, a string where it says integer) is the agent's protocol fault: the tool answers
with a diagnostic that names the argument and the type it got, never the value, and the
cell ends as the agent's. Its run still verifies: rows served are counted from the tool
calls' results, never by matching text an agent could have had echoed."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.agents.external import command_agent
from harness.receipt.rederive import read_trail, rederive
from harness.tools.table import TOOLS
from tests.harness.tools.test_tools import base_rows, make_toolbox

PYTHON = sys.executable
# values of each JSON type but the one a parameter takes; one carries the text every
# served row carries, as an agent that wants its own run to fail verify would send
WRONG: dict[str, list[Any]] = {
    "string": [{"known_at_source": "published_at"}, ["r-1"], 5, 2.5, True],
    "integer": ["5", 2.5, True, {"n": 1}, [1]],
}


def _config(release: Path, out: Path, agent_process: str = "in_process") -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-03",
        arms=("main",),
        clocks=("leaky", "pit"),
        probe=0,
        agent_process=agent_process,
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
    )


def _wrong_cases() -> list[tuple[str, str, Any]]:
    return [
        (tool.name, param.name, value)
        for tool in TOOLS.values()
        for param in tool.params
        for value in WRONG[param.kind]
    ]


@pytest.mark.parametrize(("tool", "param", "value"), _wrong_cases())
def test_every_argument_of_the_wrong_type_is_refused_by_type_never_echoed(
    tool: str, param: str, value: Any
) -> None:
    tools, calls = make_toolbox(base_rows())
    args = {"query": "8-K"} if tool == "pit_search" else {}
    result = getattr(tools, tool)(**{**args, param: value})
    assert "rows" not in result and "row" not in result and "row_key" not in result
    assert result["error"].startswith(f"{tool}: {param} must be ")
    assert json.dumps(value) not in json.dumps(result)  # named by its type, not shown
    fault = tools.take_fault()
    assert fault is not None and fault.fault.kind == "protocol_violation"
    assert result["error"] in fault.fault.message
    assert tools.take_fault() is None  # taken once
    assert len(calls) == 1  # recorded, as every call is


@pytest.mark.parametrize("row_key", WRONG["string"][:3], ids=["object", "list", "number"])
def test_a_row_key_of_the_wrong_type_is_the_agents_fault_and_its_run_verifies(
    march_release: Path, tmp_path: Path, row_key: Any, agent_process: str
) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        if (tools.clock, tools.session_date) == ("leaky", "2023-03-02"):
            tools.pit_read(row_key)
        return [r["row_key"] for r in tools.pit_list(limit=2)["rows"]]

    config = _config(march_release, tmp_path, agent_process)
    body = run(from_callable(agent, "typed"), config).body
    leaky, pit = body["cells"]
    assert pit["status"] == "complete"
    assert leaky["status"] == "agent_error"
    assert leaky["agent_fault"]["kind"] == "protocol_violation"
    assert "pit_read: row_key must be a string, got " in leaky["agent_fault"]["message"]
    checked = rederive(
        config.receipt_path, trajectory=config.trajectory_path, release=march_release
    )
    assert checked.ok, checked.first_mismatch


def test_an_external_agent_that_sends_an_object_as_row_key_is_refused_and_verifies(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        textwrap.dedent(
            """
            import json, sys

            def send(message):
                sys.stdout.write(json.dumps(message) + "\\n")
                sys.stdout.flush()

            for line in sys.stdin:
                task = json.loads(line)
                bad = {"known_at_source": "published_at", "row_key": "r-1"}
                send({"type": "tool", "tool": "pit_read", "args": {"row_key": bad}})
                answer = json.loads(sys.stdin.readline())["result"]
                send({"type": "decision", "picks": [], "text": answer.get("error", "")})
            """
        )
    )
    config = _config(march_release, tmp_path / "out", agent_process)
    body = run(command_agent([PYTHON, str(agent)]), config).body
    for cell in body["cells"]:
        assert cell["status"] == "agent_error"
        assert cell["agent_fault"]["kind"] == "protocol_violation"
        assert "row_key must be a string, got an object" in cell["agent_fault"]["message"]
        assert cell["rows_served"] == 0
    checked = rederive(
        config.receipt_path, trajectory=config.trajectory_path, release=march_release
    )
    assert checked.ok, checked.first_mismatch


def test_rows_served_are_counted_from_the_results_rows_never_from_their_text(
    tmp_path: Path,
) -> None:
    """An answer that holds the text every served row holds, elsewhere than in its rows
    (as an echoed argument would), serves no row."""
    from harness import canonical

    start = {"event": "run_start", "seq": 0, "config": {}}
    served = {"known_at": "x", "known_at_source": "published_at", "row_key": "r-1"}
    calls = [
        {"args": {}, "arm": "main", "clock": "pit", "event": "tool_call", "seq": 1,
         "result": {"rows": [served, served], "total": 2}},
        {"args": {"row_key": "r-2"}, "arm": "main", "clock": "pit", "event": "tool_call",
         "seq": 2, "result": {"status": "not_in_window",
                              "row_key": {"known_at_source": "published_at"}}},
        {"args": {}, "arm": "main", "clock": "pit", "event": "tool_call", "seq": 3,
         "result": {"status": "ok", "row": served}},
    ]  # fmt: skip
    path = tmp_path / "trajectory.jsonl"
    path.write_text("".join(canonical.line(e) + "\n" for e in [start, *calls]))
    cell = read_trail(path).cells[("main", "pit")]
    assert (cell.tool_calls, cell.rows_served, cell.fallbacks_served) == (3, 3, 3)
