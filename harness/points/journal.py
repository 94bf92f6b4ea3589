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


def journal_path(out: str | os.PathLike[str]) -> Path:
    target = Path(out)
    return target.with_name(f".{target.name}.journal.jsonl")


class Journal:
    def __init__(self, path: Path, header: dict[str, Any], resume: bool) -> None:
        self.path = path
        self.done: dict[str, Any] = {}
        self._lock = threading.Lock()
        wanted = json.loads(canonical.dumps(header))
        if path.exists():
            if not resume:
                raise JournalError(
                    f"{path} holds an unfinished run's paid work: pass --resume to continue "
                    "it, or remove the file to start again"
                )
            self._load(wanted)
        else:
            path.write_text(canonical.dumps(wanted) + "\n", encoding="utf-8")
        self._file = path.open("a", encoding="utf-8")

    def _load(self, wanted: dict[str, Any]) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            stated = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            stated = None
        if stated != wanted:
            raise JournalError(
                f"{self.path} belongs to another run (its model, endpoint, suite or input "
                "differs): remove it to start this one"
            )
        for line in lines[1:]:
            try:
                key, value = json.loads(line)
            except (json.JSONDecodeError, ValueError, TypeError):
                break  # a torn last line
            self.done[key] = value

    def get(self, key: str) -> Any:
        with self._lock:
            return self.done.get(key)

    def put(self, key: str, value: Any) -> None:
        line = canonical.dumps([key, value]) + "\n"
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
