"""A model provider on loopback: a chat-completions server over HTTPS with its own
self-signed certificate, and the run config that declares it as the run's one endpoint."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness import RunConfig

SECRET = "sk-test-5b1f0c3e9a7d4c21"


class ModelHandler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        prompt = body["messages"][-1]["content"]
        reply = self.reply(body, prompt)
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        return {
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

    def log_message(self, format: str, *args: Any) -> None:
        pass


class DetailedUsageHandler(ModelHandler):
    """A model whose usage says more, as OpenAI's does: the prompt's length in tokens (one
    per character), half of it from a cache, and a reasoning share of the answer."""

    def reply(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        reply = super().reply(body, prompt)
        reply["model"] = "loopback-1-2026-01-01"  # the dated model that answered
        reply["usage"] = {
            "prompt_tokens": len(prompt),
            "completion_tokens": 40,
            "total_tokens": len(prompt) + 40,
            "prompt_tokens_details": {"cached_tokens": len(prompt) // 2},
            "completion_tokens_details": {"reasoning_tokens": 25},
        }
        return reply


def self_signed(folder: Path) -> tuple[Path, Path]:
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


@contextmanager
def serving_model(folder: Path) -> Iterator[tuple[int, Path, list[dict[str, Any]]]]:
    """A loopback chat-completions server over HTTPS: (port, its certificate, requests)."""
    with serving_https(ModelHandler, folder) as served:
        yield served


@contextmanager
def serving_https(
    handler_class: type[BaseHTTPRequestHandler], folder: Path
) -> Iterator[tuple[int, Path, list[dict[str, Any]]]]:
    """``handler_class`` served over HTTPS on a loopback port with a certificate of its
    own: (port, the certificate, the requests it recorded in its ``seen`` list)."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = self_signed(folder)
    seen: list[dict[str, Any]] = []
    handler = type(handler_class.__name__, (handler_class,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], cert, seen
    finally:
        server.shutdown()
        server.server_close()


def egress_config(release: Path, out: Path, port: int, cert: Path, **extra: Any) -> RunConfig:
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
