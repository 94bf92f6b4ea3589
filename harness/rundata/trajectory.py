"""The trajectory: one canonical JSON line per event, hashed as it is written.

It carries no wall-clock time, so the same run writes the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from json.encoder import encode_basestring as _string
from pathlib import Path
from typing import IO, Any

from harness import canonical

_MARK = "\x00rows\x00"
_MARK_JSON = canonical.line(_MARK)


def served_row_text(stored: str, known_at: str, source: str) -> str:
    """A stored canonical row line with ``known_at`` and ``known_at_source`` added in
    their sorted place: after ``issuer``, right before ``partition_date`` (a key every
    row has; inside a JSON string a quote is escaped, so the first match is the key)."""
    cut = stored.index(',"partition_date":')
    extra = ',"known_at":' + _string(known_at) + ',"known_at_source":' + _string(source)
    return stored[:cut] + extra + stored[cut:]


class TrajectoryWriter:
    """Writes to ``<path>.partial`` and moves it into place on :meth:`close`, so a
    trajectory file that exists is a whole one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._partial = self.path.with_name(self.path.name + ".partial")
        self._handle: IO[bytes] = open(self._partial, "wb")  # noqa: SIM115 - closed in close()
        self._hash = hashlib.sha256()
        self.events = 0

    @property
    def partial_path(self) -> Path:
        return self._partial

    def write(self, kind: str, **fields: Any) -> None:
        self._emit(canonical.line({"event": kind, "seq": self.events, **fields}))

    def write_tool_call(
        self, result: dict[str, Any], row_texts: list[str] | None, **fields: Any
    ) -> None:
        """A tool call whose result rows are spliced in from their stored canonical text.

        Serialising every served row again dominated a run's cost; the release already
        holds each row as a canonical line, so the event is written with a marker where
        the rows go and the marker is replaced by those lines. The bytes are the same as
        serialising the rows would give (tests hold this); if the marker is not found
        exactly once (an agent could echo it in its arguments), the slow path is taken.
        """
        if row_texts is not None and "rows" in result:
            text = canonical.line(
                {
                    "event": "tool_call",
                    "seq": self.events,
                    **fields,
                    "result": {**result, "rows": _MARK},
                }
            )
            if text.count(_MARK_JSON) == 1:
                self._emit(text.replace(_MARK_JSON, "[" + ",".join(row_texts) + "]", 1))
                return
        self.write("tool_call", **fields, result=result)

    def checkpoint(self) -> tuple[int, Any, int]:
        """A point to roll back to (a retried cell must leave no trace)."""
        self._handle.flush()
        return self._handle.tell(), self._hash.copy(), self.events

    def events_since(
        self, mark: tuple[int, Any, int], kinds: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        """The events of ``kinds`` written since ``mark``, read back before a rollback
        (what a failed attempt did that must outlive it)."""
        import json

        self._handle.flush()
        wanted = tuple(f'"event":"{kind}"'.encode() for kind in kinds)
        found: list[dict[str, Any]] = []
        with open(self._partial, "rb") as handle:
            handle.seek(mark[0])
            for line in handle:
                if any(w in line for w in wanted):
                    event = json.loads(line)
                    if event.get("event") in kinds:
                        found.append(event)
        return found

    def rollback(self, mark: tuple[int, Any, int]) -> None:
        offset, digest, events = mark
        self._handle.flush()
        self._handle.truncate(offset)
        self._handle.seek(offset)
        self._hash, self.events = digest.copy(), events

    def _emit(self, text: str) -> None:
        data = (text + "\n").encode()
        self._handle.write(data)
        self._hash.update(data)
        self.events += 1

    def close(self) -> str:
        """Close the file and return ``sha256:<hex>`` of everything written."""
        if not self._handle.closed:
            self._handle.close()
            os.replace(self._partial, self.path)
        return "sha256:" + self._hash.hexdigest()

    def discard(self) -> None:
        """Close and delete what was written (the run did not finish)."""
        if not self._handle.closed:
            self._handle.close()
        self._partial.unlink(missing_ok=True)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file, at OpenSSL's speed (hashlib reads in large blocks)."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def first_event(path: str | os.PathLike[str]) -> dict[str, Any]:
    import json

    with open(path, "rb") as handle:
        line = handle.readline()
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("first trajectory line is not an object")
    return value
