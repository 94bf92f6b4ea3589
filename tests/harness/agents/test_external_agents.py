"""External agents: a command in any language, spoken to over stdio in our dialect or in
sharpebench's, evaluated in each cell's sandbox and re-executed from the command line.

The agents here are small programs written into the test's folder (or the reference agents
in examples/agents/); each cheats or breaks the protocol in one way, and the harness must
name it: a clock-reading or random agent diverges under re-execution at the step where it
read the clock or the dice, a message with an unknown field is the agent's protocol fault,
a process that exits mid-cell is retried and never scored as the agent's result.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness import run
from harness.agents.external import AgentCommandError, command_agent
from harness.cli import main
from harness.rundata.config import ConfigError
from harness.runs.reexecute import DIVERGED, REPRODUCED, reexecute
from tests.support.sandbox import require_sandbox, sandbox_config

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "agents"
SHARED = REPO.parent / "shared"
PYTHON = sys.executable


@pytest.fixture(autouse=True)
def _sandboxed() -> None:
    require_sandbox()


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the Node.js reference agent, but node is not on PATH")
        pytest.skip("needs Node.js (node on PATH)")
    return node


def _agent(folder: Path, name: str, body: str) -> Path:
    """A stdio agent in the pit dialect: ``decide(task, call, step)`` returns the
    decision's picks and text; ``call(tool, **args)`` asks the harness a tool."""
    path = folder / name
    path.write_text(
        textwrap.dedent(
            """
            import json, os, random, sys, time

            def send(message):
                sys.stdout.write(json.dumps(message) + "\\n")
                sys.stdout.flush()

            def call(tool, **args):
                send({"type": "tool", "tool": tool, "args": args})
                return json.loads(sys.stdin.readline())["result"]

            """
        )
        + textwrap.dedent(body)
        + textwrap.dedent(
            """

            step = 0
            for line in sys.stdin:
                task = json.loads(line)
                step += 1
                picks, text = decide(task, call, step)
                send({"type": "decision", "picks": picks, "text": text})
            """
        )
    )
    return path


FIRST_TWO = """
def decide(task, call, step):
    rows = call("pit_list", limit=2)["rows"]
    return [r["row_key"] for r in rows], ""
"""


def _run(agent: Any, config: Any) -> dict[str, Any]:
    result = run(agent, config)
    body: dict[str, Any] = result.body
    return body


def _events(path: Path, kind: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in events if e["event"] == kind]


# -- evaluated and re-executed ---------------------------------------------------------------


def test_an_agent_in_another_language_is_evaluated_and_re_executed_from_the_cli(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = _node()
    agent = f"{node} {EXAMPLES / 'pit_stdio.mjs'}"
    config = tmp_path / "run.json"
    config.write_text(
        json.dumps(
            {
                "bundle_path": str(march_release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-06",
                "probe": 3,
                "agent_process": "isolated",
            }
        )
    )
    receipt, trajectory = tmp_path / "out" / "receipt.json", tmp_path / "out" / "t.jsonl"
    paths = ["--receipt", str(receipt), "--trajectory", str(trajectory)]
    assert main(["run", "--config", str(config), "--agent-cmd", agent, *paths]) == 0
    out = capsys.readouterr().out
    assert "agent_process=isolated" in out
    body = json.loads(receipt.read_text())["body"]
    assert body["config"]["agent"] == f"stdio:{Path(node).name} pit_stdio.mjs"
    assert body["config"]["agent_transport"] == "stdio"
    assert body["config"]["agent_dialect"] == "pit"
    assert body["config"]["agent_digest"] == body["config"]["agent_source_sha256"]
    assert all(c["status"] == "complete" and c["trades"] > 0 for c in body["cells"])
    assert body["probe"]["status"] == "complete"

    verify = ["verify", str(receipt), "--trajectory", str(trajectory), "--bundle",
              str(march_release)]  # fmt: skip
    assert main([*verify, "--reexecute", "--agent-cmd", agent]) == 0
    out = capsys.readouterr().out
    assert "scores re-derived ok" in out
    assert "reexecution ok" in out and "note:" not in out  # the same agent, byte for byte

    # the same rule written in Python reproduces every decision, and is said to be another agent
    assert main([*verify, "--reexecute", "--json", "--agent-cmd",
                 f"{PYTHON} {EXAMPLES / 'pit_stdio.py'}"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out.split("scores re-derived ok\n", 1)[1])
    assert report["result"] == REPRODUCED
    assert report["agent_digest"]["same"] is False
    assert report["steps_compared"] == sum(c["sessions"] for c in body["cells"]) + 3


@pytest.mark.parametrize("dialect", ["pit", "sharpebench"])
def test_the_reference_agents_pass_re_execution_in_both_dialects(
    march_release: Path, tmp_path: Path, dialect: str
) -> None:
    spec = command_agent([PYTHON, str(EXAMPLES / f"{dialect}_stdio.py")], dialect=dialect)
    config = sandbox_config(march_release, tmp_path, agent_cmd="x", dialect=dialect, probe=2)
    body = _run(spec, config)
    assert all(c["status"] == "complete" for c in body["cells"])
    again = reexecute(
        config.receipt_path, trajectory=config.trajectory_path, bundle=march_release, agent=spec
    )
    assert again.result == REPRODUCED, again.to_json()
    assert again.agent_digest_recorded == again.agent_digest_reexecuted
    sessions = sum(c["sessions"] for c in body["cells"])
    assert again.steps_compared == sessions + (2 if dialect == "pit" else 0)


@pytest.mark.parametrize(
    ("reads", "cell", "step", "session"),
    [
        # the wall clock, read at one step of one cell
        ("time.time_ns()", "main/dump", 2, "2023-03-02"),
        # unseeded dice
        ("random.getrandbits(64)", "shifted/pit", 3, "2023-03-03"),
    ],
)
def test_an_agent_that_reads_the_clock_or_dice_diverges_at_that_step(
    march_release: Path, tmp_path: Path, reads: str, cell: str, step: int, session: str
) -> None:
    arm, clock = cell.split("/")
    agent = _agent(
        tmp_path,
        "cheat.py",
        f"""
        def decide(task, call, step):
            rows = call("pit_list", limit=2)["rows"]
            picks = [r["row_key"] for r in rows]
            if (task["arm"], task["clock"], step) == ({arm!r}, {clock!r}, {step}):
                picks.append("r-%x" % {reads})  # a key no row has: refused, and recorded
            return picks, ""
        """,
    )
    spec = command_agent([PYTHON, str(agent)])
    config = sandbox_config(march_release, tmp_path / "out", probe=0)
    per_cell = _run(spec, config)["cells"][0]["sessions"]
    again = reexecute(
        config.receipt_path, trajectory=config.trajectory_path, bundle=march_release, agent=spec
    )
    assert again.result == DIVERGED
    divergence = again.divergence
    assert divergence is not None
    assert (divergence.cell, divergence.step, divergence.session) == (cell, step, session)
    assert divergence.recorded["picks"] == divergence.reexecuted["picks"]
    assert divergence.recorded["rejected"] != divergence.reexecuted["rejected"]
    arms = ["main", "redacted", "shifted"]
    clocks = ["leaky", "dump", "pit"]
    before = (arms.index(arm) * 3 + clocks.index(clock)) * per_cell + step - 1
    assert again.steps_compared == before


def test_a_change_in_reasoning_text_alone_is_not_a_divergence(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(
        tmp_path,
        "talker.py",
        """
        def decide(task, call, step):
            rows = call("pit_list", limit=1)["rows"]
            return [r["row_key"] for r in rows], "thought at %d" % time.time_ns()
        """,
    )
    spec = command_agent([PYTHON, str(agent)])
    config = sandbox_config(march_release, tmp_path / "out", probe=0)
    _run(spec, config)
    again = reexecute(
        config.receipt_path, trajectory=config.trajectory_path, bundle=march_release, agent=spec
    )
    assert again.result == REPRODUCED


def test_verify_reexecute_exits_1_with_the_divergence(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = _agent(
        tmp_path,
        "dice.py",
        """
        def decide(task, call, step):
            return ["r-%x" % random.getrandbits(64)], ""
        """,
    )
    config = sandbox_config(march_release, tmp_path / "out", probe=0)
    _run(command_agent([PYTHON, str(agent)]), config)
    code = main(["verify", config.receipt_path, "--trajectory", config.trajectory_path,
                 "--bundle", str(march_release), "--reexecute", "--json",
                 "--agent-cmd", f"{PYTHON} {agent}"])  # fmt: skip
    assert code == 1
    report = json.loads(capsys.readouterr().out.split("scores re-derived ok\n", 1)[1])
    assert report["result"] == "diverged"
    assert report["divergence"]["cell"] == "main/leaky"
    assert report["divergence"]["step"] == 1


# -- sharpebench's dialect -------------------------------------------------------------------


def test_a_sharpebench_agent_sees_new_and_held_rows_without_prices(
    march_release: Path, tmp_path: Path
) -> None:
    agent = tmp_path / "echo.py"
    agent.write_text(
        textwrap.dedent(
            """
            import json, sys
            for line in sys.stdin:
                seen = json.loads(line)
                held = [p["symbol"] for p in seen["portfolio"]]
                new = [s["symbol"] for s in seen["symbols"] if s["symbol"] not in held]
                orders = [{"symbol": s, "action": "buy", "target_weight": 0.2} for s in new[:1]]
                orders += [{"symbol": s, "action": "buy", "target_weight": -0.5} for s in new[1:2]]
                orders += [{"symbol": s, "action": "sell", "target_weight": 0.0} for s in held]
                summary = {"date": seen["date"], "cash": seen["cash"],
                           "symbols": [s["symbol"] for s in seen["symbols"]],
                           "prices": [s["close_history"] for s in seen["symbols"]
                                      if s["close_history"]],
                           "news": sorted({len(s["news"]) for s in seen["symbols"]}),
                           "portfolio": seen["portfolio"]}
                said = {"orders": orders, "reasoning": json.dumps(summary)}
                sys.stdout.write(json.dumps(said) + "\\n")
                sys.stdout.flush()
            """
        )
    )
    spec = command_agent([PYTHON, str(agent)], dialect="sharpebench")
    config = sandbox_config(
        march_release, tmp_path / "out", agent_cmd="x", dialect="sharpebench", hold_sessions=2
    )
    body = _run(spec, config)
    trajectory = Path(config.trajectory_path)
    sessions = _events(trajectory, "session")
    decisions = _events(trajectory, "decision")
    main_leaky = [d for d in decisions if (d["arm"], d["clock"]) == ("main", "leaky")]
    for n, decision in enumerate(main_leaky):
        seen = json.loads(decision["text"])
        shown = sessions[n]
        assert seen["date"] == shown["shown_session_date"]
        assert seen["cash"] == 1.0
        assert seen["prices"] == [] and seen["news"] == [1]
        held = [p["symbol"] for p in seen["portfolio"]]
        # held: the picks of the sessions still inside the hold, one unit at no stated price
        expected = [k for d in main_leaky[max(0, n - 1) : n] for k in d["picks"]]
        assert held == expected
        assert all(p["shares"] == 1 and p["avg_price"] == 0 for p in seen["portfolio"])
        assert len(seen["symbols"]) == shown["newly_knowable"] + len(held)
        bought = [o["symbol"] for o in decision["orders"] if o["target_weight"] > 0]
        assert decision["picks"] == bought and len(bought) == min(1, shown["newly_knowable"])
        assert decision["ignored_orders"] == len(decision["orders"]) - len(decision["picks"])
    shifted = next(d for d in decisions if d["arm"] == "shifted")
    assert json.loads(shifted["text"])["date"].startswith("2033-")
    cells = {(c["arm"], c["clock"]): c for c in body["cells"]}
    assert cells[("main", "leaky")]["ignored_orders"] == sum(
        d["ignored_orders"] for d in main_leaky
    )
    assert body["probe"] == {"arm": "shifted", "status": "not_applicable", "items": []}
    assert any(line.startswith("probe: not_applicable") for line in body["limits"])


@pytest.mark.parametrize("process", ["isolated", "in_process"])
def test_a_final_decision_with_no_newline_before_eof_counts_as_sharpebench_reads_it(
    march_release: Path, tmp_path: Path, process: str
) -> None:
    """sharpebench reads a final line with no newline as a line: an entrant that writes
    its last decision that way and leaves has decided, and its cells are complete."""
    agent = tmp_path / "last_unterminated.py"
    agent.write_text(
        textwrap.dedent(
            """
            import json, sys
            for line in sys.stdin:
                seen = json.loads(line)
                orders = [{"symbol": s["symbol"], "action": "buy", "target_weight": 0.1}
                          for s in seen["symbols"][:1]]
                said = json.dumps({"orders": orders})
                if seen["date"].endswith("-03-06"):  # the last session walked
                    sys.stdout.write(said)
                    sys.stdout.flush()
                    sys.exit(0)
                sys.stdout.write(said + "\\n")
                sys.stdout.flush()
            """
        )
    )
    spec = command_agent([PYTHON, str(agent)], dialect="sharpebench")
    config = sandbox_config(
        march_release, tmp_path / "out", agent_cmd="x", dialect="sharpebench",
        agent_process=process,
    )  # fmt: skip
    body = _run(spec, config)
    assert [c["status"] for c in body["cells"]] == ["complete"] * 9
    assert body["attempts"] == []
    last = [d for d in _events(Path(config.trajectory_path), "decision")][-1]
    assert last["session"] == "2023-03-06" and len(last["orders"]) == len(last["picks"]) == 1


def test_an_agent_written_from_sharpebenchs_reference_schemas_alone_runs(
    march_release: Path, tmp_path: Path
) -> None:
    """Written from sharpebench's published schemas (not from this project's code): every
    field of a Decision, orders of every action, confidence given and left out."""
    reference = SHARED / "reference" / "sharpebench-schema"
    if not reference.is_dir():
        pytest.skip(f"needs the shared reference schemas ({reference})")
    decision_schema = json.loads((reference / "decision.schema.json").read_text())
    agent = tmp_path / "entrant.py"
    agent.write_text(
        textwrap.dedent(
            """
            import json, sys
            import jsonschema
            schema = json.load(open(sys.argv[1]))
            for line in sys.stdin:
                seen = json.loads(line)
                try:
                    jsonschema.validate(seen, schema)
                    verdict = "observation valid"
                except jsonschema.ValidationError as exc:
                    verdict = "observation invalid: %s" % exc.message
                orders = []
                for n, symbol in enumerate(s["symbol"] for s in seen["symbols"][:4]):
                    order = {"symbol": symbol, "action": ["buy", "hold", "close", "sell"][n],
                             "target_weight": [0.25, 0.0, 0.0, -0.1][n],
                             "rationale": "rule %d" % n}
                    if n % 2 == 0:
                        order["confidence"] = 0.75
                    orders.append(order)
                said = {"orders": orders, "reasoning": verdict,
                        "cost": {"cost_usd": 0.0, "tokens_in": 10, "tokens_out": 2,
                                 "reasoning_tokens": 0}}
                sys.stdout.write(json.dumps(said) + "\\n")
                sys.stdout.flush()
            """
        )
    )
    # the schema file it names is shown to it read-only at its own path
    command = [PYTHON, str(agent), str(reference / "observation.schema.json")]
    spec = command_agent(command, dialect="sharpebench")
    config = sandbox_config(march_release, tmp_path / "out", agent_cmd="x", dialect="sharpebench")
    body = _run(spec, config)
    assert all(c["status"] == "complete" and c["agent_errors"] == 0 for c in body["cells"])
    assert all(c["decisions_with_picks"] == 3 for c in body["cells"])
    for decision in _events(Path(config.trajectory_path), "decision"):
        # what it was shown, and what was recorded of its answer, are the reference's
        assert decision["text"] == "observation valid"
        jsonschema.validate({"orders": decision["orders"], "cost": decision["cost"]},
                            decision_schema)  # fmt: skip
        confidences = [o.get("confidence") for o in decision["orders"]]
        assert confidences == [0.75, None, 0.75, None][: len(confidences)]


# -- the agent's faults and ours -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind", "named"),
    [
        (
            'send({"type": "decision", "picks": [], "text": "", "confidence": 1}); '
            "sys.stdin.readline()",
            "protocol_violation",
            "confidence",
        ),
        (
            'send({"type": "tool", "tool": "pit_list", "args": {"limt": 2}})',
            "protocol_violation",
            "limt",
        ),
        ('send({"type": "shell", "cmd": "ls"})', "protocol_violation", '"type"'),
        ("sys.stdout.write('{' * (9 << 20)); sys.stdout.flush()", "oversized_output", "bytes"),
    ],
)
def test_a_broken_message_is_the_agents_final_fault(
    march_release: Path, tmp_path: Path, body: str, kind: str, named: str
) -> None:
    agent = _agent(
        tmp_path,
        "broken.py",
        f"""
        def decide(task, call, step):
            if step == 2:
                {body}
                time.sleep(30)
            return [], ""
        """,
    )
    config = sandbox_config(march_release, tmp_path / "out", arms=("main",), clocks=("pit",))
    body_ = _run(command_agent([PYTHON, str(agent)]), config)
    cell = body_["cells"][0]
    assert cell["status"] == "agent_error"
    assert cell["agent_fault"]["kind"] == kind
    assert named in cell["agent_fault"]["message"]
    assert cell["sessions"] == 2
    assert body_["attempts"] == []  # never retried


def test_an_agent_process_that_exits_mid_cell_is_retried_and_never_scored_as_its_result(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(
        tmp_path,
        "quitter.py",
        """
        def decide(task, call, step):
            if step == 2:
                sys.stderr.write("giving up\\n")
                sys.exit(7)
            return [], ""
        """,
    )
    config = sandbox_config(march_release, tmp_path / "out", arms=("main",), clocks=("pit",))
    body = _run(command_agent([PYTHON, str(agent)]), config)
    assert body["cells"][0]["status"] == "incomplete"
    assert body["rankable"] is False
    assert len(body["attempts"]) == 3
    # how it ended is said: its exit code and the end of its stderr
    assert all("code 7" in a["failure"] and "giving up" in a["failure"] for a in body["attempts"])


def test_an_in_process_command_agent_past_its_budget_is_stopped(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(
        tmp_path,
        "slow.py",
        """
        def decide(task, call, step):
            time.sleep(60)
        """,
    )
    config = sandbox_config(
        march_release, tmp_path / "out", arms=("main",), clocks=("pit",), agent_process="in_process"
    )
    body = _run(command_agent([PYTHON, str(agent)], timeout=1.0), config)
    assert body["cells"][0]["status"] == "agent_error"
    assert body["cells"][0]["agent_fault"]["kind"] == "resource_limit"


def test_a_command_agent_sees_neither_the_release_nor_another_cells_files(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(
        tmp_path,
        "snoop.py",
        f"""
        def decide(task, call, step):
            found = []
            for path in ({str(march_release / "manifest.json")!r}, "/tmp/left-by-a-cell"):
                try:
                    open(path).read()
                    found.append(path)
                except OSError:
                    pass
            open("/tmp/left-by-a-cell", "w").write(task["arm"])
            return [], json.dumps(found)
        """,
    )
    config = sandbox_config(march_release, tmp_path / "out")
    _run(command_agent([PYTHON, str(agent)]), config)
    texts = [json.loads(d["text"]) for d in _events(Path(config.trajectory_path), "decision")]
    # each cell's first step finds nothing; its own file is its own from the second on
    per_cell = len(texts) // 9
    assert all(found == [] for found in texts[::per_cell])
    assert all(found == ["/tmp/left-by-a-cell"] for n, found in enumerate(texts) if n % per_cell)


def test_a_command_may_not_name_the_release_or_the_outputs(
    march_release: Path, tmp_path: Path
) -> None:
    manifest = march_release / "manifest.json"
    spec = command_agent([PYTHON, str(EXAMPLES / "pit_stdio.py"), str(manifest)])
    with pytest.raises(ConfigError, match="never shown to the agent"):
        run(spec, sandbox_config(march_release, tmp_path / "out"))
    # the run's own outputs neither (a file beside them, like the agent itself, is fine)
    out = tmp_path / "beside"
    out.mkdir()
    (out / "receipt.json").write_text("{}")
    spec = command_agent([PYTHON, str(EXAMPLES / "pit_stdio.py"), str(out / "receipt.json")])
    with pytest.raises(ConfigError, match="never shown to the agent"):
        run(spec, sandbox_config(march_release, out))
    with pytest.raises(AgentCommandError, match="not a program"):
        command_agent("no-such-interpreter agent.py")
    with pytest.raises(ConfigError, match="name one agent"):
        sandbox_config(march_release, tmp_path, agent="stub2:x", agent_cmd="python3 a.py")
    with pytest.raises(ConfigError, match="only an external agent"):
        sandbox_config(march_release, tmp_path, dialect="sharpebench")


def test_the_agents_digest_is_its_files_wherever_they_lie(tmp_path: Path) -> None:
    one, two = tmp_path / "a", tmp_path / "b"
    for folder in (one, two):
        folder.mkdir()
        shutil.copy(EXAMPLES / "pit_stdio.py", folder / "agent.py")
    first = command_agent(["python3", str(one / "agent.py")]).source_sha256()
    assert first == command_agent(["python3", str(two / "agent.py")]).source_sha256()
    (two / "agent.py").write_text((two / "agent.py").read_text() + "\n# changed\n")
    assert first != command_agent(["python3", str(two / "agent.py")]).source_sha256()
    assert first != command_agent(["python3", "-u", str(one / "agent.py")]).source_sha256()


def test_an_in_process_command_agent_leaves_no_process_behind(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(tmp_path, "lingering.py", FIRST_TWO)
    config = sandbox_config(
        march_release, tmp_path / "out", arms=("main",), agent_process="in_process", probe=0
    )
    homes = set(Path(tempfile.gettempdir()).glob("agent-*"))
    body = _run(command_agent([PYTHON, str(agent)]), config)
    assert all(c["status"] == "complete" for c in body["cells"])
    running = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if str(agent).encode() in cmdline.read_bytes():
                running.append(cmdline.parent.name)
    assert running == []
    assert set(Path(tempfile.gettempdir()).glob("agent-*")) == homes  # each cell's removed


def test_the_recorded_run_is_never_shown_to_the_agent_run_again(
    march_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    recorded = out / "trajectory.jsonl"
    agent = _agent(
        tmp_path,
        "reader.py",
        f"""
        def decide(task, call, step):
            rows = call("pit_list", limit=2)["rows"]
            try:
                seen = open({str(recorded)!r}).read()
            except OSError:
                seen = ""
            return [r["row_key"] for r in rows] + (["r-saw-the-record"] if seen else []), ""
        """,
    )
    config = sandbox_config(march_release, out, arms=("main",), probe=0)
    _run(command_agent([PYTHON, str(agent)]), config)
    assert recorded.stat().st_size > 0
    # named on its command line, it is refused; inside a folder it is shown, masked
    naming = command_agent([PYTHON, str(agent), str(recorded)])
    with pytest.raises(ConfigError, match="never shown to the agent"):
        reexecute(config.receipt_path, trajectory=recorded, bundle=march_release, agent=naming)
    nosy = command_agent([PYTHON, str(agent)], agent_dirs=[str(out)])
    again = reexecute(config.receipt_path, trajectory=recorded, bundle=march_release, agent=nosy)
    assert again.result == REPRODUCED, again.to_json()


def test_a_cell_without_a_recorded_result_is_not_compared_and_said_so(
    march_release: Path, tmp_path: Path
) -> None:
    agent = _agent(
        tmp_path,
        "pit_quitter.py",
        """
        def decide(task, call, step):
            if task["clock"] == "pit":
                sys.exit(3)
            return [r["row_key"] for r in call("pit_list", limit=1)["rows"]], ""
        """,
    )
    spec = command_agent([PYTHON, str(agent)])
    config = sandbox_config(march_release, tmp_path / "out", arms=("main",), probe=0)
    body = _run(spec, config)
    assert [c["status"] for c in body["cells"]] == ["complete", "complete", "incomplete"]
    again = reexecute(
        config.receipt_path, trajectory=config.trajectory_path, bundle=march_release, agent=spec
    )
    assert again.result == REPRODUCED
    assert again.steps_compared == body["cells"][0]["sessions"] * 2
    assert again.notes[0] == "main/pit has no result in the recorded run (incomplete): not compared"
