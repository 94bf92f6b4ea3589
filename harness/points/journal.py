"""Paid work saved as it arrives. A run of ``points answer`` or ``points judge`` appends
one JSON line per finished call to a journal; the journal's first line says what run it
belongs to (model, endpoint, suite or answer set). Started again with ``--resume``, the
same run takes every finished call from the journal and makes only the rest; a journal
of another run is refused rather than mixed in. The journal is removed once the output
is written.

Where the lines are kept is the journal's store: the command line keeps them in a file
beside its output (``FileStore``), the site in database rows, one per paid call, so that
a worker on any machine resumes another's job. A store hands back only whole lines: a
file's torn last line (the process died mid-write) is dropped, and nothing before it is
lost, since every line is flushed to disk when written.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol

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


class JournalStore(Protocol):
    """Where a journal's lines are kept. ``str()`` names it in messages."""

    def lines(self) -> list[str] | None:
        """Every whole line kept, the header first; None when nothing is kept."""

    def start(self, line: str) -> None:
        """Begin an empty journal with its header line."""

    def append(self, line: str) -> None:
        """Keep one more line, durably, before returning."""

    def remove(self) -> None:
        """The journal has served its purpose: drop every line."""

    def close(self) -> None:
        """Release what the store holds open; the lines stay."""


class FileStore:
    """A journal's lines in one file, flushed to disk line by line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None
        self._whole: int | None = None  # bytes of whole lines, where a torn tail follows

    def __str__(self) -> str:
        return str(self.path)

    def lines(self) -> list[str] | None:
        """Every whole line. A torn tail (a line the process died writing, whatever it
        broke) is cut off the file before the next line is appended, so the lines stay
        whole; a file that is never appended to is left as it was."""
        if not self.path.exists():
            return None
        data = self.path.read_bytes()
        kept: list[str] = []
        good = 0
        for piece in data.split(b"\n")[:-1]:  # the last piece has no newline: torn or empty
            try:
                json.loads(piece.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                break
            kept.append(piece.decode("utf-8") + "\n")
            good += len(piece) + 1
        self._whole = good if good < len(data) else None
        return kept

    def start(self, line: str) -> None:
        self.path.write_text(line, encoding="ascii")

    def append(self, line: str) -> None:
        if self._file is None:
            if self._whole is not None:
                with self.path.open("r+b") as file:
                    file.truncate(self._whole)
            self._file = self.path.open("a", encoding="ascii")
        self._file.write(line)
        self._file.flush()
        os.fsync(self._file.fileno())

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Journal:
    """A run's finished paid calls, by key. ``store`` is a ``JournalStore``, or the path
    of a journal file."""

    def __init__(self, store: JournalStore | Path, header: dict[str, Any], resume: bool) -> None:
        self.store: JournalStore = FileStore(store) if isinstance(store, Path) else store
        self.done: dict[str, Any] = {}
        self._lock = threading.Lock()
        wanted = json.loads(_line(header))
        lines = self.store.lines()
        if lines is None:
            self.store.start(_line(wanted))
        elif not resume:
            raise JournalError(
                f"{self.store} holds an unfinished run's paid work: pass --resume to continue "
                "it, or remove the file to start again"
            )
        else:
            self._load(lines, wanted)

    def _load(self, lines: list[str], wanted: dict[str, Any]) -> None:
        if not lines:
            raise JournalError(f"{self.store} is not a journal: remove it to start this run")
        if json.loads(lines[0]) != wanted:
            raise JournalError(
                f"{self.store} belongs to another run (its model, endpoint, suite or "
                "input differs): remove it to start this one"
            )
        for line in lines[1:]:
            entry = json.loads(line)
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                break
            self.done[entry[0]] = entry[1]

    def get(self, key: str) -> Any:
        with self._lock:
            return self.done.get(key)

    def put(self, key: str, value: Any) -> None:
        line = _line([key, value])
        with self._lock:
            self.done[key] = json.loads(line)[1]
            self.store.append(line)

    def finish(self) -> None:
        """The output is written: the journal has served its purpose."""
        self.store.remove()

    def close(self) -> None:
        self.store.close()
