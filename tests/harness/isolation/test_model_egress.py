"""An isolated agent that calls a model: the one way out is the run's recording proxy, to
declared endpoints only. The model is a loopback HTTPS server speaking the
chat-completions API with its own self-signed certificate; the agent uses the real
``openai`` client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.receipt.schemas import receipt_body_schema
from harness.receipt.verify import verify
from harness.rundata.config import ConfigError
from harness.runs.reexecute import DIVERGED, REPRODUCED, reexecute
from tests.support.loopback_agents import openai_agent as _openai_agent
from tests.support.model_server import SECRET, DetailedUsageHandler, serving_https, serving_model
from tests.support.model_server import egress_config as _config
from tests.support.sandbox import require_sandbox


def test_an_isolated_openai_agent_reaches_its_declared_model_and_every_exchange_is_recorded(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_sandbox()
    port, cert, seen = model
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    agent = _openai_agent(f"https://127.0.0.1:{port}/v1")
    result = run(from_callable(agent), _config(march_release, tmp_path, port, cert))
    body = result.body
    assert body["valid"] is True, body["invalidated_by"]
    assert all(c["status"] == "complete" for c in body["cells"]) and len(body["cells"]) == 9
    decisions = [
        json.loads(line)
        for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()
        if '"event":"decision"' in line or '"event":"model_exchange"' in line
    ]
    exchanges = [e for e in decisions if e["event"] == "model_exchange"]
    answered = [e for e in decisions if e["event"] == "decision"]
    # one call per session and per probe item, each seen by the server and recorded whole
    assert len(exchanges) == len(seen) == len(answered) + 2
    assert all(s["auth"] == f"Bearer {SECRET}" for s in seen)  # the key reached the model
    for exchange in exchanges:
        assert exchange["method"] == "POST" and exchange["status"] == 200
        assert exchange["url"] == f"https://127.0.0.1:{port}/v1/chat/completions"
        request = json.loads(exchange["request_body"]["text"])
        assert request["model"] == "loopback-1"
        assert json.loads(exchange["response_body"]["text"])["object"] == "chat.completion"
        headers = dict((k.lower(), v) for k, v in exchange["request_headers"])
        assert headers["authorization"] == "[redacted]"
    assert all(d["text"].startswith("read ") for d in answered)
    model_egress = body["network"]["model_egress"]
    assert model_egress["line"] == f"model_egress=127.0.0.1:{port}(recorded)"
    assert model_egress["exchanges"] == {f"127.0.0.1:{port}": len(exchanges)}
    assert body["config"]["model_endpoints"] == [f"127.0.0.1:{port}"]
    # each cell's usage: the server's usage block, three tokens each way per exchange
    usage = [c["usage"] for c in body["cells"]]
    assert sum(u["exchanges"] for u in usage) == len(exchanges)
    assert all(u["input_tokens"] == u["output_tokens"] == 3 * u["exchanges"] for u in usage)
    assert all(u["unknown_exchanges"] == 0 and u["unknown_because"] == {} for u in usage)
    assert [u["probe_exchanges"] for u in usage] == [0] * 8 + [2]  # served by shifted/pit
    # the key is written nowhere
    for path in (tmp_path / "trajectory.jsonl", tmp_path / "receipt.json"):
        assert SECRET not in path.read_text()
    assert verify(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", bundle=march_release
    ).ok
    schema = receipt_body_schema()
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(body))


def test_a_call_to_another_host_is_refused_and_invalidates_the_run(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_sandbox()
    port, cert, seen = model
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    agent = _openai_agent(f"https://127.0.0.1:{port}/v1", elsewhere="https://example.com/v1")
    cfg = _config(march_release, tmp_path, port, cert, probe=0, arms=("main",), clocks=("pit",))
    body = run(from_callable(agent), cfg).body
    assert body["valid"] is False
    attempts = body["network"]["attempts"]
    assert attempts and all(a["target"] == "example.com:443" for a in attempts)
    assert all(a["call"] == "model proxy: CONNECT" for a in attempts)
    texts = [
        json.loads(line)["text"]
        for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()
        if '"event":"decision"' in line
    ]
    assert texts and all("elsewhere refused" in t for t in texts)
    assert len(seen) == len(texts)  # the declared model still answered every session


def test_model_endpoints_are_refused_in_process_and_need_their_variables(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert = tmp_path / "none.pem"
    cfg = _config(march_release, tmp_path, 1, cert, agent_process="in_process")
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    with pytest.raises(ConfigError, match="model_endpoints need the agent's sandbox"):
        run(from_callable(lambda prompt, tools: []), cfg)
    monkeypatch.delenv("PIT_TEST_MODEL_KEY")
    require_sandbox()
    with pytest.raises(ConfigError, match="PIT_TEST_MODEL_KEY not set"):
        run(from_callable(lambda prompt, tools: []), _config(march_release, tmp_path, 1, cert))
    assert not (tmp_path / "receipt.json").exists()
    with pytest.raises(ConfigError, match="https://"):
        RunConfig(bundle_path="x", model_endpoints=("http://127.0.0.1:9",))
    with pytest.raises(ConfigError, match="only a run with model_endpoints"):
        RunConfig(bundle_path="x", pass_env=("HOME",))


def test_a_forged_host_inside_the_tunnel_is_refused_and_invalidates_the_run(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tunnel goes to the declared endpoint, but the request inside it names another
    host: the proxy answers 421, forwards nothing, and counts an egress attempt."""
    require_sandbox()
    port, cert, seen = model
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import os

        from openai import APIStatusError, OpenAI

        client = OpenAI(
            base_url=f"https://127.0.0.1:{port}/v1",
            api_key=os.environ["PIT_TEST_MODEL_KEY"],
            default_headers={"Host": "evil.example"},
            max_retries=0,
            timeout=30,
        )
        try:
            client.chat.completions.create(
                model="loopback-1", messages=[{"role": "user", "content": prompt}]
            )
            return {"picks": [], "text": "answered"}
        except APIStatusError as exc:
            return {"picks": [], "text": f"refused {exc.status_code}"}

    cfg = _config(march_release, tmp_path, port, cert, probe=0, arms=("main",), clocks=("pit",))
    body = run(from_callable(agent), cfg).body
    assert body["valid"] is False
    attempts = body["network"]["attempts"]
    assert attempts and all(
        (a["call"], a["target"]) == ("model proxy: Host", "evil.example") for a in attempts
    )
    texts = [
        json.loads(line)["text"]
        for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()
        if '"event":"decision"' in line
    ]
    assert texts and all(t == "refused 421" for t in texts)
    assert seen == []  # nothing reached the model
    assert body["network"]["model_egress"]["exchanges"] == {f"127.0.0.1:{port}": 0}


def test_a_model_exchange_in_a_failed_attempt_is_recorded_and_counts(
    march_release: Path,
    tmp_path: Path,
    model: tuple[int, Path, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Retry laundering through the model: an attempt that asks the model and then dies
    leaves its exchange in the trajectory, the ledger and the receipt's count."""
    from harness.receipt.rederive import rederive
    from harness.tools.toolbox import Toolbox

    require_sandbox()
    port, cert, seen = model
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    original = Toolbox.pit_coverage
    told: list[str] = []

    def crash_once(self: Toolbox) -> dict[str, Any]:
        result = original(self)
        if not told and (self.arm, self.clock) == ("main", "leaky"):
            told.append(self.session_date)
            return {**result, "crash_now": True}
        return result

    monkeypatch.setattr(Toolbox, "pit_coverage", crash_once)
    base_url = f"https://127.0.0.1:{port}/v1"

    def agent(prompt: str, tools: Any) -> list[str]:
        import os

        from openai import OpenAI

        if tools.pit_coverage().get("crash_now"):
            client = OpenAI(base_url=base_url, api_key=os.environ["PIT_TEST_MODEL_KEY"])
            client.chat.completions.create(
                model="loopback-1", messages=[{"role": "user", "content": "before I go"}]
            )
            os._exit(9)
        return []

    result = run(from_callable(agent), _config(march_release, tmp_path, port, cert, probe=0))
    assert told and len(seen) == 1  # the model answered the attempt that then died
    [entry] = result.body["attempts"]
    assert entry["cell"] == "main/leaky" and entry["model_exchanges"] == 1
    # the failed attempt's exchange is in its cell's usage, and in no decision's
    leaky = result.body["cells"][0]["usage"]
    assert (leaky["exchanges"], leaky["failed_attempt_exchanges"]) == (1, 1)
    assert leaky["input_tokens"] == 3 and leaky["decisions"]["with_exchanges"] == 0
    assert result.body["network"]["model_egress"]["exchanges"] == {f"127.0.0.1:{port}": 1}
    events = [json.loads(line) for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()]
    [exchange] = [e for e in events if e["event"] == "model_exchange"]
    assert "before I go" in exchange["request_body"]["text"]
    rederived = rederive(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", release=march_release
    )
    assert rederived.ok, rederived.first_mismatch


def test_a_model_calling_agent_is_re_executed_against_its_recorded_exchanges(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replay: the model is gone, another key is passed; an equal request (credentials
    removed) gets its recorded answer, so the run reproduces; an agent whose prompt changed
    asks something never recorded, and that request is the divergence."""
    require_sandbox()
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    with serving_model(tmp_path) as (port, cert, seen):
        url = f"https://127.0.0.1:{port}/v1"
        config = _config(march_release, tmp_path / "out", port, cert)
        run(from_callable(_openai_agent(url)), config)
        asked = len(seen)
    assert asked > 0
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", "sk-another-key-for-replay-0000")
    recorded = {"trajectory": config.trajectory_path, "bundle": march_release}

    same = reexecute(
        config.receipt_path,
        agent=from_callable(_openai_agent(url)),
        pass_env=("PIT_TEST_MODEL_KEY",),
        **recorded,
    )
    assert same.result == REPRODUCED, same.to_json()
    assert any("not that the model is deterministic" in note for note in same.notes)
    decisions = len(
        [line for line in Path(config.trajectory_path).read_text().splitlines()
         if '"event":"decision"' in line or '"event":"probe_item"' in line]
    )  # fmt: skip
    assert same.steps_compared == decisions  # each with the requests it made, compared too

    changed = reexecute(
        config.receipt_path,
        agent=from_callable(_openai_agent(url, prefix="Think step by step. ")),
        pass_env=("PIT_TEST_MODEL_KEY",),
        **recorded,
    )
    assert changed.result == DIVERGED
    found = changed.divergence
    assert found is not None and (found.cell, found.step) == ("main/leaky", 1)
    [asked_now] = found.reexecuted["model_requests"]
    [asked_then] = found.recorded["model_requests"]
    assert "Think step by step." in asked_now["text"]
    assert "Think step by step." not in asked_then["text"]


def test_a_runs_model_usage_is_measured_per_cell_model_and_decision_and_verified(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model reports its prompt's length in tokens, half of them cached, and 25 of
    its 40 output tokens as reasoning: the receipt sums what the responses said, cell by
    cell and decision by decision, and verify reads it again from the recorded exchanges;
    a token count forged in the receipt (and hashed again) is refused."""
    from harness.receipt.build import receipt_text
    from harness.receipt.rederive import rederive

    require_sandbox()
    monkeypatch.setenv("PIT_TEST_MODEL_KEY", SECRET)
    with serving_https(DetailedUsageHandler, tmp_path / "model") as (port, cert, seen):
        agent = _openai_agent(f"https://127.0.0.1:{port}/v1")
        config = _config(march_release, tmp_path, port, cert, probe=0)
        body = run(from_callable(agent), config).body
    prompts = [len(s["messages"][-1]["content"]) for s in seen]
    cells = body["cells"]
    assert sum(c["usage"]["input_tokens"] for c in cells) == sum(prompts)
    assert sum(c["usage"]["cached_input_tokens"] for c in cells) == sum(p // 2 for p in prompts)
    assert sum(c["usage"]["output_tokens"] for c in cells) == 40 * len(prompts)
    assert sum(c["usage"]["reasoning_tokens"] for c in cells) == 25 * len(prompts)
    for cell in cells:
        usage, decided = cell["usage"], cell["usage"]["decisions"]
        assert list(usage["by_model"]) == ["loopback-1-2026-01-01"]  # the model that answered
        assert usage["by_model"]["loopback-1-2026-01-01"]["input_tokens"] == usage["input_tokens"]
        # one call per decision: every decision made one exchange, and used what it said
        assert decided["decisions"] == decided["with_exchanges"] == cell["sessions"]
        assert decided["input_tokens"] == usage["input_tokens"]
        assert decided["most_tokens"] <= max(prompts) + 40
    receipt_path = Path(config.receipt_path)
    trajectory = Path(config.trajectory_path)
    verified = rederive(receipt_path, trajectory=trajectory, release=march_release)
    assert verified.ok, verified.first_mismatch
    assert {c.name for c in verified.checks} >= {"model usage", "cell main/leaky usage"}

    receipt = json.loads(receipt_path.read_text())
    forged = receipt["body"]
    forged["cells"][0]["usage"]["by_model"]["loopback-1-2026-01-01"]["output_tokens"] -= 40
    forged_path = tmp_path / "forged.json"
    forged_path.write_text(receipt_text(forged, receipt["emitted_at"]))
    refused = rederive(forged_path, trajectory=trajectory, release=march_release)
    mismatch = refused.first_mismatch
    assert mismatch is not None and mismatch.name == "cell main/leaky usage"
    assert "by_model.loopback-1-2026-01-01.output_tokens" in mismatch.detail
