"""Load a release, or the part of it a run needs, and refuse one that was altered."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from harness.release.store import FORMAT, INDEX, MANIFEST, ReleaseError, arm_file, manifest_digest
from harness.vocabulary import ARMS

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _parse_day(value: str | date | None, what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        raise ReleaseError(f"{what} {value!r} is a datetime; give a date (YYYY-MM-DD)")
    if isinstance(value, date):
        return value.isoformat()
    try:
        if not isinstance(value, str) or not _DAY.fullmatch(value):
            raise ValueError
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise ReleaseError(f"{what} {value!r} is not a date (YYYY-MM-DD)") from None


_KEY_AT = '"row_key":"'


def _row_key(text: str) -> str:
    """A stored line's row key, found without parsing the line: canonical JSON escapes
    every quote inside a string, so the first unescaped ``"row_key":"`` is the key."""
    at = text.find(_KEY_AT)
    if at < 0:
        raise ReleaseError("a row without a row_key")
    start = at + len(_KEY_AT)
    return text[start : text.index('"', start)]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ReleaseError(f"{path.name}: missing from release {path.parent}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReleaseError(f"{path.name}: not valid JSON ({exc})") from None


@dataclass
class Bundle:
    """A release narrowed to ``forms`` and the partition dates ``start..end``.

    ``load`` checks the manifest against its content digest, the index and every
    file's size against the manifest, and every segment it reads against the
    segment hash in the index. Bytes it does not read are checked by :meth:`check`
    (what ``pit-harness verify --bundle`` runs), not on every load.
    """

    root: Path
    manifest: dict[str, Any]
    forms: tuple[str, ...]
    start: str
    end: str
    segments: list[dict[str, Any]]
    _rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)
    _texts: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _keys: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        forms: list[str] | tuple[str, ...] | None = None,
        start: str | date | None = None,
        end: str | date | None = None,
    ) -> Bundle:
        root = Path(path)
        if not root.is_dir():
            raise ReleaseError(f"release {root} is not a folder")
        manifest = _read_json(root / MANIFEST)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ReleaseError(f"{MANIFEST}: not a {FORMAT} manifest")
        if manifest_digest(manifest) != manifest.get("content_digest"):
            raise ReleaseError(f"{MANIFEST}: content_digest does not match the manifest's contents")
        for name, meta in manifest["files"].items():
            try:
                size = (root / name).stat().st_size
            except FileNotFoundError:
                raise ReleaseError(f"{name}: missing from release {root}") from None
            if size != meta["bytes"]:
                raise ReleaseError(
                    f"{name}: {size} bytes on disk, the manifest says {meta['bytes']}"
                )
        index_bytes = (root / INDEX).read_bytes()
        if hashlib.sha256(index_bytes).hexdigest() != manifest["files"][INDEX]["sha256"]:
            raise ReleaseError(f"{INDEX}: sha256 does not match the manifest")
        index = json.loads(index_bytes)

        known_forms = manifest["forms"]
        wanted = tuple(sorted(set(forms))) if forms else tuple(known_forms)
        unknown = [f for f in wanted if f not in known_forms]
        if unknown:
            raise ReleaseError(
                f"form(s) {', '.join(unknown)} not in release {manifest['name']} "
                f"(it has {', '.join(known_forms)})"
            )
        lo = _parse_day(start, "start") or manifest["window"]["start"]
        hi = _parse_day(end, "end") or manifest["window"]["end"]
        if lo > hi:
            raise ReleaseError(f"start {lo} is after end {hi}")
        window = manifest["window"]
        if lo < window["start"] or hi > window["end"]:
            raise ReleaseError(
                f"window {lo}..{hi} is not inside release {manifest['name']} "
                f"({window['start']}..{window['end']}): a run may not claim days it has no rows for"
            )
        chosen = [s for s in index["segments"] if s["form"] in wanted and lo <= s["date"] <= hi]
        return cls(root, manifest, wanted, lo, hi, chosen)

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def content_digest(self) -> str:
        return str(self.manifest["content_digest"])

    @property
    def row_count(self) -> int:
        """Rows in the window, from the index (nothing read)."""
        return sum(int(s["rows"]) for s in self.segments)

    def read_lines(self, arm: str) -> list[bytes]:
        """The window's raw lines of one arm, each segment checked against the index."""
        lines: list[bytes] = []
        for segment in self.iter_segments(arm):
            lines.extend(segment)
        return lines

    def iter_segments(self, arm: str) -> Iterator[list[bytes]]:
        """The window's raw lines of one arm, a segment at a time, each checked against
        the index before it is handed out: memory holds one segment."""
        if arm not in ARMS:
            raise ReleaseError(f"unknown arm {arm!r} (arms: {', '.join(ARMS)})")
        name = arm_file(arm)
        with open(self.root / name, "rb") as handle:
            for seg in self.segments:
                offset, length, sha = seg[arm]
                handle.seek(offset)
                data = handle.read(length)
                if hashlib.sha256(data).hexdigest() != sha:
                    raise ReleaseError(
                        f"{name}: segment {seg['date']} {seg['form']} does not match its hash "
                        "in index.json (the file was altered)"
                    )
                yield data.splitlines()

    def texts(self, arm: str) -> list[str]:
        """Each row's canonical JSON line as stored (what the trajectory splices in)."""
        if arm not in self._texts:
            texts = [line.decode("utf-8") for line in self.read_lines(arm)]
            if len(texts) != self.row_count:
                raise ReleaseError(f"{arm_file(arm)}: rows do not line up with index.json")
            self._texts[arm] = texts
        return self._texts[arm]

    def row_keys(self, arm: str = "main") -> list[str]:
        """One arm's row keys in release order (the n-th key of every arm names one
        filing: the join between arms), read without keeping parsed rows."""
        if arm not in self._keys:
            if arm in self._rows:
                self._keys[arm] = [r["row_key"] for r in self._rows[arm]]
            else:
                self._keys[arm] = [_row_key(text) for text in self.texts(arm)]
            if len(set(self._keys[arm])) != len(self._keys[arm]):
                raise ReleaseError(f"{arm_file(arm)}: a row key appears more than once")
        return self._keys[arm]

    def to_main(self, arm: str) -> dict[str, str]:
        """``arm``'s row key -> the main arm's key of the same filing."""
        return dict(zip(self.row_keys(arm), self.row_keys("main"), strict=True))

    def rows(self, arm: str) -> list[dict[str, Any]]:
        """Parsed rows of one arm, in release order (the same order in every arm)."""
        if arm not in self._rows:
            self._rows[arm] = [json.loads(line) for line in self.texts(arm)]
        return self._rows[arm]

    def release_rows(self, arm: str) -> None:
        """Drop an arm's lines and parsed rows (the runner moves arm by arm to bound
        memory); the next call for them reads and checks them again."""
        self.row_keys(arm)  # kept: the join between arms
        self._texts.pop(arm, None)
        self._rows.pop(arm, None)

    def check(self) -> list[str]:
        """Every file against the manifest; an empty list means the release is intact."""
        problems = []
        if manifest_digest(self.manifest) != self.content_digest:
            problems.append(f"{MANIFEST}: content_digest does not match the manifest's contents")
        for name, meta in sorted(self.manifest["files"].items()):
            try:
                with open(self.root / name, "rb") as handle:
                    got = hashlib.file_digest(handle, "sha256").hexdigest()
            except FileNotFoundError:
                problems.append(f"{name}: missing")
                continue
            if got != meta["sha256"]:
                problems.append(
                    f"{name}: sha256 {got} does not match the manifest's {meta['sha256']}"
                )
        return problems
