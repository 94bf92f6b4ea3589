"""Paid work saved as it arrives. A run of ``points answer`` or ``points judge`` appends
one JSON line per finished call to a journal beside its output; the journal's first line
says what run it belongs to (model, endpoint, suite or answer set). Started again with
``--resume``, the same run takes every finished call from the journal and makes only
the rest; a journal of another run is refused rather than mixed in. The journal is
removed once the output is written. A torn last line (the process died mid-write) is
dropped; nothing before it is lost, since every line is flushed to disk when written.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from harness import canonical


class JournalError(ValueError):
    """A journal that cannot be used for this run."""


def _line(value: Any) -> str:
    """One journal line: canonical values, every non-ASCII character escaped, so no
    character inside a value can be read as a line break."""
    return json.dumps(json.loads(canonical.dumps(value)), ensure_ascii=True, sort_keys=True) + "\n"


def journal_path(out: str | os.PathLike[str]) -> Path:
    target = Path(out)
    return target.with_name(f".{target.name}.journal.jsonl")


class Journal:
    def __init__(self, path: Path, header: dict[str, Any], resume: bool) -> None:
        self.path = path
        self.done: dict[str, Any] = {}
        self._lock = threading.Lock()
        wanted = json.loads(_line(header))
        if path.exists():
            if not resume:
                raise JournalError(
                    f"{path} holds an unfinished run's paid work: pass --resume to continue "
                    "it, or remove the file to start again"
                )
            self._load(wanted)
        else:
            path.write_text(_line(wanted), encoding="ascii")
        self._file = path.open("a", encoding="ascii")

    def _load(self, wanted: dict[str, Any]) -> None:
        """Take back every whole line; cut a torn tail (a line the process died writing,
        whatever it broke) off the file, so the lines appended next stay whole."""
        data = self.path.read_bytes()
        lines, good = data.split(b"\n"), 0
        entries = []
        for n, line in enumerate(lines[:-1]):  # the last piece has no newline: torn or empty
            try:
                entry = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                break
            entries.append(entry)
            good += len(line) + 1
            if n == 0 and entry != wanted:
                raise JournalError(
                    f"{self.path} belongs to another run (its model, endpoint, suite or "
                    "input differs): remove it to start this one"
                )
        if not entries:
            raise JournalError(f"{self.path} is not a journal: remove it to start this run")
        for entry in entries[1:]:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                break
            self.done[entry[0]] = entry[1]
        if good < len(data):
            with self.path.open("r+b") as file:
                file.truncate(good)

    def get(self, key: str) -> Any:
        with self._lock:
            return self.done.get(key)

    def put(self, key: str, value: Any) -> None:
        line = _line([key, value])
        with self._lock:
            self.done[key] = json.loads(line)[1]
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())

    def finish(self) -> None:
        """The output is written: the journal has served its purpose."""
        self._file.close()
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        self._file.close()
