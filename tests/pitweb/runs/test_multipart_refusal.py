"""Refuse before reading: a multipart part the endpoint does not take, or one it already
has, is refused at its part header. Each request here is a stream made as it is read (a
client sending 65 parts of 8 MiB, 520 MiB that never sit in memory) that counts the bytes
the server read and watches the upload folder at every read: what was spooled, and how
much of the request was read, before the refusal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.accounts.services import token_issue
from pitweb.runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)

MiB = 1024 * 1024
BOUNDARY = "hostile3boundary"
READ_AHEAD = 256 * 1024  # what the parser may read past a part's header before it is refused


@dataclass(frozen=True)
class Part:
    name: str
    size: int
    file: bool = True  # False: a text field (no filename)

    def head(self) -> bytes:
        filename = f'; filename="{self.name}.bin"' if self.file else ""
        kind = "Content-Type: application/octet-stream\r\n" if self.file else ""
        return (
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; "
            f'name="{self.name}"{filename}\r\n{kind}\r\n'
        ).encode()

    def length(self) -> int:
        return len(self.head()) + self.size + 2


@dataclass
class Watched:
    """A request body produced while it is read; at every read it notes what the upload
    folder holds, so a file spooled and deleted again within the request is seen too."""

    parts: list[Part]
    folder: Path
    read_bytes: int = 0
    spooled: set[str] = field(default_factory=set)
    most_on_disk: int = 0
    _pending: bytes = b""
    _chunks: Iterator[bytes] | None = None

    def __len__(self) -> int:
        return sum(p.length() for p in self.parts) + len(f"--{BOUNDARY}--\r\n")

    def _produce(self) -> Iterator[bytes]:
        for part in self.parts:
            yield part.head()
            left = part.size
            while left:
                step = min(left, MiB)
                yield b"x" * step
                left -= step
            yield b"\r\n"
        yield f"--{BOUNDARY}--\r\n".encode()

    def _look(self) -> None:
        on_disk = 0
        for entry in self.folder.rglob("*"):
            if entry.is_file():
                self.spooled.add(entry.name)
                on_disk += entry.stat().st_size
        self.most_on_disk = max(self.most_on_disk, on_disk)

    def read(self, size: int | None = -1) -> bytes:
        self._look()
        if self._chunks is None:
            self._chunks = self._produce()
        want = len(self) if size is None or size < 0 else size
        while len(self._pending) < want:
            try:
                self._pending += next(self._chunks)
            except StopIteration:
                break
        data, self._pending = self._pending[:want], self._pending[want:]
        self.read_bytes += len(data)
        return data

    def readline(self, size: int | None = -1) -> bytes:
        raise AssertionError("a multipart body is read in chunks, never by line")


@pytest.fixture()
def upload_tmp(settings: Any, tmp_path: Path) -> Path:
    folder = tmp_path / "uploads"
    folder.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    return folder


def send(user: User, parts: list[Part], folder: Path, url: str = "/api/runs/") -> Any:
    body = Watched(parts, folder)
    environ: dict[str, Any] = {
        "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Token {token_issue(user=user)}",
        "wsgi.input": body,  # read as the server reads it, never whole
    }
    return Client().generic("POST", url, **environ), body


def unknown(count: int = 65, size: int = 8 * MiB, file: bool = True) -> list[Part]:
    return [Part(f"extra{i}", size, file) for i in range(count)]


RECEIPT, TRAJECTORY = Part("receipt", 200_000), Part("trajectory", 3 * MiB)
CASES = {
    "65 unknown 8 MiB files": ([], unknown(), "unknown_field", "extra0"),
    "a receipt and a trajectory, then 65 unknown 8 MiB files": (
        [RECEIPT, TRAJECTORY], unknown(), "unknown_field", "extra0",
    ),
    "the receipt, then 65 more receipts of 8 MiB": (
        [RECEIPT], [Part("receipt", 8 * MiB)] * 65, "duplicate_field", "receipt",
    ),
    "a trajectory, then the trajectory again at 200 MiB": (
        [TRAJECTORY], [Part("trajectory", 200 * MiB)], "duplicate_field", "trajectory",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_an_unwanted_file_part_is_refused_at_its_header(
    case: str, submitter: User, upload_tmp: Path
) -> None:
    wanted, unwanted, code, named = CASES[case]
    response, body = send(submitter, [*wanted, *unwanted], upload_tmp)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == code and named in error["message"], error
    before = sum(p.length() for p in wanted) + unwanted[0].length() - unwanted[0].size
    # read: the parts it took, the refused part's header, and no more than a read ahead
    assert body.read_bytes <= before + READ_AHEAD, (body.read_bytes, before)
    # spooled: the parts it took (at most their sizes), never a byte of the refused ones
    assert len(body.spooled) <= len(wanted)
    assert body.most_on_disk <= sum(p.size for p in wanted)
    assert list(upload_tmp.iterdir()) == [] and Run.objects.count() == 0


def test_huge_unknown_text_fields_are_held_to_the_memory_limit_and_never_spooled(
    submitter: User, upload_tmp: Path, settings: Any
) -> None:
    """Text parts never reach an upload handler: Django keeps them in memory, all of them
    together at most DATA_UPLOAD_MAX_MEMORY_SIZE, and refuses the request past it."""
    response, body = send(submitter, unknown(file=False), upload_tmp)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "bad_request"  # Django's RequestDataTooBig
    assert body.read_bytes <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE + READ_AHEAD
    assert body.spooled == set() and body.most_on_disk == 0
    # a small unknown text field first, then the files: refused at the first unknown file
    response, body = send(submitter, [Part("note", 10, file=False), *unknown()], upload_tmp)
    assert response.json()["error"]["code"] == "unknown_field"
    assert body.read_bytes <= READ_AHEAD and body.spooled == set()


def test_the_staff_price_upload_refuses_unwanted_parts_at_their_header(
    staff: User, registered: Any, upload_tmp: Path
) -> None:
    url = f"/api/releases/{registered.digest_hex}/prices/"
    for parts, code in (
        (unknown(), "unknown_field"),
        ([Part("source", 8 * MiB)], "unknown_field"),  # a text field of it, sent as a file
        ([Part("prices", 1000), Part("prices", 200 * MiB)], "duplicate_field"),
    ):
        response, body = send(staff, parts, upload_tmp, url)
        assert response.status_code == 400 and response.json()["error"]["code"] == code
        assert body.read_bytes <= 1000 + READ_AHEAD and body.most_on_disk <= 1000
    assert list(upload_tmp.iterdir()) == []


@pytest.mark.slow  # nginx and gunicorn served: a served site
def test_through_nginx_and_gunicorn_65_unknown_parts_get_the_json_refusal_early(
    submitter: User, artifact_dir: Path, tmp_path: Path
) -> None:
    """The adversary's setup: the project's nginx in front of gunicorn. The refusal comes
    back as the API's 400 while the client is still sending, and nothing is spooled."""
    import http.client
    import socket
    import sys
    import threading

    from django.conf import settings

    from tests.pitweb.jobs.test_worker_integration import start, stop, wait_for, worker_env
    from tests.pitweb.test_deploy import _free_port, nginx_in_front

    var = tmp_path / "var"
    var.mkdir()
    (var / "broker").symlink_to(settings.BROKER_DIR)
    port = _free_port()
    env = {**worker_env(artifact_dir), "PITWEB_VAR_DIR": str(var), "DJANGO_DEBUG": "true"}
    log = tmp_path / "gunicorn.log"
    server = start(
        [sys.executable, "-m", "gunicorn", "pitweb.wsgi", "--workers", "3",
         "--bind", f"127.0.0.1:{port}"],
        env, log,
    )  # fmt: skip
    token = token_issue(user=submitter)
    (tmp_path / "proxy").mkdir()
    try:
        with nginx_in_front(tmp_path / "proxy", port) as front:

            def up() -> bool:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return True
                except OSError:
                    return False

            wait_for(up, "gunicorn to listen", log)
            body = Watched(unknown(), var / "work")
            client = socket.create_connection(("127.0.0.1", front), timeout=30)
            client.sendall(
                f"POST /api/runs/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Token {token}"
                f"\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            sent = [0]

            def send() -> None:
                try:
                    while chunk := body.read(256 * 1024):
                        client.sendall(chunk)
                        sent[0] += len(chunk)
                except OSError:
                    pass  # the server stopped reading: it has answered

            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            response = http.client.HTTPResponse(client)
            response.begin()
            answered_after = sent[0]
            payload = response.read()
            client.close()
            sender.join(timeout=30)
        assert response.status == 400, payload
        assert response.getheader("Content-Type") == "application/json"
        assert json.loads(payload)["error"]["code"] == "unknown_field"
        assert answered_after < 64 * MiB, (answered_after, len(body))  # socket buffers
        assert body.spooled == set() and list((var / "work").iterdir()) == []
    finally:
        stop(server)
