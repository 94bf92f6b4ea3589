"""An isolated agent that calls a model: the one way out is the run's recording proxy, to
declared endpoints only. The model is a loopback HTTPS server speaking the
chat-completions API with its own self-signed certificate; the agent uses the real
``openai`` client."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.receipt.schemas import receipt_body_schema
from harness.receipt.verify import verify
from harness.runs.config import ConfigError
from tests.conftest import require_sandbox
from tests.harness.loopback_agents import openai_agent as _openai_agent

SECRET = "sk-test-5b1f0c3e9a7d4c21"


class _Model(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        prompt = body["messages"][-1]["content"]
        reply = {
            "id": f"chatcmpl-{len(self.seen)}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"read {len(prompt)} chars"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "loopback model")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "model-cert.pem", folder / "model-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def model(tmp_path: Path) -> Iterator[tuple[int, Path, list[dict[str, Any]]]]:
    """A loopback chat-completions server over HTTPS: (port, its certificate, requests)."""
    cert, key = _self_signed(tmp_path)
    seen: list[dict[str, Any]] = []
    handler = type("Model", (_Model,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], cert, seen
    server.shutdown()
    server.server_close()


def _config(release: Path, out: Path, port: int, cert: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": ("8-K",),
        "start": "2023-03-01",
        "end": "2023-03-02",
        "probe": 2,
        "agent_process": "isolated",
        "model_endpoints": (f"https://127.0.0.1:{port}",),
        "model_ca_file": str(cert),
        "pass_env": ("PIT_TEST_MODEL_KEY",),
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    values.update(extra)
    return RunConfig(**values)


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
    assert result.body["network"]["model_egress"]["exchanges"] == {f"127.0.0.1:{port}": 1}
    events = [json.loads(line) for line in (tmp_path / "trajectory.jsonl").read_text().splitlines()]
    [exchange] = [e for e in events if e["event"] == "model_exchange"]
    assert "before I go" in exchange["request_body"]["text"]
    rederived = rederive(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", release=march_release
    )
    assert rederived.ok, rederived.first_mismatch
