"""The on-disk form of a release, and the one function that writes it.

A release is a folder::

    manifest.json    name, window, forms, row counts, each file's sha256 and size,
                     provenance, and content_digest over the canonical manifest
    index.json       one segment per (partition_date, form): row count and, per arm,
                     the byte offset, length and sha256 of that segment's lines
    main.jsonl  redacted.jsonl  shifted.jsonl
                     one canonical JSON line per filing, in the same order in all
                     three arms (the n-th line of each is one filing: the join between
                     arms), sorted by the main arm's (partition_date, form, row_key);
                     each arm has its own row keys (see ``harness.release.keys``)

Segments let a run read only its window and forms, and still check every byte it
reads against a hash chained to the manifest's content_digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from harness import canonical
from harness.progress import OnProgress
from harness.release.arms import SHIFT_YEARS, derive
from harness.vocabulary import ARMS

FORMAT = "pit-release/1"
MANIFEST = "manifest.json"
INDEX = "index.json"
ROW_FIELDS = (
    "row_key",
    "accession",
    "form",
    "cik",
    "issuer",
    "ticker",
    "title",
    "partition_date",
    "published_at",
    "acceptance_at",
    "filename",
)


class ReleaseError(ValueError):
    """A release that cannot be read or does not match its manifest."""


def arm_file(arm: str) -> str:
    return f"{arm}.jsonl"


def sort_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (row["partition_date"], row["form"], row["row_key"])


def manifest_digest(manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "content_digest"}
    return canonical.digest(body)


def _check_stamp(row: dict[str, Any]) -> None:
    """``acceptance_at`` is an instant: ISO 8601 with its UTC offset, or null. A naive
    stamp would be read in whatever zone the reader is in."""
    stamp = row.get("acceptance_at")
    if stamp is None:
        return
    try:
        parsed = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ReleaseError(
            f"row {row.get('row_key')}: acceptance_at {stamp!r} must be ISO 8601 with a UTC "
            "offset (a naive stamp names no instant)"
        )


def keyed_rows(rows: Iterable[dict[str, Any]], row_key_secret: bytes) -> list[dict[str, Any]]:
    """Main-arm rows keyed with ``row_key_secret``, checked, in release order."""
    from harness.release.keys import row_key

    main = sorted(
        ({**r, "row_key": row_key(row_key_secret, str(r.get("accession")))} for r in rows),
        key=sort_key,
    )
    keys = [r["row_key"] for r in main]
    if len(set(keys)) != len(keys):
        dup = next(k for k, n in Counter(keys).items() if n > 1)
        raise ReleaseError(f"row_key {dup} appears more than once")
    for row in main:
        missing = [f for f in ROW_FIELDS if f not in row]
        if missing:
            raise ReleaseError(f"row {row.get('row_key')}: missing fields {missing}")
        _check_stamp(row)
    return main


@dataclass
class ArmFiles:
    """The three arm files being written: open handles, running hashes and sizes.

    ``prefix`` (a release's root) starts each file with that release's arm file, copied
    byte for byte and hashed as it is copied, so a new version's files begin with its
    parent's bytes and its segments continue at the parent's offsets.
    """

    root: Path
    handles: dict[str, BinaryIO] = field(default_factory=dict)
    hashes: dict[str, Any] = field(default_factory=dict)
    offsets: dict[str, int] = field(default_factory=dict)

    def open(self, prefix: Path | None = None) -> ArmFiles:
        self.root.mkdir(parents=True, exist_ok=True)
        for arm in ARMS:
            self.handles[arm] = open(self.root / arm_file(arm), "wb")  # noqa: SIM115
            self.hashes[arm] = hashlib.sha256()
            self.offsets[arm] = 0
            if prefix is not None:
                with open(prefix / arm_file(arm), "rb") as source:
                    while chunk := source.read(1 << 20):
                        self._write(arm, chunk)
        return self

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()

    def _write(self, arm: str, data: bytes) -> None:
        self.handles[arm].write(data)
        self.hashes[arm].update(data)
        self.offsets[arm] += len(data)

    def write_segments(
        self,
        main: list[dict[str, Any]],
        row_key_secret: bytes,
        on_progress: OnProgress | None = None,
    ) -> list[dict[str, Any]]:
        """Write ``main`` (keyed, in release order) as one segment per (date, form) on
        every arm; return the segments' index entries."""
        from harness.release.keys import row_key

        segments: list[dict[str, Any]] = []
        i = 0
        while i < len(main):
            day, form = main[i]["partition_date"], main[i]["form"]
            j = i
            chunks: dict[str, list[bytes]] = {arm: [] for arm in ARMS}
            while j < len(main) and (main[j]["partition_date"], main[j]["form"]) == (day, form):
                accession = main[j]["accession"]
                for arm, arm_row in derive(main[j]).items():
                    if arm != "main":
                        arm_row["row_key"] = row_key(row_key_secret, accession, arm)
                    chunks[arm].append(canonical.line(arm_row).encode() + b"\n")
                j += 1
            segment: dict[str, Any] = {"date": day, "form": form, "rows": j - i}
            for arm in ARMS:
                data = b"".join(chunks[arm])
                segment[arm] = [self.offsets[arm], len(data), hashlib.sha256(data).hexdigest()]
                self._write(arm, data)
            segments.append(segment)
            i = j
            if on_progress is not None:
                on_progress(i, len(main))
        return segments

    def finish(self, segments: list[dict[str, Any]], rows: int) -> dict[str, Any]:
        """Write the index; return the manifest's ``files``."""
        index_bytes = canonical.line({"format": FORMAT, "segments": segments}).encode()
        (self.root / INDEX).write_bytes(index_bytes)
        files: dict[str, Any] = {
            arm_file(arm): {
                "bytes": self.offsets[arm],
                "rows": rows,
                "sha256": self.hashes[arm].hexdigest(),
            }
            for arm in ARMS
        }
        files[INDEX] = {
            "bytes": len(index_bytes),
            "sha256": hashlib.sha256(index_bytes).hexdigest(),
        }
        return files


def write_manifest(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Seal ``manifest`` with its content digest and write it; return it."""
    manifest["content_digest"] = manifest_digest(manifest)
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def write_release(
    out: str | os.PathLike[str],
    *,
    name: str,
    rows: Iterable[dict[str, Any]],
    window: tuple[str, str],
    provenance: str,
    source: dict[str, Any],
    row_key_secret: bytes,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """Write a release from main-arm rows; return its manifest.

    ``source`` records how the rows were made (synthetic seed, EDGAR index files);
    it is part of the manifest and therefore of the content digest. Every arm's row keys
    are made here from ``row_key_secret`` and each row's accession. ``on_progress`` hears
    (rows written, rows) after each segment.
    """
    main = keyed_rows(rows, row_key_secret)
    root = Path(out)
    arms = ArmFiles(root).open()
    try:
        segments = arms.write_segments(main, row_key_secret, on_progress)
    finally:
        arms.close()
    files = arms.finish(segments, len(main))
    by_form = Counter(r["form"] for r in main)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "window": {"start": window[0], "end": window[1]},
        "forms": sorted(by_form),
        "arms": list(ARMS),
        "shift_years": SHIFT_YEARS,
        "row_counts": {
            "total": len(main),
            "by_form": dict(sorted(by_form.items())),
            "acceptance_stamped": sum(1 for r in main if r.get("acceptance_at")),
        },
        "files": files,
        "provenance": provenance,
        "source": source,
    }
    return write_manifest(root, manifest)
