"""Inspect on both sides of the harness: its tools (``pit_tools``), a solver run through
the nine cells (``from_inspect_solver``), and the exported samples rebound to their
session's tools (``session_tools``, ``examples/inspect/reverse.py``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, execute_tools
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState, generate
from inspect_ai.tool import ToolCall, ToolDef

from harness import run
from harness.agents.adapters.inspect import from_inspect_solver, pit_tools
from harness.agents.stub import stub
from harness.release.bundle import Bundle
from harness.runs.export import FIELDS, SCORER, RebindError, export_points, session_tools
from harness.tools.table import TOOLS
from tests.support.model_server import egress_config
from tests.support.sandbox import require_sandbox

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "inspect"
WINDOW = {"forms": ["8-K"], "start": "2023-03-01", "end": "2023-03-10"}


def _examples() -> Any:
    """examples/inspect's modules, imported as Inspect imports them (by folder)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import reverse

    return reverse


def _tools(release: Path, arm: str = "main", session: int = 3) -> tuple[Any, list[Any]]:
    out = release.parent / f"samples-{arm}.jsonl"
    if not out.exists():
        export_points(Bundle.load(release, **WINDOW), arm=arm, clock="pit", out=out)
    metadata = json.loads(out.read_text().splitlines()[session])["metadata"]
    calls: list[Any] = []
    return session_tools(release, metadata, lambda *call: calls.append(call)), calls


def _await(coroutine: Any) -> Any:
    """A coroutine's result, run in a thread of its own: the suite's browser tests keep an
    event loop running in this thread, and a loop cannot be nested."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _call(tools: list[Any], name: str, **arguments: Any) -> Any:
    message = ChatMessageAssistant(
        content="", tool_calls=[ToolCall(id="c1", function=name, arguments=arguments)]
    )
    return _await(execute_tools([message], tools)).messages[0]


def test_the_four_tools_are_the_tables_with_every_argument_described(
    march_release: Path,
) -> None:
    toolbox, _ = _tools(march_release)
    for made in pit_tools(toolbox):
        info = ToolDef(made)
        table = TOOLS[info.name]
        assert info.description == table.description
        assert list(info.parameters.properties) == [p.name for p in table.params]
        assert all(p.description for p in info.parameters.properties.values())
        assert sorted(info.parameters.required) == sorted(
            p.name for p in table.params if p.required
        )
    assert [ToolDef(t).name for t in pit_tools(toolbox)] == list(TOOLS)


def test_a_result_past_inspects_16_kib_cut_reaches_the_model_whole_as_recorded(
    march_release: Path,
) -> None:
    toolbox, calls = _tools(march_release, session=-1)
    message = _call(pit_tools(toolbox), "pit_list", limit=None, since="window_start")
    assert message.error is None
    assert len(message.text.encode()) > 16 * 1024  # Inspect's default cut
    (tool, _args, result, _texts) = calls[-1]
    assert tool == "pit_list" and json.loads(message.text) == result  # what was recorded


def test_a_harness_error_reaches_the_model_as_a_tool_error(march_release: Path) -> None:
    toolbox, calls = _tools(march_release)
    message = _call(pit_tools(toolbox), "pit_list", limit=-1)
    assert message.error is not None
    assert "limit must be a non-negative integer" in message.error.message
    assert "error" in calls[-1][2]  # and the trajectory would hold it


def test_an_inspect_solver_runs_through_nine_isolated_cells_and_the_receipt_verifies(
    march_release: Path, tmp_path: Path
) -> None:
    """As docs/evaluators.md says: the forward example's run.json, its folder on PYTHONPATH."""
    require_sandbox()
    config = json.loads((EXAMPLES / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**config, "bundle_path": str(march_release)}))
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES)}
    pit = [sys.executable, "-m", "harness.cli"]
    done = subprocess.run(
        [*pit, "run", "--config", "run.json"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "agent_process=isolated" in done.stdout
    body = json.loads((tmp_path / "out" / "receipt.json").read_text())["body"]
    assert body["valid"] and len(body["cells"]) == 9
    assert all(c["status"] == "complete" and c["agent_errors"] == 0 for c in body["cells"])
    events = [
        json.loads(x) for x in (tmp_path / "out" / "trajectory.jsonl").read_text().splitlines()
    ]
    # the mock model read at every session and bought the first three rows it read
    decisions, listed = 0, None
    for event in events:
        if event["event"] == "tool_call" and event["tool"] == "pit_list":
            listed = [row["row_key"] for row in event["result"]["rows"]]
        if event["event"] == "decision":
            assert listed is not None and event["picks"] == listed[:3]
            decisions, listed = decisions + 1, None
    assert decisions == 81 and body["probe"]["items"]
    checked = subprocess.run(
        [*pit, "verify", "out/receipt.json", "--trajectory", "out/trajectory.jsonl",
         "--bundle", str(march_release)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_inspect_solver_reaches_its_provider_only_through_the_recording_proxy(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inspect's own OpenAI provider, in the sandbox, to the run's declared endpoint (a
    chat-completions one: Inspect would send a model it does not know to the Responses API)."""
    require_sandbox()
    port, cert, seen = model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-inspect-test-0a1b2c3d")
    agent = from_inspect_solver(
        generate,
        "openai/loopback-1",
        base_url=f"https://127.0.0.1:{port}/v1",
        model_args={"responses_api": False},
    )
    config = egress_config(
        march_release, tmp_path, port, cert, pass_env=("OPENAI_API_KEY",),
        probe=0, arms=("main",), clocks=("pit",),
    )  # fmt: skip
    body = run(agent, config).body
    assert body["valid"] is True, body["invalidated_by"]
    decisions = [
        json.loads(x)
        for x in (tmp_path / "trajectory.jsonl").read_text().splitlines()
        if '"event":"decision"' in x
    ]
    assert decisions and all(d["text"].startswith("read ") for d in decisions)
    assert (
        len(seen)
        == len(decisions)
        == body["network"]["model_egress"]["exchanges"][f"127.0.0.1:{port}"]
    )
    # the model was offered the four tools, by Inspect, as the table declares them
    assert [t["function"]["name"] for t in seen[0]["tools"]] == list(TOOLS)
    assert "sk-inspect-test-0a1b2c3d" not in (tmp_path / "trajectory.jsonl").read_text()


def test_exported_samples_are_scalar_typed_and_name_their_scorer(march_release: Path) -> None:
    for arm in ("main", "shifted"):
        out = march_release.parent / f"typed-{arm}.jsonl"
        export_points(Bundle.load(march_release, **WINDOW), arm=arm, clock="pit", out=out)
        for sample in map(json.loads, out.read_text().splitlines()):
            metadata = sample["metadata"]
            expected = set(FIELDS) - ({"release"} if arm == "shifted" else set())
            assert set(metadata) == expected
            assert all(type(metadata[k]) is FIELDS[k] for k in metadata)  # no lists, no nulls
            assert sample["vars"] == {"prompt": sample["input"], **metadata}
            assert metadata["scorer"] == SCORER and sample["target"] == ""
            assert metadata["known_at"].endswith("Z")


def test_session_tools_answer_as_the_runners_cell_did_on_every_arm(
    march_release: Path, tmp_path: Path
) -> None:
    from tests.harness.runs.test_run import config

    result = run(stub(), config(march_release, tmp_path, probe=0, clocks=("pit",)))
    assert result.body["valid"]
    events = [json.loads(x) for x in (tmp_path / "trajectory.jsonl").read_text().splitlines()]
    for arm in ("main", "redacted", "shifted"):
        out = tmp_path / f"{arm}.jsonl"
        export_points(Bundle.load(march_release, **WINDOW), arm=arm, clock="pit", out=out)
        ran = [e["result"] for e in events if e["event"] == "tool_call" and e["arm"] == arm]
        samples = [json.loads(x)["metadata"] for x in out.read_text().splitlines()]
        assert len(ran) == len(samples)
        for metadata, answer in zip(samples, ran, strict=True):
            tools = session_tools(march_release, metadata)
            assert tools.pit_list(limit=None) == answer
            if arm == "shifted":
                assert metadata["window_start"] == "2033-03-01"


def test_session_tools_refuse_another_release_and_a_session_that_is_not_the_samples(
    march_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.jsonl"
    export_points(Bundle.load(march_release, **WINDOW), arm="main", clock="pit", out=out)
    metadata = json.loads(out.read_text().splitlines()[2])["metadata"]
    with pytest.raises(RebindError, match="not of"):
        session_tools(march_release, {**metadata, "bundle_content_digest": "sha256:" + "0" * 64})
    with pytest.raises(RebindError, match="the sample says"):
        session_tools(march_release, {**metadata, "known_at": "2023-03-06T14:30:00Z"})
    with pytest.raises(RebindError, match="rows"):
        session_tools(march_release, {**metadata, "forms": "8-K,10-K"})
    with pytest.raises(RebindError, match="outside"):
        session_tools(march_release, {**metadata, "session_number": 99})


def test_knowable_picks_scores_a_look_ahead_pick_and_a_refusal_below_one(
    march_release: Path, tmp_path: Path
) -> None:
    from inspect_ai.model import ModelName, ModelOutput

    reverse = _examples()
    out = tmp_path / "s.jsonl"
    export_points(Bundle.load(march_release, **WINDOW), arm="main", clock="pit", out=out)
    lines = out.read_text().splitlines()
    early, late = json.loads(lines[1])["metadata"], json.loads(lines[-1])["metadata"]
    knowable = session_tools(march_release, early).pit_list(limit=2)["rows"]
    later = session_tools(march_release, late).pit_list(limit=1)["rows"]
    score = reverse.knowable_picks(str(march_release))

    def scored(text: str) -> float:
        state = TaskState(ModelName("mockllm/model"), "s", 1, "", [], metadata=early)
        state.output = ModelOutput.from_content("mockllm/model", text)
        return float(_await(score(state, Target(""))).value)

    keys = [r["row_key"] for r in knowable]
    assert scored(json.dumps({"picks": keys})) == 1.0
    assert scored(json.dumps({"picks": [*keys, later[0]["row_key"]]})) == pytest.approx(2 / 3)
    assert scored("I refuse to answer.") == 0.0  # Inspect's match() gave this 1.000


def test_the_lm_eval_task_declares_the_exports_fields_as_they_are() -> None:
    """examples/lm-eval/utils.py keeps a copy of FIELDS (its venv has no harness)."""
    import ast

    tree = ast.parse((REPO / "examples" / "lm-eval" / "utils.py").read_text())
    (declared,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FIELDS"
    ]
    assert isinstance(declared, ast.Dict)
    copied = {
        ast.literal_eval(k): {"str": str, "int": int}[v.id]  # type: ignore[arg-type,attr-defined]
        for k, v in zip(declared.keys, declared.values, strict=True)
    }
    assert copied == FIELDS


def test_what_an_inspect_solver_keeps_never_reaches_the_next_cell(
    march_release: Path, tmp_path: Path
) -> None:
    """A solver that counts its calls in a closure: each isolated cell starts from nothing."""
    require_sandbox()
    from inspect_ai.model import ModelOutput

    from tests.harness.runs.test_run import config

    calls: list[int] = []

    async def counting(state: TaskState, generate: Any) -> TaskState:
        calls.append(1)
        state.output = ModelOutput.from_content("mockllm/model", f"call {len(calls)}")
        return state

    body = run(
        from_inspect_solver(counting, "mockllm/model"), config(march_release, tmp_path, probe=0)
    ).body
    assert body["valid"] and body["capabilities"]["cells_isolated"] is True
    texts: dict[tuple[str, str], list[str]] = {}
    for event in map(json.loads, (tmp_path / "trajectory.jsonl").read_text().splitlines()):
        if event["event"] == "decision":
            texts.setdefault((event["arm"], event["clock"]), []).append(event["text"])
    assert len(texts) == 9 and calls == []  # nothing ran in this process
    for cell in texts.values():
        assert cell == [f"call {n}" for n in range(1, len(cell) + 1)]


def test_an_inspect_agent_decides_where_an_event_loop_already_runs(march_release: Path) -> None:
    """As in a notebook: ``decide`` is called from code running inside an event loop."""
    from inspect_ai.model import ModelOutput

    from harness.agents.base import Task

    async def answer(state: TaskState, generate: Any) -> TaskState:
        state.output = ModelOutput.from_content("mockllm/model", json.dumps({"picks": ["r-x"]}))
        return state

    agent = from_inspect_solver(answer, "mockllm/model").new()
    toolbox, _ = _tools(march_release)
    task = Task("trade", "pick", "main", "pit", toolbox.session_date, toolbox.known_at)

    async def inside_a_loop() -> Any:
        return agent.decide(task, toolbox)

    decision = _await(inside_a_loop())
    assert decision.picks == ("r-x",)
