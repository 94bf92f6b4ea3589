"""Model egress: the one way out of an isolated run, to declared model endpoints only.

An isolated agent has no network. A run that declares ``model_endpoints`` (such as
``https://api.openai.com``) gets a proxy, run here in the harness's process and reached
from the sandbox through a Unix socket, which a relay inside each cell offers on loopback
as ``HTTPS_PROXY``. The proxy

- accepts ``CONNECT`` to a declared host and port only; any other is refused, and the
  refusal is an egress attempt that invalidates the run;
- terminates the agent's TLS with a certificate authority made for this run, which only
  the sandbox trusts (``SSL_CERT_FILE``), and opens its own verified TLS connection to the
  endpoint;
- passes a request inside the tunnel only in origin form (``/path``) and with one
  ``Host`` naming the tunnel's endpoint; an absolute-form target or another host is
  refused (421) and counted as an egress attempt like a refused ``CONNECT``. It speaks
  HTTP/1.1 only (ALPN offers nothing else), so HTTP/2's ``:authority`` does not arise;
- records every exchange whole: method, URL, the headers exactly as forwarded (credentials
  redacted), request and response bodies with their sha256, status and timing. The runner
  writes each one into the trajectory, so the model's answers can be replayed and checked
  later. An exchange still open when a cell ends is waited for and recorded, or cut and
  recorded as cut: none is forwarded and left unrecorded.

Credentials reach the agent's process only through ``pass_env`` and are written nowhere:
the headers that carry them are redacted, and a passed value is redacted from every
recorded text (header names and values, URLs, bodies, refused targets), also where it
appears percent-encoded, JSON-escaped, in base64 or compressed (see ``Redactor``).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import http.client
import ipaddress
import os
import re
import shutil
import socket
import socketserver
import ssl
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, unquote_plus

from harness.isolation.guard import EgressAttempt
from harness.rundata.endpoints import Endpoint

# Where the proxy's folder (its socket and the run's CA certificate) appears in the sandbox,
# and the loopback port a cell's relay listens on.
INSIDE = "/pit-model"
SOCKET_NAME = "proxy.sock"
CA_NAME = "ca.pem"
RELAY_PORT = 3128
MAX_BODY = 64 * 1024 * 1024
_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "transfer-encoding", "upgrade", "content-length",
    }
)  # fmt: skip
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::([0-9]{1,5}))?")
REDACTED = "[redacted]"
# How many layers of encoding the redaction looks through, and what it reads as a token
# and as a JSON escape.
_DEPTH = 3
_TOKEN = re.compile(r"[^\s\"'<>(){}\[\],;?&#]+")
_URLSAFE = str.maketrans("-_", "+/")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\(.)")
# base64 broken into lines (by real line breaks, or by JSON's escaped ones)
_WRAPPED = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{16,}+(?:(?:\r?\n|(?:\\r)?\\n)[A-Za-z0-9+/=_-]++)++"
)
_LINE_BREAK = re.compile(r"\r?\n|(?:\\r)?\\n")


def relay_environment() -> dict[str, str]:
    """What a cell's process is told about the way out (no secrets)."""
    proxy = f"http://127.0.0.1:{RELAY_PORT}"
    ca = f"{INSIDE}/{CA_NAME}"
    return {
        "HTTPS_PROXY": proxy,
        "https_proxy": proxy,
        "HTTP_PROXY": proxy,
        "http_proxy": proxy,
        "NO_PROXY": "",
        "no_proxy": "",
        "SSL_CERT_FILE": ca,
        "REQUESTS_CA_BUNDLE": ca,
        "CURL_CA_BUNDLE": ca,
    }


# -- the run's certificate authority ---------------------------------------------------


class RunAuthority:
    """A certificate authority that lives for one run and signs a leaf per host."""

    def __init__(self) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self._x509, self._hashes, self._ec = x509, hashes, ec
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pit-harness run CA")])
        now = dt.datetime.now(dt.UTC)
        self._name = name
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, key_cert_sign=True, crl_sign=True,
                    content_commitment=False, key_encipherment=False, data_encipherment=False,
                    key_agreement=False, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )  # fmt: skip
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()
        self._folder = tempfile.mkdtemp(prefix="pit-model-leaf-")

    def pem(self) -> bytes:
        from cryptography.hazmat.primitives.serialization import Encoding

        return self.certificate.public_bytes(Encoding.PEM)

    def server_context(self, host: str) -> ssl.SSLContext:
        """A TLS server context presenting a leaf for ``host`` signed by this run's CA."""
        with self._lock:
            if host not in self._contexts:
                self._contexts[host] = self._leaf_context(host)
            return self._contexts[host]

    def _leaf_context(self, host: str) -> ssl.SSLContext:
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        x509 = self._x509
        key = self._ec.generate_private_key(self._ec.SECP256R1())
        try:
            alt: Any = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            alt = x509.DNSName(host)
        now = dt.datetime.now(dt.UTC)
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, host)]))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self._key, self._hashes.SHA256())
        )
        # ssl loads a chain from files only: write them to a private folder, load, delete
        path = Path(self._folder) / f"{hashlib.sha256(host.encode()).hexdigest()[:16]}.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(
                key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
                + leaf.public_bytes(Encoding.PEM)
                + self.pem()
            )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(path)
        context.set_alpn_protocols(["http/1.1"])  # HTTP/1.1 is all the proxy speaks
        path.unlink()
        return context

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


# -- what is recorded of a passed secret: nothing -------------------------------------


class Redactor:
    """Passed secrets out of every text the proxy records.

    Guaranteed for every text ``text`` returns: no passed secret appears in it, nor in any
    decoding of it up to ``_DEPTH`` layers deep, where a layer is percent-decoding (with
    ``+`` as a space or not), JSON string escapes, or base64 (standard or URL-safe
    alphabet, at any alignment, with or without its padding or line breaks) of a run of
    base64 characters. A secret found verbatim is replaced by the marker; a token (a run of
    characters between spaces, quotes, brackets, commas, semicolons and a URL's ``?&#``)
    that reveals one only when decoded becomes the marker whole; a text that still reveals
    one after that becomes the marker whole. A body that is not text is checked the same way byte for byte
    and, when it is compressed (gzip, zlib, deflate), also as inflated: a body that reveals
    a secret when inflated is recorded as the marker alone.
    """

    def __init__(self, secrets: tuple[str, ...]) -> None:
        forms = {form for value in secrets if value for form in _forms(value)}
        self._forms = tuple(sorted(forms, key=len, reverse=True))
        # every decoding here is no longer than what it decodes, so a shorter text cannot
        # reveal a secret, nor a shorter run of base64 hold one
        self._shortest = min((len(f) for f in self._forms), default=0)
        self._run = re.compile(rf"[A-Za-z0-9+/_-]{{{max(8, -(-4 * self._shortest // 3))},}}")
        self._printable = re.compile(rf"[\x20-\x7e\t\r\n]{{{max(1, self._shortest)},}}")

    def text(self, text: str) -> str:
        if not self._forms:
            return text
        for form in self._forms:
            text = text.replace(form, REDACTED)
        text = _TOKEN.sub(self._token, text)
        return REDACTED if self._reveals(text) else text

    def _token(self, match: re.Match[str]) -> str:
        token = match.group()
        return REDACTED if len(token) >= self._shortest and self._reveals(token) else token

    def headers(self, items: Any) -> list[list[str]]:
        """Each header as [name, value]: a credential's value is the marker whatever it
        holds, and a secret is redacted from every other value and from every name."""
        kept = []
        for key, value in items:
            low = key.lower()
            secret = low in _SECRET_HEADERS or any(w in low for w in ("key", "token", "secret"))
            kept.append([self.text(key), REDACTED if secret else self.text(value)])
        return kept

    def body(self, data: bytes) -> dict[str, str]:
        """``{"text": ...}`` for UTF-8, else ``{"base64": ...}`` of the redacted bytes; the
        marker alone as text when a secret is found only by inflating the body."""
        if self._forms and self._inflates_to_secret(data):
            return {"text": REDACTED}
        try:
            return {"text": self.text(data.decode("utf-8"))}
        except UnicodeDecodeError:
            pass
        clean = self.text(data.decode("latin-1"))
        if clean == REDACTED:
            return {"text": REDACTED}
        return {"base64": base64.b64encode(clean.encode("latin-1")).decode("ascii")}

    def _reveals(self, text: str, depth: int = _DEPTH) -> bool:
        """Whether ``text`` or a decoding of it ``depth`` layers deep holds a secret. Every
        layer but the innermost is printable ASCII, so only such runs are decoded further."""
        if self._holds(text):
            return True
        if depth == 0:
            return False
        for decoded in self._decodings(text):
            if self._holds(decoded) or any(
                self._reveals(piece, depth - 1) for piece in self._printable.findall(decoded)
            ):
                return True
        return False

    def _holds(self, text: str) -> bool:
        return any(form in text for form in self._forms)

    def _decodings(self, text: str) -> list[str]:
        """One layer of decoding of ``text``: each way it reads differently when decoded."""
        found = []
        if "%" in text:
            found += [unquote(text, errors="replace"), unquote_plus(text, errors="replace")]
        elif "+" in text:
            found.append(text.replace("+", " "))
        if "\\" in text:
            found.append(_JSON_ESCAPE.sub(_unescape, text))
        found.append(self._unbase64(text))
        wrapped = [_LINE_BREAK.sub("", block) for block in _WRAPPED.findall(text)]
        if wrapped:
            found.append(self._unbase64("\n".join(wrapped)))
        return [d for d in found if len(d) >= self._shortest and d != text]

    def _unbase64(self, text: str) -> str:
        """Every run of base64 long enough to hold a secret, decoded at each alignment."""
        decoded = []
        for run in self._run.findall(text):
            standard = run.translate(_URLSAFE)
            for offset in range(4):
                chunk = standard[offset:]
                chunk = chunk[: len(chunk) - 1] if len(chunk) % 4 == 1 else chunk
                with contextlib.suppress(ValueError):
                    raw = base64.b64decode(chunk + "=" * (-len(chunk) % 4))
                    decoded.append(raw.decode("latin-1"))
        return "\n".join(decoded)

    def _inflates_to_secret(self, data: bytes) -> bool:
        for wbits in (47, -15):  # gzip or zlib (told apart by their header), raw deflate
            inflater = zlib.decompressobj(wbits)
            try:
                inflated = inflater.decompress(data, MAX_BODY)
            except zlib.error:
                continue
            if inflated and self._reveals(inflated.decode("latin-1")):
                return True
        return False


def _forms(value: str) -> tuple[str, ...]:
    """A secret as text and as its UTF-8 bytes read one byte a character."""
    return (value, value.encode("utf-8").decode("latin-1"))


def _unescape(match: re.Match[str]) -> str:
    code, char = match.groups()
    if code is not None:
        return chr(int(code, 16))
    return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(char, char)


# -- the proxy ---------------------------------------------------------------------------


@dataclass
class _Request:
    """One request as the agent sent it inside its tunnel."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes
    framed: bool  # the agent framed a body (Content-Length or Transfer-Encoding)


@dataclass(eq=False)
class _Open:
    """An exchange forwarded (or about to be) and not yet recorded."""

    record: dict[str, Any]  # the request's part of the record
    started: float
    sock: socket.socket | None = None  # the endpoint connection, once it is open
    cut: bool = False


class Replay:
    """A run's recorded model exchanges, answering its re-execution instead of the model.

    A request equal to a recorded one (the same endpoint, method, URL and body, each with
    the run's passed secrets removed; headers, which carry credentials and client versions,
    are not compared) gets the recorded answer, each recorded exchange at most once and in
    the order they were recorded; any other request gets none (502) and is named in
    ``unmatched``. Replay proves the agent's own code path, not the model's determinism."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        self._left = [e for e in exchanges if e.get("status") is not None and not e.get("cut")]
        self._lock = threading.Lock()
        self.unmatched: list[str] = []

    @staticmethod
    def key(record: dict[str, Any]) -> tuple[Any, ...]:
        body = record.get("request_body") or {}
        return (record.get("endpoint"), record.get("method"), record.get("url"),
                body.get("text"), body.get("base64"))  # fmt: skip

    def answer(self, record: dict[str, Any]) -> dict[str, Any] | None:
        wanted = self.key(record)
        with self._lock:
            for n, exchange in enumerate(self._left):
                if self.key(exchange) == wanted:
                    return self._left.pop(n)
            self.unmatched.append(f"{record.get('method')} {record.get('url')}")
        return None


def _recorded_payload(exchange: dict[str, Any]) -> bytes:
    body = exchange.get("response_body") or {}
    if "base64" in body:
        return base64.b64decode(body["base64"])
    return str(body.get("text", "")).encode("utf-8")


def _replayed_bytes(exchange: dict[str, Any], payload: bytes, closing: bool) -> bytes:
    out = [f"HTTP/1.1 {int(exchange['status'])} Replayed".encode("latin-1")]
    for key, value in exchange.get("response_headers") or []:
        if str(key).lower() not in _HOP:  # Content-Encoding kept: the bytes are as recorded
            out.append(f"{key}: {value}".encode("latin-1", "replace"))
    out.append(f"Content-Length: {len(payload)}".encode())
    if closing:
        out.append(b"Connection: close")
    return b"\r\n".join(out) + b"\r\n\r\n" + payload


@dataclass
class ModelProxy:
    """The run's proxy to its declared model endpoints (see the module's docstring).

    ``settle_seconds`` is how long ``take`` waits for exchanges still open before it cuts
    them."""

    endpoints: tuple[Endpoint, ...]
    upstream_ca_file: str = ""
    secrets: tuple[str, ...] = ()
    settle_seconds: float = 30.0
    # re-execution: answer from a run's recorded exchanges, never from the model
    replay: Replay | None = None
    folder: Path = field(init=False)
    _exchanges: list[dict[str, Any]] = field(default_factory=list, init=False)
    _refused: list[EgressAttempt] = field(default_factory=list, init=False)
    _open: list[_Open] = field(default_factory=list, init=False)
    _closed: bool = field(default=False, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self._settled = threading.Condition(self._lock)
        self._redact = Redactor(self.secrets)

    def start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pit-model-"))
        self.authority = RunAuthority()
        (self.folder / CA_NAME).write_bytes(self.authority.pem())
        upstream = ssl.create_default_context()
        if self.upstream_ca_file:
            upstream.load_verify_locations(self.upstream_ca_file)
        self._upstream = upstream
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with contextlib.suppress(
                    OSError, ssl.SSLError, http.client.HTTPException, ValueError
                ):
                    proxy._tunnel(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(
            str(self.folder / SOCKET_NAME), Handler
        )
        self._server.daemon_threads = True
        os.chmod(self.folder / SOCKET_NAME, 0o666)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving: nothing is forwarded after this, and what is open is cut."""
        with self._lock:
            self._closed = True
            self._cut_open("the run's model proxy stopped")
        server = getattr(self, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
        authority = getattr(self, "authority", None)
        if authority is not None:
            authority.close()
        if hasattr(self, "folder"):
            shutil.rmtree(self.folder, ignore_errors=True)

    def take(
        self, settle_seconds: float | None = None
    ) -> tuple[list[dict[str, Any]], list[EgressAttempt]]:
        """The exchanges and refusals since the last call, in the order they ended.

        Called when a cell ends, so nothing the agent sent stays forwarded and unrecorded:
        an exchange still open is waited for (``settle_seconds``, by default the proxy's)
        and recorded whole once its answer is in; one still open after that is cut (its
        endpoint connection is shut, the agent gets no answer) and recorded with
        ``cut: true``, without a response. An exchange is recorded once, by whichever
        comes first."""
        wait = self.settle_seconds if settle_seconds is None else settle_seconds
        with self._settled:
            self._settled.wait_for(lambda: not self._open, timeout=wait)
            self._cut_open("the cell ended with the exchange still open")
            exchanges, self._exchanges = self._exchanges, []
            refused, self._refused = self._refused, []
        return exchanges, refused

    def _cut_open(self, why: str) -> None:
        """Record every open exchange as cut and shut its endpoint connection (the lock is
        held)."""
        for ticket in self._open:
            ticket.cut = True
            self._exchanges.append(
                {**ticket.record, **_unanswered(why), "elapsed_ms": _since(ticket), "cut": True}
            )
            if ticket.sock is not None:
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(ticket.sock, socket.SHUT_RDWR)
        self._open.clear()
        self._settled.notify_all()

    # -- one client connection ---------------------------------------------------------
    def _tunnel(self, client: socket.socket) -> None:
        reader = client.makefile("rb")
        request_line = reader.readline(8192).decode("latin-1").strip()
        http.client.parse_headers(reader)
        method, _, rest = request_line.partition(" ")
        target = rest.partition(" ")[0]
        host, _, port_text = target.rpartition(":")
        host = host.strip("[]").lower()
        allowed = {(e.host, e.port) for e in self.endpoints}
        if method != "CONNECT" or not port_text.isdigit() or (host, int(port_text)) not in allowed:
            shown = target if method == "CONNECT" else f"{method} {target}"
            self._refuse("model proxy: " + (method or "?"), shown, _SITE)
            client.sendall(_reply(403, "Forbidden"))
            return
        endpoint = Endpoint(host, int(port_text))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        tls = self.authority.server_context(host).wrap_socket(client, server_side=True)
        upstream = http.client.HTTPSConnection(
            host, endpoint.port, context=self._upstream, timeout=600
        )
        try:
            stream = tls.makefile("rwb")
            while self._exchange(stream, endpoint, upstream):
                pass
        finally:
            upstream.close()
            with contextlib.suppress(OSError):
                tls.close()

    def _refuse(self, call: str, target: str, site: str) -> None:
        clean = self._redact.text
        attempt = EgressAttempt(clean(call[:200]), clean(target[:200]), site, ())
        with self._lock:
            self._refused.append(attempt)

    def _exchange(
        self, stream: Any, endpoint: Endpoint, upstream: http.client.HTTPSConnection
    ) -> bool:
        """One request inside the tunnel: refused, or forwarded and recorded. True while the
        tunnel may carry another."""
        request = _read_request(stream)
        if request is None:
            return False
        refusal = _misdirected(request, endpoint)
        if refusal is not None:
            self._refuse(f"model proxy: {refusal[0]}", refusal[1], _site(endpoint))
            _send(stream, _reply(421, "Misdirected Request"))
            return False
        headers = _forwarded_headers(request)
        # staged on the endpoint's connection, which sends it; in replay nothing is sent,
        # so it is staged on a connection of its own (never opened), and the tunnel's next
        # request finds the endpoint's connection as the last one left it
        staged = upstream if self.replay is None else _unopened(endpoint, self._upstream)
        try:
            _prepare(staged, request, headers)
        except ValueError:  # a target or header the HTTP client will not send as is
            _send(stream, _reply(400, "Bad Request"))
            return False
        ticket = self._begin(endpoint, request, headers)
        if ticket is None:
            _send(stream, _reply(503, "Service Unavailable"))
            return False
        if self.replay is not None:
            return self._replayed(stream, ticket, request)
        try:
            response, payload = self._forward(ticket, upstream, request.body)
        except (OSError, http.client.HTTPException) as exc:
            self._finish(ticket, None, b"", f"{type(exc).__name__}: {exc}")
            _send(stream, _reply(502, "Bad Gateway"))
            return False
        if not self._finish(ticket, response, payload, None):
            _send(stream, _reply(502, "Bad Gateway"))
            return False
        closing = (_header(request.headers, "connection") or "").lower() == "close"
        _send(stream, _response_bytes(response, payload, closing))
        return not closing

    def _replayed(self, stream: Any, ticket: _Open, request: _Request) -> bool:
        """The recorded answer to an equal request, recorded again as this run's exchange;
        none (502) to any other."""
        assert self.replay is not None
        recorded = self.replay.answer(ticket.record)
        if recorded is None:
            outcome = _unanswered("replay: no recorded exchange matches this request")
        else:
            payload = _recorded_payload(recorded)
            outcome = {
                "status": recorded["status"],
                "response_headers": recorded.get("response_headers") or [],
                "response_body": recorded.get("response_body") or {"text": ""},
                "response_sha256": recorded.get("response_sha256") or _sha256(payload),
                "error": None,
            }
        if not self._record(ticket, outcome):
            return False
        if recorded is None:
            _send(stream, _reply(502, "Bad Gateway"))
            return False
        closing = (_header(request.headers, "connection") or "").lower() == "close"
        _send(stream, _replayed_bytes(recorded, payload, closing))
        return not closing

    def _begin(
        self, endpoint: Endpoint, request: _Request, headers: list[tuple[str, str]]
    ) -> _Open | None:
        """The exchange, open from now until it is recorded; None once the proxy stopped."""
        record = {
            "endpoint": endpoint.label,
            "method": self._redact.text(request.method),
            "url": self._redact.text(f"https://{endpoint.label}{request.target}"),
            "request_headers": self._redact.headers(headers),
            "request_body": self._redact.body(request.body),
            "request_sha256": _sha256(request.body),
        }
        ticket = _Open(record, time.monotonic())
        with self._lock:
            if self._closed:
                return None
            self._open.append(ticket)
        return ticket

    def _forward(
        self, ticket: _Open, upstream: http.client.HTTPSConnection, body: bytes
    ) -> tuple[http.client.HTTPResponse, bytes]:
        """Send the prepared request and read the whole answer; raises once it is cut."""
        if upstream.sock is None:
            upstream.connect()
        with self._lock:
            if ticket.cut:
                raise ConnectionAbortedError("the exchange was cut before it was sent")
            ticket.sock = upstream.sock
        upstream.endheaders(body or None)
        response = upstream.getresponse()
        payload = response.read(MAX_BODY + 1)
        if len(payload) > MAX_BODY:
            raise http.client.HTTPException("response larger than the proxy keeps")
        return response, payload

    def _finish(
        self,
        ticket: _Open,
        response: http.client.HTTPResponse | None,
        payload: bytes,
        error: str | None,
    ) -> bool:
        """Record the exchange, unless it was cut (and so recorded) already: True if it was
        recorded here, with its answer."""
        if response is None:
            outcome = _unanswered(self._redact.text(error or "no answer"))
        else:
            outcome = {
                "status": response.status,
                "response_headers": self._redact.headers(response.getheaders()),
                "response_body": self._redact.body(payload),
                "response_sha256": _sha256(payload),
                "error": None,
            }
        return self._record(ticket, outcome) and response is not None

    def _record(self, ticket: _Open, outcome: dict[str, Any]) -> bool:
        """Record the exchange with its ``outcome`` (it is open no more), unless it was cut
        (and so recorded) already: True if it was recorded here."""
        with self._lock:
            if ticket.cut:
                return False
            self._open.remove(ticket)
            self._exchanges.append(
                {**ticket.record, **outcome, "elapsed_ms": _since(ticket), "cut": False}
            )
            self._settled.notify_all()
        return True


_SITE = "the agent's process, through the run's model proxy"


def _site(endpoint: Endpoint) -> str:
    return f"the agent's process, in its tunnel to {endpoint.label} through the run's model proxy"


def _read_request(stream: Any) -> _Request | None:
    """The next request in the tunnel, or None when the agent is done."""
    line = stream.readline(65536).decode("latin-1").strip()
    if not line:
        return None
    method, target, _version = [*line.split(" ", 2), "", ""][:3]
    message = http.client.parse_headers(stream)
    body = _read_body(stream, message)
    headers = list(message.items())
    framed = any(k.lower() in ("content-length", "transfer-encoding") for k, _ in headers)
    return _Request(method, target, headers, body, framed)


def _misdirected(request: _Request, endpoint: Endpoint) -> tuple[str, str] | None:
    """Why a request in the tunnel to ``endpoint`` may not pass, as (what, the target it
    named), or None when it may.

    A request passes only in origin form (``/path?query``; never absolute form
    ``https://host/path``, a ``//host`` path, or ``*``) and with exactly one ``Host``
    header naming the tunnel's endpoint (with its port, or without it for 443). The proxy
    speaks HTTP/1.1 only (its TLS offers nothing else by ALPN), so a request's authority is
    its ``Host``; HTTP/2's ``:authority`` does not arise."""
    if not request.target.startswith("/") or request.target.startswith("//"):
        return "request target", f"{request.method} {request.target}"
    hosts = [v for k, v in request.headers if k.lower() == "host"]
    if len(hosts) != 1 or _authority(hosts[0]) != (endpoint.host, endpoint.port):
        return "Host", ", ".join(hosts) if hosts else "(no Host header)"
    return None


def _authority(value: str) -> tuple[str, int] | None:
    """A Host header's (host, port), the port 443 when it names none; None if malformed."""
    found = _HOST.fullmatch(value.strip().lower())
    if found is None:
        return None
    return found.group(1).strip("[]"), int(found.group(2) or 443)


def _forwarded_headers(request: _Request) -> list[tuple[str, str]]:
    """The headers sent to the endpoint, in order, and so the headers recorded: the agent's,
    less those for one hop, and the body's length as the proxy sends it."""
    kept = [(k, v) for k, v in request.headers if k.lower() not in _HOP]
    if request.body or request.framed or request.method in _BODY_METHODS:
        kept.append(("Content-Length", str(len(request.body))))
    return kept


def _prepare(
    upstream: http.client.HTTPSConnection, request: _Request, headers: list[tuple[str, str]]
) -> None:
    """Stage the request line and ``headers`` exactly (the client adds none); nothing is
    sent until ``endheaders``."""
    upstream.putrequest(request.method, request.target, skip_host=True, skip_accept_encoding=True)
    for key, value in headers:
        upstream.putheader(key, value)


def _unopened(endpoint: Endpoint, context: ssl.SSLContext) -> http.client.HTTPSConnection:
    """A connection to ``endpoint`` that is never opened: a request is staged on it only to
    be checked as the endpoint's would be."""
    return http.client.HTTPSConnection(endpoint.host, endpoint.port, context=context)


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _unanswered(why: str) -> dict[str, Any]:
    return {
        "status": None,
        "response_headers": [],
        "response_body": None,
        "response_sha256": None,
        "error": why,
    }


def _since(ticket: _Open) -> float:
    return round((time.monotonic() - ticket.started) * 1000, 1)


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _reply(status: int, reason: str) -> bytes:
    return f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".encode()


def _response_bytes(response: http.client.HTTPResponse, payload: bytes, closing: bool) -> bytes:
    out = [f"HTTP/1.1 {response.status} {response.reason}".encode("latin-1")]
    for key, value in response.getheaders():
        if key.lower() not in _HOP:
            out.append(f"{key}: {value}".encode("latin-1"))
    out.append(f"Content-Length: {len(payload)}".encode())
    if closing:
        out.append(b"Connection: close")
    return b"\r\n".join(out) + b"\r\n\r\n" + payload


def _send(stream: Any, data: bytes) -> None:
    with contextlib.suppress(OSError):
        stream.write(data)
        stream.flush()


def _read_body(stream: Any, headers: Any) -> bytes:
    if (headers.get("Transfer-Encoding") or "").lower() == "chunked":
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(stream.readline(1024).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while stream.readline(1024).strip():  # trailers
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_BODY:
                raise http.client.HTTPException("request larger than the proxy keeps")
            chunks.append(stream.read(size))
            stream.readline(1024)
    length = int(headers.get("Content-Length") or 0)
    if length > MAX_BODY:
        raise http.client.HTTPException("request larger than the proxy keeps")
    data: bytes = stream.read(length) if length else b""
    return data
