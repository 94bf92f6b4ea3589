"""A release from EDGAR's own index files, with acceptance stamps from headers.

Index rows carry the filing date only (``edgar_index`` reads the three kinds of index
file). The acceptance time, when the user has it, comes from filing headers or the SEC's
submissions JSON (``edgar_headers``), stored with the New York UTC offset of its day
rather than trusted as naive or UTC.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.progress import OnProgress
from harness.release.edgar_headers import Stamp, read_acceptance
from harness.release.edgar_index import read_bytes, read_index
from harness.release.keys import SCHEME
from harness.release.store import ReleaseError, write_release

PathArg = str | os.PathLike[str]


def parse_index(path: PathArg) -> list[dict[str, Any]]:
    """Every listing of a ``master``, ``form`` or ``company`` index file, in file order.

    Keys: cik (10 digits), issuer, form, date_filed (ISO), filename, accession,
    path_cik (the CIK in ``edgar/data/<cik>/``, 10 digits) and line.
    """
    return read_index(path).listings


# the name it had when master.idx was the only kind read
parse_master_index = parse_index


def parse_acceptance(path: PathArg) -> dict[str, str]:
    """Accession -> acceptance time (ISO, New York offset) from one file of headers or
    one submissions JSON."""
    found: dict[str, Stamp] = {}
    read_acceptance(path, found)
    return {accession: stamp.at for accession, stamp in found.items()}


def read_tickers(path: PathArg) -> dict[str, str]:
    """CIK -> ticker from a JSON object ``{cik: ticker}`` or the SEC's
    ``company_tickers.json`` (``{"0": {"cik_str": 320193, "ticker": "AAPL", ...}}``),
    where a CIK listed with several tickers keeps the first the file lists."""
    file = Path(path)
    _, data = read_bytes(file)
    try:
        raw = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise ReleaseError(f"{file}: not a JSON tickers file ({exc})") from None
    if not isinstance(raw, dict):
        raise ReleaseError(f"{file}: must hold a JSON object {{cik: ticker}}")
    tickers: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(value, dict):  # company_tickers.json
            cik, ticker = value.get("cik_str"), value.get("ticker")
            if not isinstance(cik, int | str) or not str(cik).isdigit() or not ticker:
                raise ReleaseError(
                    f"{file}, entry {key!r}: company_tickers.json entries carry cik_str "
                    "(digits) and ticker"
                )
            tickers.setdefault(f"{int(cik):010d}", str(ticker))
        elif isinstance(value, str):
            if not str(key).strip().isdigit():
                raise ReleaseError(f"{file}: key {key!r} is not a CIK (digits)")
            tickers.setdefault(f"{int(key):010d}", value)
        else:
            raise ReleaseError(f"{file}, entry {key!r}: a ticker is a string")
    return tickers


def _ticker(cik: str, tickers: Mapping[str, str] | None) -> str | None:
    if not tickers:
        return None
    value = (tickers.get(cik) or tickers.get(str(int(cik))) or "").strip()
    return value or None


def _rank(item: dict[str, Any], tickers: Mapping[str, str] | None) -> tuple[bool, bool]:
    return item["cik"] == item["path_cik"], _ticker(item["cik"], tickers) is not None


@dataclass(frozen=True)
class EdgarRows:
    """Main-arm rows (not yet keyed) read from index files, and what the manifest
    records of the files they came from."""

    rows: list[dict[str, Any]]
    index_files: list[dict[str, Any]]
    acceptance_files: list[dict[str, Any]]
    folded: int
    unmatched: int

    @property
    def stamped(self) -> int:
        return sum(1 for r in self.rows if r["acceptance_at"])

    def source(self) -> dict[str, Any]:
        return {
            "kind": "edgar-index",
            "row_keys": SCHEME,
            "index_files": self.index_files,
            "acceptance_files": self.acceptance_files,
            "folded_duplicate_listings": self.folded,
            "unmatched_acceptance": self.unmatched,
        }

    def provenance(self) -> str:
        return (
            f"Rows come from {len(self.index_files)} EDGAR index file(s) supplied by the user, "
            "one row per accession; titles are mechanical '<form> - <company> (<CIK>) (Filer)' "
            f"concatenations and carry no filing text; {self.stamped} of {len(self.rows)} rows "
            "carry acceptance stamps taken from user-supplied filing headers or submissions JSON"
        )


def edgar_rows(
    index_files: Sequence[PathArg],
    acceptance_files: Sequence[PathArg] = (),
    tickers: Mapping[str, str] | None = None,
) -> EdgarRows:
    """One row per accession found in ``index_files``, stamped from ``acceptance_files``.

    EDGAR lists a filing once per filer role (issuer and reporting owner of a Form 4,
    subject and filer of an SC 13G), and each listing's path names its own CIK. The row
    kept prefers a listing whose CIK is the one in its path, then one with a known ticker
    (the listed company rather than the insider), then the first seen.
    """
    if not index_files:
        raise ReleaseError("no index files given")
    chosen: dict[str, dict[str, Any]] = {}
    folded = 0
    index_meta = []
    for path in index_files:
        index = read_index(path)
        index_meta.append(index.describe())
        for item in index.listings:
            kept = chosen.get(item["accession"])
            if kept is not None:
                folded += 1
                if _rank(item, tickers) <= _rank(kept, tickers):
                    continue
            chosen[item["accession"]] = item
    if not chosen:
        raise ReleaseError(f"no filing rows in {', '.join(m['name'] for m in index_meta)}")

    stamps: dict[str, Stamp] = {}
    acceptance_meta = [read_acceptance(path, stamps) for path in acceptance_files]
    unmatched = sum(1 for acc in stamps if acc not in chosen)

    rows = []
    for acc, item in chosen.items():
        cik, form, issuer = item["cik"], item["form"], item["issuer"]
        stamp = stamps.get(acc)
        rows.append(
            {
                "row_key": "",  # keyed when written
                "accession": acc,
                "form": form,
                "cik": cik,
                "issuer": issuer,
                "ticker": _ticker(cik, tickers),
                "title": f"{form} - {issuer} ({cik}) (Filer)",
                "partition_date": item["date_filed"],
                "published_at": item["date_filed"],
                "acceptance_at": stamp.at if stamp else None,
                "filename": item["filename"],
            }
        )
    return EdgarRows(rows, index_meta, acceptance_meta, folded, unmatched)


def build_release(
    out: PathArg,
    *,
    index_files: Sequence[PathArg],
    acceptance_files: Sequence[PathArg] = (),
    name: str,
    row_key_secret: bytes | Callable[[], bytes],
    tickers: Mapping[str, str] | None = None,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """Write a release with one row per accession found in ``index_files`` (see
    :func:`edgar_rows`); return its manifest.

    Row keys are keyed with ``row_key_secret`` (see ``harness.release.keys``); given as a
    function, it is called only once every input has been read, so a bad input leaves
    nothing behind. ``on_progress`` hears (0, 0) while the files are read, then (rows
    written, rows).
    """
    if not index_files:
        raise ReleaseError("no index files given")
    if on_progress is not None:
        on_progress(0, 0)
    read = edgar_rows(index_files, acceptance_files, tickers)
    days = [r["partition_date"] for r in read.rows]
    secret = row_key_secret() if callable(row_key_secret) else row_key_secret
    return write_release(
        out,
        row_key_secret=secret,
        name=name,
        rows=read.rows,
        window=(min(days), max(days)),
        provenance=read.provenance(),
        source=read.source(),
        on_progress=on_progress,
    )
