"""The deployment, checked without a Docker engine: the compose file against the Compose
Specification's schema, nginx's configuration with Debian's `nginx -t`, the image's
hygiene, and the image's runtime rebuilt offline and served with the compose
environment (service host names mapped to 127.0.0.1)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.servers import require_listening

REPO = Path(__file__).resolve().parents[2]
WHEELS = REPO / ".wheels"
# The Compose Specification's JSON Schema as docker-compose 1.29.2 ships it
# (compose/config/compose_spec.json, draft 2019-09); `make setup` downloads the wheel,
# pinned by hash in requirements/compose-spec.lock.
SPEC_WHEEL = WHEELS / "spec" / "docker_compose-1.29.2-py2.py3-none-any.whl"


def need(path: Path, what: str) -> None:
    if not path.exists():
        message = f"{what} missing at {path.relative_to(REPO)}: run make setup"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def test_the_compose_file_follows_the_compose_specification() -> None:
    import jsonschema

    need(SPEC_WHEEL, "the Compose Specification schema")
    schema = json.loads(zipfile.ZipFile(SPEC_WHEEL).read("compose/config/compose_spec.json"))
    validator = jsonschema.Draft201909Validator(schema)
    assert [e.message for e in validator.iter_errors(compose())] == []
    broken = compose()
    broken["services"]["web"]["restart_policy"] = "always"  # not a key the spec knows
    assert list(validator.iter_errors(broken))


def test_the_stored_boards_are_computed_by_a_worker_of_their_own() -> None:
    from pitweb.celery import app

    # a computation of the boards never queues behind a verification: its own queue, its
    # own worker service; the jobs' worker (no -Q) takes both
    route = app.amqp.router.route({}, "pitweb.board.tasks.refresh_boards_task")
    assert route["queue"].name == "board"
    assert app.amqp.router.route({}, "pitweb.runs.tasks.verify_run_task")["queue"].name == "celery"
    services = compose()["services"]
    assert "-Q board" in services["board"]["command"]
    assert "-Q" not in services["worker"]["command"]
    # on a shared machine the pages come before verifications
    assert services["worker"]["cpu_shares"] < 1024 and "cpu_shares" not in services["web"]


def test_the_deployment_keeps_its_secrets_and_privileges_in_check() -> None:
    spec = compose()
    services = spec["services"]
    for name in ("web", "worker", "board", "beat", "proxy", "postgres", "redis"):
        assert services[name].get("restart") == "unless-stopped", name
    text = (REPO / "docker-compose.yml").read_text()
    assert "PASSWORD:" not in text and "pitweb:pitweb@" not in text  # secrets: .env only
    assert services["proxy"]["image"].startswith("nginx")
    assert "web" not in {p.split(":")[0] for p in services["web"].get("ports", [])}
    assert "seccomp:unconfined" in services["worker"]["security_opt"]
    assert "http://127.0.0.1:8000/'" in services["web"]["healthcheck"]["test"][-1]
    dockerfile = (REPO / "Dockerfile").read_text()
    assert (
        "USER pitweb" in dockerfile and "site.lock" in dockerfile and "dev.lock" not in dockerfile
    )
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".env", ".git", ".venv", "var"} <= set(ignored)
    assert "/.env" in (REPO / ".gitignore").read_text().split()


def test_nginx_accepts_the_proxy_configuration(tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    need(Path(nginx), "nginx (apt-get install nginx; .ci/run installs it)")
    server = (REPO / "deploy" / "nginx.conf").read_text()
    # the compose host name and volume, mapped onto this machine
    server = server.replace("server web:8000;", "server 127.0.0.1:8000;")
    server = server.replace("/srv/pitweb/static/", f"{tmp_path}/static/")
    (tmp_path / "pitweb.conf").write_text(server)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events {}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/pitweb.conf;\n}}\n"
    )
    done = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


class _Upstream(BaseHTTPRequestHandler):
    """A stand-in application server: its own JSON 413, a page, and an answer that never
    comes (until the test ends)."""

    release = threading.Event()

    def do_GET(self) -> None:
        if self.path == "/api/slow/":
            self.release.wait(timeout=60)
            return
        status, kind, body = (
            (413, "application/json", b'{"error": {"code": "too_large", "message": "ours"}}')
            if self.path == "/api/own-413/"
            else (200, "text/html", b"<p>a page</p>")
        )
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _ask(port: int, method: str, path: str, announced: int | None = None) -> tuple[int, str, bytes]:
    """One request; ``announced``: a body of that many bytes is announced and its first
    64 KiB sent (the proxy answers from the headers)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path)
        if announced is not None:
            conn.putheader("Content-Type", "multipart/form-data; boundary=x")
            conn.putheader("Content-Length", str(announced))
        conn.endheaders()
        if announced is not None:
            conn.send(b"x" * 65536)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


def _envelope(content_type: str, body: bytes) -> dict[str, str]:
    from pitweb.core.errors import error_body

    assert content_type == "application/json", content_type
    error = json.loads(body)["error"]
    assert json.loads(body) == error_body(error["code"], error["message"]) and error["message"]
    return dict(error)


TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def proxy_limit() -> int:
    """The proxy's body limit, in bytes, as deploy/nginx.conf sets it."""
    server = (REPO / "deploy" / "nginx.conf").read_text()
    return int(server.split("client_max_body_size ")[1].split("m;")[0]) * 1024 * 1024


@contextlib.contextmanager
def nginx_in_front(folder: Path, upstream: int, read_timeout: str = "300s") -> Iterator[int]:
    """The real nginx serving deploy/nginx.conf on a loopback port (yielded), in front of
    the application server on ``upstream``."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    need(Path(nginx), "nginx (apt-get install nginx; .ci/run installs it)")
    port = _free_port()
    server = (REPO / "deploy" / "nginx.conf").read_text()
    for old, new in (
        ("server web:8000;", f"server 127.0.0.1:{upstream};"),
        ("listen 80;", f"listen 127.0.0.1:{port};"),
        ("/srv/pitweb/static/", f"{folder}/static/"),
        ("proxy_read_timeout 300s;", f"proxy_read_timeout {read_timeout};"),
    ):
        assert old in server
        server = server.replace(old, new)
    (folder / "pitweb.conf").write_text(server)
    temp = "".join(f"  {kind}_temp_path {folder}/{kind};\n" for kind in TEMP_PATHS)
    (folder / "nginx.conf").write_text(
        f"pid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
        "daemon off;\nmaster_process off;\nevents {}\n"
        f"http {{\n  access_log off;\n{temp}  include {folder}/pitweb.conf;\n}}\n"
    )
    proxy = subprocess.Popen([nginx, "-p", str(folder), "-c", str(folder / "nginx.conf")])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proxy.poll() is None, (folder / "error.log").read_text()
                assert time.monotonic() < deadline, "nginx did not listen"
                time.sleep(0.05)
        yield port
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)


def test_nginxs_own_errors_answer_the_api_envelope_and_pages_stay_html(tmp_path: Path) -> None:
    """The real nginx with deploy/nginx.conf on a loopback port, in front of a stand-in
    application server: a body past the limit, the server too slow, the server down."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    limit = proxy_limit()
    try:
        # proxy_read_timeout shortened, for the 504 within the test
        with nginx_in_front(tmp_path, upstream.server_address[1], read_timeout="1s") as port:
            # a body past the limit: the API's envelope on /api/, nginx's page elsewhere
            status, kind, body = _ask(port, "POST", "/api/runs/", announced=2 * limit)
            assert status == 413 and _envelope(kind, body)["code"] == "too_large"
            assert str(limit // (1024 * 1024)) in json.loads(body)["error"]["message"]
            status, kind, body = _ask(port, "POST", "/", announced=2 * limit)
            assert status == 413 and kind == "text/html" and b"<html>" in body
            # the application's own errors pass through untouched
            status, kind, body = _ask(port, "GET", "/api/own-413/")
            assert status == 413 and _envelope(kind, body)["message"] == "ours"
            # the application too slow
            status, kind, body = _ask(port, "GET", "/api/slow/")
            assert status == 504 and _envelope(kind, body)["code"] == "gateway_timeout"
            # the application down
            upstream.shutdown()
            upstream.server_close()
            status, kind, body = _ask(port, "POST", "/api/runs/", announced=1000)
            assert status == 502 and _envelope(kind, body)["code"] == "bad_gateway"
            status, kind, body = _ask(port, "GET", "/")
            assert status == 502 and kind == "text/html" and b"<html>" in body
    finally:
        _Upstream.release.set()
        upstream.server_close()


def _env_example() -> dict[str, str]:
    values = {}
    for line in (REPO / ".env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key] = value
    return values


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(*args: Any, **kwargs: Any) -> None:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, check=False, **kwargs
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def test_the_images_runtime_serves_every_page_with_the_compose_environment(
    tmp_path: Path,
) -> None:
    """What the image runs, rebuilt offline: the runtime lock alone in a fresh venv,
    static files collected where compose publishes them, gunicorn with the env file's
    values and compose's environment, every page and the healthcheck fetched."""
    import psycopg

    need(WHEELS, "the runtime wheels")
    # compose's own services, here at their usual ports (not the test's settings: this is
    # the production environment, whatever backend the tests themselves use)
    require_listening("127.0.0.1", 5432, "PostgreSQL (compose's database)")
    require_listening("127.0.0.1", 6379, "Redis (compose's broker and cache)")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", WHEELS,
         "--require-hashes", "-r", REPO / "requirements" / "site.lock")  # fmt: skip
    database = "pitweb_runtime"
    with psycopg.connect(
        "postgres://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=5
    ) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {database}")
    srv = tmp_path / "srv"
    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
        **_env_example(),
        # compose's environment for the app services, its volumes mapped to folders here
        "PITWEB_VAR_DIR": str(srv / "var"),
        "PITWEB_STATIC_ROOT": str(srv / "static"),
        "PITWEB_ARTIFACT_DIR": str(srv / "artifacts"),
        # the service host names, mapped to this machine
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}",
        "REDIS_URL": "redis://127.0.0.1:6379/13",
        "PYTHONPATH": str(REPO),  # the image runs its copy of the checkout (/app)
    }
    assert env["DJANGO_DEBUG"] == "false"
    _run(python, "manage.py", "migrate", "--noinput", cwd=REPO, env=env)
    _run(python, "manage.py", "collectstatic", "--noinput", cwd=REPO, env=env)
    assert (srv / "static" / "staticfiles.json").exists()  # where the proxy serves them
    port = _free_port()
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - owned by the process
    server = subprocess.Popen(
        [str(venv / "bin" / "gunicorn"), "pitweb.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "2"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/api/leaderboard/", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.2)
        pages = ["/", "/methodology/", "/compare/", "/changelog/", "/status/", "/api/docs/",
                 "/admin/login/", "/api/leaderboard/", "/api/schema/"]  # fmt: skip
        for path in pages:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                assert response.status == 200, path
                body = response.read().decode()
            if path == "/":
                static = body.split('href="/static/pitweb/site.')[1].split('"')[0]
        with urllib.request.urlopen(f"{base}/static/pitweb/site.{static}", timeout=10) as css:
            assert "max-age=315360000" in css.headers["Cache-Control"]
        # the compose healthcheck, as written, against this server
        check = compose()["services"]["web"]["healthcheck"]["test"][-1]
        done = subprocess.run(
            [str(python), "-c", check.replace("127.0.0.1:8000", f"127.0.0.1:{port}")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
