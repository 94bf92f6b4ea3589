"""The model agent that ships (examples/agents/model_agent.py), run as a user runs it:
``pit-harness run --config`` on its own run config, sandboxed, against a model on loopback
that speaks the chat-completions API with tool calls (tests/support/tool_model.py), so the
real ``openai`` client, the tool-loop adapter and the run's recording proxy all run. Then
``pit-harness verify``, and ``verify --reexecute``, which replays the recorded answers with
the model gone.

The agent's settings (``agent_env``): handed to it, recorded in the receipt, and refused
where they would record a key or replace what the sandbox sets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness import RunConfig
from harness.receipt.schemas import receipt_body_schema
from harness.rundata.config import ConfigError
from tests.support.sandbox import require_sandbox
from tests.support.tool_model import serving_tool_model

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "agents"
EXAMPLE_CONFIG = EXAMPLES / "model_agent.json"
KEY = "sk-loopback-7c2e9d4b1a5f3e60"
MODEL = "loopback-tools"
TOOLS = {"pit_list", "pit_search", "pit_read", "pit_coverage"}


def _pit_harness(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``pit-harness`` as a user's shell runs it, with the example on the Python path."""
    settings = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PIT_MODEL")  # only what ``env`` sets
    base = {k: v for k, v in os.environ.items() if k not in settings}
    command = [str(Path(sys.executable).parent / "pit-harness"), *args]
    return subprocess.run(
        command,
        env={**base, "PYTHONPATH": str(EXAMPLES), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def _user_config(folder: Path, release: Path, port: int, cert: Path, **changes: Any) -> Path:
    """The example's run config as a user points it at a model: its release, its endpoint
    declared (with the endpoint's own CA, as for a self-hosted model), every other key as
    shipped."""
    config = json.loads(EXAMPLE_CONFIG.read_text())
    config.update(
        bundle_path=str(release),
        model_endpoints=[f"https://127.0.0.1:{port}"],
        model_ca_file=str(cert),
        **changes,
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model_agent.json"
    path.write_text(json.dumps(config))
    return path


def _events(path: Path, kind: str) -> list[dict[str, Any]]:
    return [
        event
        for line in path.read_text().splitlines()
        for event in (json.loads(line),)
        if event["event"] == kind
    ]


@dataclass
class _Ran:
    out: Path
    release: Path
    port: int
    done: subprocess.CompletedProcess[str]
    seen: list[dict[str, Any]]

    @property
    def trajectory(self) -> Path:
        return self.out / "model-out" / "trajectory.jsonl"

    @property
    def receipt(self) -> Path:
        return self.out / "model-out" / "receipt.json"

    @property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.receipt.read_text())["body"]
        return body


@pytest.fixture(scope="module")
def ran(march_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Ran]:
    """One run of the example, its model stopped once the run is done."""
    require_sandbox()
    out = tmp_path_factory.mktemp("model-agent")
    with serving_tool_model(out / "model") as (port, cert, seen):
        config = _user_config(out, march_release, port, cert)
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": f"https://127.0.0.1:{port}/v1",
            "PIT_MODEL": MODEL,
        }
        done = _pit_harness("run", "--config", str(config), env=env)
    yield _Ran(out, march_release, port, done, seen)


def test_the_model_agent_runs_every_cell_and_its_run_is_valid(ran: _Ran) -> None:
    assert ran.done.returncode == 0, ran.done.stderr[-3000:]
    body = ran.body
    assert body["valid"] is True, body["invalidated_by"]
    assert body["capabilities"]["agent_process"] == "isolated"
    assert len(body["cells"]) == 9
    assert all(c["status"] == "complete" and c["agent_errors"] == 0 for c in body["cells"])
    schema = receipt_body_schema()
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(body))


def test_the_model_reads_the_filings_by_tool_calls(ran: _Ran) -> None:
    """Every tool call the model answered with was run by the harness, in its record, and
    nothing else was: the tool calls are the model's."""
    asked = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for exchange in _events(ran.trajectory, "model_exchange")
        for message in [json.loads(exchange["response_body"]["text"])["choices"][0]["message"]]
        for call in message.get("tool_calls") or []
    ]
    run = [(c["tool"], c["args"]) for c in _events(ran.trajectory, "tool_call")]
    assert asked, "the model asked for no tool"
    assert {name for name, _ in asked} == {"pit_coverage", "pit_list", "pit_read"}
    assert len(run) == len(asked)
    assert [name for name, _ in run] == [name for name, _ in asked]


def test_the_model_agent_picks_the_rows_its_model_named(ran: _Ran) -> None:
    decisions = _events(ran.trajectory, "decision")
    picked = [d for d in decisions if d["picks"]]
    assert picked, "no decision picked a row"
    for decision in picked:
        named = json.loads(decision["text"])["picks"]
        assert decision["picks"] == named  # the model's final answer, taken as it said
    assert sum(c["trades"] for c in ran.body["cells"]) > 0


def test_every_model_call_asks_for_temperature_zero_a_seed_and_the_four_tools(
    ran: _Ran,
) -> None:
    assert ran.seen
    for request in ran.seen:
        assert request["path"] == "/v1/chat/completions"
        assert request["auth"] == f"Bearer {KEY}"  # the key passed reached the model
        assert request["model"] == MODEL
        assert request["temperature"] == 0 and request["seed"] == 7
        assert {t["function"]["name"] for t in request["tools"]} == TOOLS


def test_every_model_exchange_is_recorded_and_the_key_is_written_nowhere(ran: _Ran) -> None:
    exchanges = _events(ran.trajectory, "model_exchange")
    assert len(exchanges) == len(ran.seen)
    assert all(e["status"] == 200 and e["cut"] is False for e in exchanges)
    assert all(e["url"] == f"https://127.0.0.1:{ran.port}/v1/chat/completions" for e in exchanges)
    egress = ran.body["network"]["model_egress"]
    assert egress["line"] == f"model_egress=127.0.0.1:{ran.port}(recorded)"
    assert egress["exchanges"] == {f"127.0.0.1:{ran.port}": len(exchanges)}
    assert f"model_egress=127.0.0.1:{ran.port}(recorded)" in ran.done.stdout
    for path in (ran.trajectory, ran.receipt):
        assert KEY not in path.read_text()


def test_the_receipt_records_the_agents_settings_and_declares_p1_and_p2(ran: _Ran) -> None:
    shipped = json.loads(EXAMPLE_CONFIG.read_text())
    body = ran.body
    assert body["config"]["agent_env"] == {
        "OPENAI_BASE_URL": f"https://127.0.0.1:{ran.port}/v1",
        "PIT_MODEL": MODEL,
    }
    assert body["config"]["agent"] == "model_agent:agent"
    assert body["config"]["agent_source_sha256"].startswith("sha256:")
    protocol = body["protocol"]
    assert protocol["P1_model_version"]["declared"] == shipped["model_version"]
    assert protocol["P2_training_cutoffs"]["status"] == "declared"
    assert "P1_model_version" not in body["protocol_gaps"]
    assert "P2_training_cutoffs" not in body["protocol_gaps"]


def test_the_model_answers_the_mask_probe(ran: _Ran) -> None:
    probe = ran.body["probe"]
    assert probe["status"] == "complete"
    items = _events(ran.trajectory, "probe_item")
    assert items and len(items) == probe["total"]
    assert all("I cannot tell the real filing date" in item["answer"] for item in items)
    asked = [r for r in ran.seen if r["messages"][1]["content"].startswith("Mask probe.")]
    assert len(asked) == len(items)


def test_the_model_agents_run_verifies(ran: _Ran) -> None:
    done = _pit_harness(
        "verify", str(ran.receipt), "--trajectory", str(ran.trajectory),
        "--bundle", str(ran.release), env={},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scores re-derived ok" in done.stdout


def test_the_model_agents_run_is_re_executed_by_replay_with_the_model_gone(ran: _Ran) -> None:
    """The model stopped with the fixture's run; another key is passed, and neither the
    base URL nor the model is set in this shell: the receipt's settings are handed to the
    agent, and every request gets its recorded answer."""
    before = len(ran.seen)
    done = _pit_harness(
        "verify", str(ran.receipt), "--trajectory", str(ran.trajectory),
        "--bundle", str(ran.release), "--reexecute", "--agent", "model_agent:agent",
        "--pass-env", "OPENAI_API_KEY",
        env={"OPENAI_API_KEY": "sk-another-key-for-replay-0000"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    decisions = len(_events(ran.trajectory, "decision")) + len(
        _events(ran.trajectory, "probe_item")
    )
    assert f"reexecution ok  {decisions} decisions the same  agent model_agent:agent" in (
        done.stdout
    )
    assert "not that the model is deterministic" in done.stdout
    assert len(ran.seen) == before  # nothing reached a model


def test_the_model_agent_pointed_at_an_undeclared_endpoint_is_refused_and_the_run_says_so(
    march_release: Path, tmp_path: Path
) -> None:
    """OPENAI_BASE_URL names a live model the run did not declare: the proxy refuses the
    tunnel, the model is never reached, and the run is invalid, naming the endpoint."""
    require_sandbox()
    with (
        serving_tool_model(tmp_path / "declared") as (port, cert, declared_seen),
        serving_tool_model(tmp_path / "other") as (other, _, other_seen),
    ):
        config = _user_config(
            tmp_path, march_release, port, cert, arms=["main"], clocks=["pit"], probe=0
        )
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": f"https://127.0.0.1:{other}/v1",
            "PIT_MODEL": MODEL,
        }
        done = _pit_harness("run", "--config", str(config), env=env)
    assert other_seen == [] and declared_seen == []
    body = json.loads((tmp_path / "model-out" / "receipt.json").read_text())["body"]
    assert body["valid"] is False
    attempts = body["network"]["attempts"]
    assert attempts and all(a["target"] == f"127.0.0.1:{other}" for a in attempts)
    assert all(a["call"] == "model proxy: CONNECT" for a in attempts)
    assert any(f"127.0.0.1:{other}" in reason for reason in body["invalidated_by"])
    [line] = [x for x in done.stdout.splitlines() if "invalidated_by:" in x]
    assert f"127.0.0.1:{other}" in line
    # the agent could not decide: each session's decision is its error, not a pick
    [cell] = body["cells"]
    assert cell["agent_errors"] == cell["sessions"] > 0 and cell["trades"] == 0


# -- agent_env: the agent's recorded settings ------------------------------------------


def _endpoint_config(**extra: Any) -> RunConfig:
    return RunConfig(bundle_path="x", model_endpoints=("https://api.example.test",), **extra)


def test_agent_env_names_take_their_values_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PIT_MODEL", "m-1")
    config = _endpoint_config(agent_env=("PIT_MODEL",))
    assert config.agent_env == (("PIT_MODEL", "m-1"),)
    monkeypatch.setenv("PIT_MODEL", "m-2")  # read once, when the config is made
    assert config.agent_env == (("PIT_MODEL", "m-1"),)


def test_agent_env_read_from_run_json_as_names_or_as_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIT_MODEL", "from-the-shell")
    path = tmp_path / "run.json"
    base = {"bundle_path": "release", "model_endpoints": ["https://api.example.test"]}
    path.write_text(json.dumps({**base, "agent_env": ["PIT_MODEL"]}))
    assert RunConfig.from_file(path).agent_env == (("PIT_MODEL", "from-the-shell"),)
    path.write_text(json.dumps({**base, "agent_env": {"PIT_MODEL": "given"}}))
    assert RunConfig.from_file(path).agent_env == (("PIT_MODEL", "given"),)


def test_an_agent_env_name_that_is_not_set_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIT_MODEL", raising=False)
    with pytest.raises(ConfigError, match="agent_env: PIT_MODEL not set in the environment"):
        _endpoint_config(agent_env=("PIT_MODEL",))


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "HF_TOKEN", "MY_SECRET", "DB_PASSWORD"])
def test_agent_env_refuses_a_credential_which_it_would_record(name: str) -> None:
    with pytest.raises(ConfigError, match=f"agent_env: {name} would be recorded"):
        _endpoint_config(agent_env={name: "sk-123"})


def test_agent_env_refuses_a_name_also_passed_as_a_secret() -> None:
    with pytest.raises(ConfigError, match="agent_env: PIT_MODEL would be recorded"):
        _endpoint_config(agent_env={"PIT_MODEL": "m"}, pass_env=("PIT_MODEL",))


@pytest.mark.parametrize("name", ["HTTPS_PROXY", "SSL_CERT_FILE", "PATH", "NO_PROXY"])
def test_agent_env_may_not_replace_what_the_sandbox_sets(name: str) -> None:
    with pytest.raises(ConfigError, match=f"agent_env: {name} is set by the sandbox itself"):
        _endpoint_config(agent_env={name: "/elsewhere"})


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        ({"1BAD": "x"}, "is not an environment variable name"),
        ({"PIT_MODEL": "x" * 2001}, "at most 2000 characters"),
        ({f"V{n}": "x" for n in range(33)}, "at most 32 settings"),
        ([["PIT_MODEL", "a"], ["PIT_MODEL", "b"]], "PIT_MODEL is given twice"),
        ([3], "a variable's name or (name, value)"),
        ({"PIT_MODEL": 3}, "names and values must be strings"),
    ],
)
def test_agent_env_refuses_bad_settings_with_the_key_named(given: Any, fragment: str) -> None:
    with pytest.raises(ConfigError, match="agent_env: ") as caught:
        _endpoint_config(agent_env=given)
    assert fragment in str(caught.value)


def test_agent_env_needs_model_endpoints() -> None:
    with pytest.raises(ConfigError, match="agent_env: only a run with model_endpoints"):
        RunConfig(bundle_path="x", agent_env={"PIT_MODEL": "m"})


def test_a_config_without_agent_env_binds_no_agent_env() -> None:
    """Runs that hand over no settings keep the config body (and so the run id) they had."""
    body = _endpoint_config().scoring_body(
        start="2023-03-01", end="2023-03-03", forms=("8-K",), agent_process="isolated",
        agent="stub", agent_source_sha256=None, prices=None,
    )  # fmt: skip
    assert "agent_env" not in body
    given = _endpoint_config(agent_env={"B": "2", "A": "1"}).scoring_body(
        start="2023-03-01", end="2023-03-03", forms=("8-K",), agent_process="isolated",
        agent="stub", agent_source_sha256=None, prices=None,
    )  # fmt: skip
    assert list(given["agent_env"].items()) == [("A", "1"), ("B", "2")]


def test_a_setting_that_holds_a_passed_key_is_refused_before_the_run_starts(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base URL with the key inside it would write the key into the receipt."""
    require_sandbox()
    from harness import run

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://api.example.test/v1?key={KEY}")
    config = RunConfig(
        bundle_path=str(march_release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-01",
        agent_process="isolated",
        model_endpoints=("https://api.example.test",),
        pass_env=("OPENAI_API_KEY",),
        agent_env=("OPENAI_BASE_URL",),
        trajectory_path=str(tmp_path / "trajectory.jsonl"),
        receipt_path=str(tmp_path / "receipt.json"),
    )
    with pytest.raises(ConfigError, match="agent_env: OPENAI_BASE_URL holds a pass_env"):
        run(lambda prompt, tools: [], config)
    assert not (tmp_path / "receipt.json").exists()
    assert not (tmp_path / "trajectory.jsonl").exists()
