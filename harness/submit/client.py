"""The site's API spoken over HTTP (httpx): a multipart upload streamed from the files
(never read whole into memory) with its progress told as it goes, and JSON read back.

What the site answers is sorted three ways, and the command line's exit codes follow:

- a 2xx with a JSON object: the answer;
- ``Refused``: a 4xx (a bad token, a field the endpoint does not take, a file too large,
  a receipt that is not what it claims), said in the words of the API's error envelope
  ``{"error": {"code", "message"}}``; also a redirect (the address is not the API's);
- ``SiteFailure``: the site's own failure (a 5xx, an answer that is not the API's), or no
  answer at all (refused connection, timeout, a broken stream).

The token goes only to the site named: redirects are not followed, and a URL the site
answers with (a job to poll) is followed only when it is on the same scheme, host and
port. Text from the site is printed with its control characters replaced, so an answer
cannot drive the submitter's terminal.
"""

from __future__ import annotations

import io
import ipaddress
import json
import re
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.progress import OnProgress
from harness.version import HARNESS_NAME, HARNESS_VERSION

# httpx itself (a sixth of the command line's start-up) is imported where it is used, so
# the commands that never reach a site do not load it
if TYPE_CHECKING:
    import httpx

# connect and pool: a site that does not answer in 10 s is not there; write: each chunk of
# the upload; read: the site checks a whole upload before it answers (a large trajectory
# is hashed and read line by line first)
UPLOAD_TIMEOUT = {"connect": 10.0, "read": 600.0, "write": 120.0, "pool": 10.0}
READ_TIMEOUT = {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 10.0}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Refused(Exception):
    """The site refused the request (a 4xx): its code and its words."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} (HTTP {status}, {code})")
        self.status = status
        self.code = code
        self.message = message


class SiteFailure(Exception):
    """The site failed or could not be reached: never a verdict on what was sent."""


@dataclass(frozen=True)
class Part:
    """One file of a multipart upload: the form field it goes in and the file."""

    field: str
    path: Path


def printable(text: str, limit: int = 2000) -> str:
    """Text from the site as it may reach a terminal: no control characters, bounded."""
    text = _CONTROL.sub("?", text.replace("\r\n", "\n"))
    return text if len(text) <= limit else text[:limit] + "..."


def site_base(site: str) -> httpx.URL:
    """The site's address as the base every API path is joined to; ``ValueError`` for
    what is not an http(s) address of a site."""
    import httpx

    try:
        url = httpx.URL(site.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"--site {site!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"--site {site!r} is not an http:// or https:// address of a site")
    if url.userinfo:
        raise ValueError("--site holds a user name or password: the token comes from "
                         "PITWEB_TOKEN or the token file, never from the address")  # fmt: skip
    if url.query or url.fragment:
        raise ValueError(f"--site {site!r} has a query or fragment: give the site's address")
    path = url.path if url.path.endswith("/") else url.path + "/"
    return url.copy_with(path=path)


def is_loopback(url: httpx.URL) -> bool:
    if url.host == "localhost":
        return True
    try:
        return ipaddress.ip_address(url.host).is_loopback
    except ValueError:
        return False


class _Counted(io.BufferedReader):
    """A file httpx streams a part from, telling how many bytes it has read."""

    def __init__(self, path: Path, read: Callable[[int], None]) -> None:
        super().__init__(io.FileIO(path, "rb"))
        self._read = read

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        if chunk:
            self._read(len(chunk))
        return chunk


class _Tally:
    """Bytes read of all parts, reported in KiB (the bar's unit) as they go."""

    def __init__(self, total: int, on_progress: OnProgress | None) -> None:
        self.total_kib = -(-total // 1024)
        self.done = 0
        self.on_progress = on_progress

    def __call__(self, count: int) -> None:
        self.done += count
        if self.on_progress is not None:
            self.on_progress(-(-self.done // 1024), self.total_kib)


class SiteClient:
    """One site, one token: uploads and reads of its API."""

    def __init__(
        self, site: str, token: str, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        import httpx

        self.base = site_base(site)
        self._http = httpx.Client(
            headers={
                "Authorization": f"Token {token}",
                "Accept": "application/json",
                "User-Agent": f"{HARNESS_NAME}/{HARNESS_VERSION}",
            },
            follow_redirects=False,  # a redirect could take the token elsewhere
            transport=transport,
        )

    def __enter__(self) -> SiteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def url(self, where: str) -> httpx.URL:
        """``where`` (a path the site answered with, or an API path relative to the
        site) as an address on this site; ``SiteFailure`` when it points elsewhere."""
        target = self.base.join(where)
        if (target.scheme, target.host, target.port) != (
            self.base.scheme,
            self.base.host,
            self.base.port,
        ):
            raise SiteFailure(
                f"the site pointed at another address ({printable(str(target), 200)}); "
                "not followed with your token"
            )
        return target

    def upload(
        self, where: str, parts: Sequence[Part], on_progress: OnProgress | None = None
    ) -> tuple[int, dict[str, Any]]:
        """POST ``parts`` as multipart/form-data to ``where``: (HTTP status, answer)."""
        url = self.url(where)
        with ExitStack() as stack:
            sizes = sum(part.path.stat().st_size for part in parts)
            tally = _Tally(sizes, on_progress)
            files = [
                (
                    part.field,
                    (
                        part.path.name,
                        stack.enter_context(_Counted(part.path, tally)),
                        "application/octet-stream",
                    ),
                )
                for part in parts
            ]
            if on_progress is not None:
                on_progress(0, tally.total_kib)
            response = self._send("POST", url, files=files, timeout=_timeout(UPLOAD_TIMEOUT))
        return response.status_code, _answer(response)

    def read(self, where: str) -> dict[str, Any]:
        """GET ``where`` (a URL the site answered with): its JSON object."""
        return _answer(self._send("GET", self.url(where), timeout=_timeout(READ_TIMEOUT)))

    def _send(self, method: str, url: httpx.URL, **options: Any) -> httpx.Response:
        import httpx

        try:
            return self._http.request(method, url, **options)
        except httpx.TimeoutException as exc:
            raise SiteFailure(f"{self.base} did not answer in time ({_said(exc)})") from None
        except httpx.TransportError as exc:
            raise SiteFailure(f"could not reach {self.base}: {_said(exc)}") from None


def _timeout(seconds: dict[str, float]) -> httpx.Timeout:
    import httpx

    return httpx.Timeout(**seconds)


def _said(exc: Exception) -> str:
    return printable(str(exc) or type(exc).__name__, 300)


def _answer(response: httpx.Response) -> dict[str, Any]:
    """A 2xx's JSON object, or the refusal or failure the answer says."""
    status = response.status_code
    where = f"{response.request.method} {response.request.url.path}"
    if 300 <= status < 400:
        raise Refused(
            status,
            "redirect",
            f"{where} was answered with a redirect to "
            f"{printable(response.headers.get('location', '?'), 200)}: give that site's "
            "address as --site (the token is not sent on to another address)",
        )
    body = _json(response)
    envelope = body.get("error") if isinstance(body, dict) else None
    if isinstance(envelope, dict):
        code = printable(str(envelope.get("code", "error")), 100)
        message = printable(str(envelope.get("message", "")))
    else:
        code, message = "", ""
    if 400 <= status < 500:
        if not code:
            raise Refused(
                status,
                f"http_{status}",
                f"{where} answered HTTP {status} {printable(response.reason_phrase, 100)}, "
                "not in the site's API's words: is --site the site's address?",
            )
        raise Refused(status, code, message)
    if status >= 500 or not (200 <= status < 300):
        said = f"{code}: {message}" if code else printable(response.reason_phrase, 100)
        raise SiteFailure(f"the site failed on {where} (HTTP {status}, {said})")
    if not isinstance(body, dict):
        raise SiteFailure(f"the site's answer to {where} is not the API's JSON object")
    return body


def _json(response: httpx.Response) -> object:
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None
