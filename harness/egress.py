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
- records every exchange whole: method, URL, headers (credentials redacted), request and
  response bodies with their sha256, status and timing. The runner writes each one into
  the trajectory, so the model's answers can be replayed and checked later.

Credentials reach the agent's process only through ``pass_env`` and are written nowhere:
the headers that carry them are redacted, and so is any passed value found in a recorded
text.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import http.client
import ipaddress
import os
import shutil
import socket
import socketserver
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.guard import EgressAttempt

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


class EgressError(ValueError):
    """A model endpoint that cannot be declared."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """``https://host[:port]`` (a base URL's path is allowed and ignored)."""
    parts = urlsplit(text)
    if parts.scheme != "https" or not parts.hostname:
        raise EgressError(f"model endpoint {text!r}: must be an https:// URL with a host")
    if parts.username or parts.password:
        raise EgressError(f"model endpoint {text!r}: credentials go in pass_env, not the URL")
    try:
        port = parts.port or 443
    except ValueError:
        raise EgressError(f"model endpoint {text!r}: the port is not a number") from None
    return Endpoint(parts.hostname.lower(), port)


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
        path.unlink()
        return context

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


# -- the proxy ---------------------------------------------------------------------------


@dataclass
class ModelProxy:
    """The run's proxy to its declared model endpoints (see the module's docstring)."""

    endpoints: tuple[Endpoint, ...]
    upstream_ca_file: str = ""
    secrets: tuple[str, ...] = ()
    folder: Path = field(init=False)
    _exchanges: list[dict[str, Any]] = field(default_factory=list, init=False)
    _refused: list[EgressAttempt] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

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
                with contextlib.suppress(OSError, ssl.SSLError, http.client.HTTPException):
                    proxy._tunnel(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(
            str(self.folder / SOCKET_NAME), Handler
        )
        self._server.daemon_threads = True
        os.chmod(self.folder / SOCKET_NAME, 0o666)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        server = getattr(self, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
        authority = getattr(self, "authority", None)
        if authority is not None:
            authority.close()
        if hasattr(self, "folder"):
            shutil.rmtree(self.folder, ignore_errors=True)

    def take(self) -> tuple[list[dict[str, Any]], list[EgressAttempt]]:
        """The exchanges and refusals since the last call, in the order they happened."""
        with self._lock:
            exchanges, self._exchanges = self._exchanges, []
            refused, self._refused = self._refused, []
        return exchanges, refused

    # -- one client connection ---------------------------------------------------------
    def _tunnel(self, client: socket.socket) -> None:
        reader = client.makefile("rb")
        request_line = reader.readline(8192).decode("latin-1").strip()
        headers = http.client.parse_headers(reader)
        method, _, rest = request_line.partition(" ")
        target = rest.partition(" ")[0]
        host, _, port_text = target.rpartition(":")
        host = host.strip("[]").lower()
        allowed = {(e.host, e.port) for e in self.endpoints}
        if method != "CONNECT" or not port_text.isdigit() or (host, int(port_text)) not in allowed:
            shown = target if method == "CONNECT" else f"{method} {target}"
            with self._lock:
                self._refused.append(
                    EgressAttempt(
                        "model proxy: " + (method or "?"),
                        shown[:200],
                        "the agent's process, through the run's model proxy",
                        (),
                    )
                )
            client.sendall(
                b"HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            )
            return
        del headers
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

    def _exchange(
        self, stream: Any, endpoint: Endpoint, upstream: http.client.HTTPSConnection
    ) -> bool:
        line = stream.readline(65536).decode("latin-1").strip()
        if not line:
            return False
        method, path, _version = [*line.split(" ", 2), "", ""][:3]
        headers = http.client.parse_headers(stream)
        body = _read_body(stream, headers)
        started = time.monotonic()
        forwarded = {k: v for k, v in headers.items() if k.lower() not in _HOP}
        upstream.request(method, path, body=body if body else None, headers=forwarded)
        response = upstream.getresponse()
        payload = response.read(MAX_BODY + 1)
        elapsed = round((time.monotonic() - started) * 1000, 1)
        if len(payload) > MAX_BODY:
            raise http.client.HTTPException("response larger than the proxy keeps")
        self._record(endpoint, method, path, headers.items(), body, response, payload, elapsed)
        out = [f"HTTP/1.1 {response.status} {response.reason}".encode("latin-1")]
        for key, value in response.getheaders():
            if key.lower() not in _HOP:
                out.append(f"{key}: {value}".encode("latin-1"))
        out.append(f"Content-Length: {len(payload)}".encode())
        closing = (headers.get("Connection") or "").lower() == "close"
        if closing:
            out.append(b"Connection: close")
        stream.write(b"\r\n".join(out) + b"\r\n\r\n" + payload)
        stream.flush()
        return not closing

    def _record(
        self,
        endpoint: Endpoint,
        method: str,
        path: str,
        request_headers: Any,
        body: bytes,
        response: http.client.HTTPResponse,
        payload: bytes,
        elapsed: float,
    ) -> None:
        exchange = {
            "endpoint": endpoint.label,
            "method": method,
            "url": self._clean(f"https://{endpoint.label}{path}"),
            "request_headers": self._headers(request_headers),
            "request_body": self._body(body),
            "request_sha256": "sha256:" + hashlib.sha256(body).hexdigest(),
            "status": response.status,
            "response_headers": self._headers(response.getheaders()),
            "response_body": self._body(payload),
            "response_sha256": "sha256:" + hashlib.sha256(payload).hexdigest(),
            "elapsed_ms": elapsed,
        }
        with self._lock:
            self._exchanges.append(exchange)

    def _headers(self, items: Any) -> list[list[str]]:
        kept = []
        for key, value in items:
            low = key.lower()
            secret = low in _SECRET_HEADERS or any(w in low for w in ("key", "token", "secret"))
            kept.append([key, "[redacted]" if secret else self._clean(value)])
        return kept

    def _body(self, data: bytes) -> dict[str, str]:
        try:
            return {"text": self._clean(data.decode("utf-8"))}
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(data).decode("ascii")}

    def _clean(self, text: str) -> str:
        for value in self.secrets:
            if value:
                text = text.replace(value, "[redacted]")
        return text


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
