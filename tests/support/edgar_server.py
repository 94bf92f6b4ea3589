"""A loopback HTTP server laid out as the SEC's EDGAR archive, serving the real files of
``../shared/data/edgar/``: daily indexes under ``Archives/edgar/daily-index/YYYY/QTRn/``
and filing headers under ``Archives/edgar/data/<cik>/<accession without dashes>/``. It
keeps every request it was sent (path and User-Agent), so a test sees what the fetcher
asked for and how it named itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Edgar:
    """What the server serves (path -> bytes, or path -> a URL it redirects to), and
    the requests it received."""

    files: dict[str, bytes] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    seen: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent)
    url: str = ""

    def add_index(self, path: Path, day: str) -> None:
        """A daily index file at the SEC's place for ``day`` (YYYYMMDD)."""
        quarter = (int(day[4:6]) - 1) // 3 + 1
        self.files[f"/Archives/edgar/daily-index/{day[:4]}/QTR{quarter}/{path.name}"] = (
            path.read_bytes()
        )

    def add_header(self, path: Path, cik: str) -> None:
        accession = path.name.removesuffix(".hdr.sgml")
        folder = f"/Archives/edgar/data/{int(cik)}/{accession.replace('-', '')}"
        self.files[f"{folder}/{path.name}"] = path.read_bytes()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        edgar: Edgar = self.server.edgar  # type: ignore[attr-defined]
        edgar.seen.append((self.path, self.headers.get("User-Agent", "")))
        body, status = b"", 404
        if self.path in edgar.redirects:
            status = 302
        elif self.path in edgar.files:
            body, status = edgar.files[self.path], 200
        self.send_response(status)
        if status == 302:
            self.send_header("Location", edgar.redirects[self.path])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def edgar_server() -> Iterator[Edgar]:
    edgar = Edgar()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.edgar = edgar  # type: ignore[attr-defined]
    edgar.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield edgar
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
