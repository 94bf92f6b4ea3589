"""The model proxy records exactly what passed: a request inside a tunnel reaches the
endpoint only with that endpoint's ``Host`` and in origin form (else it is refused and
counted as an egress attempt), the recorded headers are the forwarded ones, an exchange
open when a cell ends is recorded (whole or as cut), and no passed secret survives in any
recorded text or its decodings.

Each test drives the proxy directly, as a cell's relay does: a Unix socket, ``CONNECT``,
TLS against the run's CA, then raw HTTP/1.1 to a loopback HTTPS endpoint."""

from __future__ import annotations

import base64
import contextlib
import gzip
import http.client
import json
import socket
import ssl
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from harness.isolation.egress import CA_NAME, SOCKET_NAME, ModelProxy
from harness.rundata.endpoints import Endpoint
from tests.support.model_server import self_signed as _self_signed

SECRET = "sk-test-5b1f0c3e9a7d4c21"
REPLY = b'{"object": "chat.completion", "choices": []}'


@dataclass
class Seen:
    """What the endpoint received, and a gate a slow answer waits on."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    gate: threading.Event = field(default_factory=threading.Event)
    slow: bool = False


class _Endpoint(BaseHTTPRequestHandler):
    seen: Seen

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.requests.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": [list(item) for item in self.headers.items()],
                "body": body,
            }
        )
        self.seen.arrived.set()
        if self.seen.slow:
            self.seen.gate.wait()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Echo", base64.b64encode(SECRET.encode()).decode())
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)

    do_GET = do_POST = do_OPTIONS = do_PRI = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[tuple[int, Path, Seen]]:
    """A loopback HTTPS endpoint: (port, its certificate, what it saw)."""
    cert, key = _self_signed(tmp_path)
    seen = Seen()
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("E", (_Endpoint,), {"seen": seen}))
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.server_address[1], cert, seen
    seen.gate.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(endpoint: tuple[int, Path, Seen]) -> Iterator[ModelProxy]:
    port, cert, _ = endpoint
    started = ModelProxy(
        (Endpoint("127.0.0.1", port),), upstream_ca_file=str(cert), secrets=(SECRET,)
    )
    started.start()
    yield started
    started.stop()


def _connect(proxy: ModelProxy, target: str) -> tuple[socket.socket, bytes]:
    """A connection to the proxy that has sent ``CONNECT target`` and read the answer's
    head (byte by byte, so nothing after it is consumed)."""
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.settimeout(60)  # a safety net against a hang, never a measure of time
    raw.connect(str(proxy.folder / SOCKET_NAME))
    raw.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = raw.recv(1)
        if not byte:
            break
        head += byte
    return raw, head


def _tunnel(proxy: ModelProxy, port: int, alpn: list[str] | None = None) -> ssl.SSLSocket:
    raw, head = _connect(proxy, f"127.0.0.1:{port}")
    assert head.startswith(b"HTTP/1.1 200")
    context = ssl.create_default_context(cafile=str(proxy.folder / CA_NAME))
    if alpn:
        context.set_alpn_protocols(alpn)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _ask(tls: ssl.SSLSocket, head: list[str], body: bytes = b"") -> http.client.HTTPResponse:
    """Send a raw request (its head as lines) and read the whole answer."""
    tls.sendall("\r\n".join([*head, "", ""]).encode("latin-1") + body)
    response = http.client.HTTPResponse(tls)
    response.begin()
    response.read()
    return response


def _post(port: int, *extra: str, path: str = "/v1/chat/completions", length: int = 2) -> list[str]:
    return [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {length}",
        *extra,
    ]


# -- the Host and the request target ---------------------------------------------------


@pytest.mark.parametrize(
    ("hosts", "shown"),
    [
        (["evil.example"], "evil.example"),
        (["127.0.0.1"], "127.0.0.1"),  # no port names 443, not the endpoint's
        (["{ok}", "evil.example"], "{ok}, evil.example"),
        ([], "(no Host header)"),
        ([SECRET], "[redacted]"),
    ],
)
def test_a_request_whose_host_is_not_the_endpoint_is_refused_and_counted(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen], hosts: list[str], shown: str
) -> None:
    port, _, seen = endpoint
    ok = f"127.0.0.1:{port}"
    tls = _tunnel(proxy, port)
    head = [line for line in _post(port) if not line.startswith("Host:")]
    head[1:1] = [f"Host: {h.format(ok=ok)}" for h in hosts]
    response = _ask(tls, head, b"{}")
    assert response.status == 421
    assert seen.requests == []  # nothing reached the endpoint
    exchanges, refused = proxy.take()
    assert exchanges == []
    assert [(a.call, a.target) for a in refused] == [("model proxy: Host", shown.format(ok=ok))]
    assert f"tunnel to {ok}" in refused[0].site


@pytest.mark.parametrize(
    "target",
    ["https://other.example/x", "https://127.0.0.1:{port}/v1/chat/completions", "//other/x", "*"],
)
def test_a_request_target_not_in_origin_form_is_refused_and_counted(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen], target: str
) -> None:
    port, _, seen = endpoint
    target = target.format(port=port)
    tls = _tunnel(proxy, port)
    response = _ask(tls, [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{port}"])
    assert response.status == 421
    assert seen.requests == []
    exchanges, refused = proxy.take()
    assert exchanges == []
    assert [(a.call, a.target) for a in refused] == [
        ("model proxy: request target", f"GET {target}")
    ]


def test_the_proxy_speaks_http_1_1_only_and_refuses_an_http_2_preface(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    """No HTTP/2 is negotiated, so no ``:authority`` can stand beside a ``Host``; a client
    that sends HTTP/2's preface regardless is refused and counted."""
    port, _, seen = endpoint
    tls = _tunnel(proxy, port, alpn=["h2", "http/1.1"])
    assert tls.selected_alpn_protocol() == "http/1.1"
    tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    response = http.client.HTTPResponse(tls)
    response.begin()
    assert response.status == 421
    assert seen.requests == []
    _, refused = proxy.take()
    assert [(a.call, a.target) for a in refused] == [("model proxy: request target", "PRI *")]


# -- the recorded request is the forwarded one -----------------------------------------


def test_the_recorded_headers_are_exactly_the_headers_the_endpoint_received(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    port, _, seen = endpoint
    tls = _tunnel(proxy, port)
    head = _post(
        port,
        "X-Dup: one",
        "X-Dup: two",
        "Connection: keep-alive",
        f"Authorization: Bearer {SECRET}",
    )
    assert _ask(tls, head, b"{}").status == 200
    (exchange,), refused = proxy.take()
    assert refused == []
    (received,) = seen.requests
    expected = [
        [k, "[redacted]" if k.lower() == "authorization" else v] for k, v in received["headers"]
    ]
    assert exchange["request_headers"] == expected
    names = [k for k, _ in received["headers"]]
    assert names.count("X-Dup") == 2 and "Connection" not in names
    assert exchange["request_body"] == {"text": received["body"].decode()}
    assert exchange["url"] == f"https://127.0.0.1:{port}{received['path']}"
    assert exchange["cut"] is False and exchange["status"] == 200


# -- replay ----------------------------------------------------------------------------


def test_replay_answers_every_request_a_kept_alive_tunnel_carries(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    """An agent's client keeps its connection for its next call (an agent's tool loop asks
    several times a decision): in replay each request in the one tunnel gets its recorded
    answer, as it did from the endpoint, and none reaches the endpoint."""
    from harness.isolation.egress import Replay

    port, _, seen = endpoint
    bodies = [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    tls = _tunnel(proxy, port)
    for body in bodies:
        assert _ask(tls, _post(port, length=len(body)), body).status == 200
    recorded, _ = proxy.take()
    assert len(seen.requests) == len(recorded) == 3

    replaying = ModelProxy((Endpoint("127.0.0.1", port),), replay=Replay(recorded))
    replaying.start()
    try:
        tls = _tunnel(replaying, port)
        answers = [_ask(tls, _post(port, length=len(body)), body) for body in bodies]
        replayed, refused = replaying.take()
    finally:
        replaying.stop()
    assert [a.status for a in answers] == [200, 200, 200]
    assert [e["request_body"] for e in replayed] == [e["request_body"] for e in recorded]
    assert [e["response_body"] for e in replayed] == [{"text": REPLY.decode()}] * 3
    assert refused == [] and replaying.replay is not None and replaying.replay.unmatched == []
    assert len(seen.requests) == 3  # the endpoint was asked nothing more


# -- an exchange open when the cell ends -------------------------------------------------


def test_an_exchange_open_when_the_cell_ends_is_waited_for_and_recorded_whole(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, _, seen = endpoint
    seen.slow = True
    tls = _tunnel(proxy, port)
    tls.sendall("\r\n".join([*_post(port), "", ""]).encode() + b"{}")
    assert seen.arrived.wait(60)  # forwarded, and its answer held back
    settled = proxy._settled
    original = settled.wait_for

    def release_then_wait(predicate: Any, timeout: float | None = None) -> Any:
        seen.gate.set()  # the endpoint answers only once take() is waiting
        return original(predicate, timeout)

    monkeypatch.setattr(settled, "wait_for", release_then_wait)
    (exchange,), _ = proxy.take()
    assert exchange["cut"] is False and exchange["status"] == 200
    assert exchange["response_body"] == {"text": REPLY.decode()}
    response = http.client.HTTPResponse(tls)
    response.begin()
    assert response.status == 200 and response.read() == REPLY
    assert proxy.take() == ([], [])


def test_an_exchange_still_open_after_the_wait_is_cut_and_recorded_as_cut(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    port, _, seen = endpoint
    seen.slow = True
    tls = _tunnel(proxy, port)
    tls.sendall("\r\n".join([*_post(port), "", ""]).encode() + b"{}")
    assert seen.arrived.wait(60)
    proxy.settle_seconds = 0  # the cell's wait for open exchanges is over at once
    (exchange,), _ = proxy.take()
    assert exchange["cut"] is True and exchange["status"] is None
    assert exchange["response_body"] is None and "cell ended" in exchange["error"]
    assert exchange["request_body"] == {"text": "{}"}
    assert exchange["url"] == f"https://127.0.0.1:{port}/v1/chat/completions"
    response = http.client.HTTPResponse(tls)
    response.begin()
    assert response.status == 502  # the agent gets no answer from the endpoint
    seen.gate.set()
    assert proxy.take() == ([], [])  # recorded once, as cut


def test_an_exchange_the_endpoint_breaks_off_is_recorded_with_its_error(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen], tmp_path: Path
) -> None:
    """The request reached the endpoint, which closed without an answer: still recorded."""
    _, _, seen = endpoint

    def hang_up(self: _Endpoint) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        seen.arrived.set()
        self.close_connection = True

    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), type("H", (_Endpoint,), {"seen": seen, "do_POST": hang_up})
    )
    (tmp_path / "other").mkdir()
    cert, key = _self_signed(tmp_path / "other")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    other = server.server_address[1]
    breaking = ModelProxy((Endpoint("127.0.0.1", other),), upstream_ca_file=str(cert))
    breaking.start()
    try:
        tls = _tunnel(breaking, other)
        assert _ask(tls, _post(other), b"{}").status == 502
        (exchange,), _ = breaking.take()
    finally:
        breaking.stop()
        server.shutdown()
        server.server_close()
    assert seen.arrived.is_set()
    assert exchange["cut"] is False and exchange["status"] is None and exchange["error"]


# -- passed secrets, in every recorded text and its decodings ---------------------------


def _every_string(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _every_string(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _every_string(item)


def _readings(text: str) -> list[str]:
    """The text, URL-decoded, JSON-unescaped, and each of its base64 bodies decoded and,
    where compressed, inflated."""
    found = [text, unquote(text)]
    if "\\u" in text:
        found.append(text.encode("latin-1", "replace").decode("unicode_escape", "replace"))
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return found
    found.append(raw.decode("latin-1"))
    for wbits in (47, -15):
        with contextlib.suppress(zlib.error):
            found.append(zlib.decompressobj(wbits).decompress(raw).decode("latin-1"))
    return found


ENCODED = [
    SECRET,
    base64.b64encode(SECRET.encode()).decode(),
    base64.b64encode(f"user:{SECRET}".encode()).decode(),
    quote(SECRET, safe=""),
    "".join(f"%{b:02X}" for b in SECRET.encode()),
]


def _exposed(record: Any) -> list[str]:
    """Every recorded string that shows the secret, plainly, encoded or decoded."""
    return [
        text
        for text in _every_string(record)
        if any(form in reading for reading in _readings(text) for form in ENCODED)
    ]


def test_a_passed_secret_is_redacted_from_names_values_bodies_and_their_encodings(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    port, _, seen = endpoint
    everywhere = "".join(f"%{b:02x}" for b in SECRET.encode())
    binary = b"\xff\x00" + SECRET.encode() + b"\x00" + base64.b64encode(SECRET.encode())
    escaped = json.dumps({"k": "".join(f"\\u{ord(c):04x}" for c in SECRET)}).encode()
    packed = gzip.compress(json.dumps({"api_key": SECRET}).encode())
    headers = (
        f"X-{SECRET}: 1",
        f"X-Basic: {base64.b64encode(f'user:{SECRET}'.encode()).decode()}",
        f"X-Quoted: {quote(SECRET, safe='')}",
    )
    tls = _tunnel(proxy, port)
    path = f"/v1/chat/completions?k={everywhere}"
    for body, extra in ((binary, ()), (escaped, ()), (packed, ("Content-Encoding: gzip",))):
        head = _post(port, *headers, *extra, path=path, length=len(body))
        assert _ask(tls, head, body).status == 200
    exchanges, _ = proxy.take()
    assert len(exchanges) == 3
    # the endpoint got everything as sent: only the record is redacted
    assert all(any(k == f"X-{SECRET}" for k, _ in r["headers"]) for r in seen.requests)
    assert [r["body"] for r in seen.requests] == [binary, escaped, packed]
    assert [r["path"] for r in seen.requests] == [path] * 3
    assert _exposed(exchanges) == []
    assert all(SECRET not in json.dumps(e) for e in exchanges)
    first = exchanges[0]
    assert "base64" in first["request_body"]
    assert b"[redacted]" in base64.b64decode(first["request_body"]["base64"])
    assert ["X-[redacted]", "1"] in first["request_headers"]
    assert first["url"].startswith(f"https://127.0.0.1:{port}/v1/chat/completions?")
    # the response's echo of the key (in base64) is redacted too
    echo = [v for k, v in first["response_headers"] if k == "X-Echo"]
    assert echo == ["[redacted]"]


def test_a_refused_target_that_holds_a_passed_secret_is_recorded_redacted(
    proxy: ModelProxy,
) -> None:
    raw, head = _connect(proxy, f"{SECRET}.example:443")
    assert head.startswith(b"HTTP/1.1 403")
    raw.close()
    _, (attempt,) = proxy.take()
    assert attempt.call == "model proxy: CONNECT"
    assert SECRET not in attempt.target and "[redacted]" in attempt.target


def test_a_text_without_secrets_is_recorded_unchanged(
    proxy: ModelProxy, endpoint: tuple[int, Path, Seen]
) -> None:
    """Redaction takes nothing else: ordinary prompts, base64 and URL-encoding stay."""
    port, _, _ = endpoint
    body = json.dumps(
        {
            "messages": [{"role": "user", "content": "Item 2.02 Results of Operations, 8-K"}],
            "image": base64.b64encode(bytes(range(256)) * 4).decode(),
            "q": quote("a b/c?d=e&f"),
        }
    ).encode()
    tls = _tunnel(proxy, port)
    assert _ask(tls, _post(port, length=len(body)), body).status == 200
    (exchange,), _ = proxy.take()
    assert exchange["request_body"] == {"text": body.decode()}


def test_a_passed_secret_is_out_of_decision_text_tool_arguments_and_probe_answers(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the agent writes is recorded, the credential it was passed is not: verbatim,
    in base64 or percent-encoded, in its decision text, a tool argument or a probe answer."""
    from harness import RunConfig, run
    from harness.agents.adapters.plain import from_callable
    from tests.support.sandbox import require_sandbox

    require_sandbox()
    monkeypatch.setenv("PIT_TEST_KEY", SECRET)
    encoded = base64.b64encode(SECRET.encode()).decode()

    def leaks(prompt: str, tools: Any) -> dict[str, Any]:
        import os

        key = os.environ["PIT_TEST_KEY"]
        tools.pit_search(query=f"key={quote(key)}", limit=1)
        tools.pit_list(limit=3)  # rows served: the probe has items to ask about
        return {"picks": [], "text": f"my key is {key}, or {encoded}"}

    out = tmp_path / "run"
    run(
        from_callable(leaks),
        RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-02",
            agent_process="isolated",
            model_endpoints=("https://api.example.test",),  # declared, never reached
            pass_env=("PIT_TEST_KEY",),
            probe=2,
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
        ),
    )
    recorded = (out / "trajectory.jsonl").read_text() + (out / "receipt.json").read_text()
    for form in (SECRET, encoded, quote(SECRET), SECRET.replace("-", "%2D")):
        assert form not in recorded
    events = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    texts = [e["text"] for e in events if e.get("event") == "decision"]
    assert texts and all("my key is [redacted]" in t for t in texts)
    answers = [e["answer"] for e in events if e.get("event") == "probe_item"]
    assert answers and all("my key is [redacted]" in a for a in answers)
