"""Golden outputs: what today's engine writes, kept byte for byte, so that moving code
(the engine regrouped by concept, typed artifacts) cannot change an artifact unseen.

Each case runs a fixed configuration and compares what it wrote with the file under
``tests/golden/``. Compared whole: the receipt bodies of runs in process (the stub; a
baseline priced with SYNTHETIC prices), each binding its trajectory by its sha256. Compared with the
few fields that depend on the machine or the clock set to a placeholder, and only those:
an isolated run's capabilities (what the sandbox found on this machine, its environment
names included) and the hashes that cover them; an answer set's and a judged set's
times and latencies. ``PIT_GOLDEN_UPDATE=1`` rewrites the files (for a change an issue
asks for, to be read in review)."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents import stub
from harness.agents.adapters.plain import from_callable
from harness.agents.baselines import earliest_five
from harness.points import Point, load_points
from harness.points.model import plain
from harness.points.run import answer_points, judge_answer_set
from tests.support.chat_server import Chat
from tests.support.data import build_prices, build_release, shared_path
from tests.support.golden import VOLATILE, body_text, matches
from tests.support.loopback_agents import openai_agent
from tests.support.model_server import SECRET
from tests.support.model_server import egress_config as _config
from tests.support.points import answerer, judge, knows
from tests.support.sandbox import require_sandbox

WINDOW = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-10"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The release and prices every golden run reads (their own seeds, fixed here)."""
    folder = tmp_path_factory.mktemp("golden")
    release = build_release(folder / "release", end=date(2023, 3, 31), seed=11, rows=12_000)
    prices = build_prices(folder / "prices-SYNTHETIC.csv", release, seed=5)
    return release, prices


def _run(agent: Any, release: Path, out: Path, **extra: Any) -> tuple[Path, Path]:
    config = RunConfig(
        bundle_path=str(release), trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"), **WINDOW, **extra,  # type: ignore[arg-type]
    )  # fmt: skip
    run(agent, config)
    return out / "receipt.json", out / "trajectory.jsonl"


def test_a_stub_run_in_process_is_byte_identical(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    receipt, _ = _run(stub(), inputs[0], tmp_path, agent_process="in_process")
    matches("stub-in-process.body.json", body_text(receipt) + "\n")  # binds the trajectory


def test_a_priced_baseline_run_is_byte_identical(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    release, prices = inputs
    priced = {"path": str(prices), "source": "SYNTHETIC golden prices", "pulled_at": "generated"}
    receipt, _ = _run(earliest_five, release, tmp_path, agent_process="in_process", prices=priced)
    matches("earliest-five-priced.body.json", body_text(receipt) + "\n")  # and its trajectory


def _without_machine(body: dict[str, Any]) -> dict[str, Any]:
    """An isolated run's body with what the sandbox found on this machine (and every
    hash over it) set to a placeholder."""
    body = json.loads(json.dumps(body))
    body["capabilities"] = VOLATILE
    body["capability_line"] = VOLATILE
    body["binding"]["trajectory_sha256"] = VOLATILE
    body["trajectory"]["sha256"] = VOLATILE
    return body


def test_an_isolated_stub_run_is_identical_but_for_this_machines_capabilities(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    require_sandbox()
    receipt, trajectory = _run(stub(), inputs[0], tmp_path, agent_process="isolated")
    body = json.loads(body_text(receipt))
    matches("stub-isolated.body.json", json.dumps(_without_machine(body), indent=1) + "\n")
    lines = []
    for line in trajectory.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "capabilities":
            line = json.dumps({"event": "capabilities", "found": VOLATILE})
        lines.append(line)
    steady = "\n".join(lines) + "\n"
    matches("stub-isolated.trajectory.sha256", hashlib.sha256(steady.encode()).hexdigest() + "\n")


TIMES = {"answered_at", "judged_at", "latency_seconds"}


def _steady(value: Any) -> Any:
    """An answer or judged set with its times and latencies set to a placeholder."""
    if isinstance(value, dict):
        return {k: VOLATILE if k in TIMES else _steady(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def test_an_answer_set_and_its_judged_set_are_identical_but_for_their_times(
    server: tuple[Chat, str],
) -> None:
    points: list[Point] = load_points(shared_path("data", "pitfall", "points"))[:4]
    state, url = server
    state.agent = knows(points, lambda i, n: (i + n) % 2 == 0)
    made = answer_points(answerer(url), points, samples=2, workers=1)
    answers = plain(made)  # the sets as their files hold them
    judged = plain(judge_answer_set(judge(url), made, points, stability_k=2, stride=2, workers=1))
    judged["answer_set_sha256"] = VOLATILE  # a digest over the answers' times
    for per_point in judged["points"]:
        per_point["date"] = VOLATILE  # the day it was judged
    matches("answer-set.json", json.dumps(_steady(answers), indent=1, sort_keys=True) + "\n")
    matches("judged-set.json", json.dumps(_steady(judged), indent=1, sort_keys=True) + "\n")


def _without_port(text: str, port: int, folder: Path) -> str:
    return text.replace(f":{port}", ":<port>").replace(str(folder), "<tmp>")


def test_an_egress_run_on_loopback_is_identical_but_for_its_port_and_machine(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An isolated agent calling a loopback model through the recording proxy: the body
    with the server's port, the run's folder and what the sandbox found set aside (the
    config's hash covers the port), and the trajectory's decisions and exchanges but for
    their headers and times."""
    require_sandbox()
    port, cert, _ = model
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    agent = from_callable(openai_agent(f"https://127.0.0.1:{port}/v1"))
    run(agent, _config(march_release, tmp_path, port, cert))
    body = _without_machine(json.loads(body_text(tmp_path / "receipt.json")))
    body["binding"]["config_sha256"] = body["run_id"] = VOLATILE  # hashes over the port
    text = _without_port(json.dumps(body, indent=1), port, tmp_path)
    matches("egress-loopback.body.json", text + "\n")
    kept = []
    for line in (tmp_path / "trajectory.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "model_exchange":
            event = {k: v for k, v in event.items() if "header" not in k and "time" not in k}
            event = {k: v for k, v in event.items() if k not in {"started_at", "elapsed_ms"}}
        elif event.get("event") != "decision":
            continue
        kept.append(_without_port(json.dumps(event, sort_keys=True), port, tmp_path))
    matches("egress-loopback.trajectory.json", "\n".join(kept) + "\n")
