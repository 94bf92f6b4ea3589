"""A point set's archive (zip or tar, gzip or not) unpacked into a folder, refusing
anything that is not a plain file or folder at a plain relative path.

Every member is checked before a byte is written: absolute paths, ``..``, backslashes,
NUL, symlinks, hard links, devices and FIFOs are refused, as are more members, or more
bytes once unpacked, than the caps allow (a member's size is counted as it is written, not
as its header claims). A single top-level folder holding everything is stripped, so an
archive of ``points/`` and one of its contents unpack alike.
"""

from __future__ import annotations

import posixpath
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

CHUNK = 64 * 1024


class ArchiveError(ValueError):
    """An archive refused, with the member and the rule it breaks."""


@dataclass(frozen=True)
class Limits:
    members: int
    unpacked_bytes: int


@dataclass(frozen=True)
class _Member:
    name: str  # normalised, relative, '/'-separated
    is_dir: bool
    size: int


def _normalised(raw: str) -> str:
    if "\x00" in raw:
        raise ArchiveError(f"member {raw!r}: a NUL in its name")
    if "\\" in raw:
        raise ArchiveError(f"member {raw!r}: a backslash in its name")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ArchiveError(f"member {raw!r}: an absolute path")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"member {raw!r}: '..' in its path")
    if not parts:
        raise ArchiveError(f"member {raw!r}: an empty path")
    return posixpath.join(*parts)


def _tar_members(archive: tarfile.TarFile) -> list[tuple[_Member, tarfile.TarInfo]]:
    found = []
    for info in archive.getmembers():
        if info.issym() or info.islnk():
            raise ArchiveError(f"member {info.name!r}: a link (symbolic or hard)")
        if not (info.isfile() or info.isdir()):
            raise ArchiveError(f"member {info.name!r}: a device, FIFO or other special file")
        found.append((_Member(_normalised(info.name), info.isdir(), info.size), info))
    return found


def _zip_members(archive: zipfile.ZipFile) -> list[tuple[_Member, zipfile.ZipInfo]]:
    found = []
    for info in archive.infolist():
        mode = info.external_attr >> 16  # Unix mode, if the writer recorded one
        kind = stat.S_IFMT(mode)  # 0: no type recorded (a plain file or folder)
        if kind and stat.S_ISLNK(mode):
            raise ArchiveError(f"member {info.filename!r}: a symbolic link")
        if kind and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ArchiveError(f"member {info.filename!r}: a device, FIFO or other special file")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"member {info.filename!r}: encrypted")
        member = _Member(_normalised(info.filename), info.is_dir(), info.file_size)
        found.append((member, info))
    return found


def _checked(members: list[_Member], limits: Limits) -> str:
    """The prefix to strip (a single top folder, or ''), once every rule holds."""
    if len(members) > limits.members:
        raise ArchiveError(f"more than {limits.members} members")
    if sum(m.size for m in members if not m.is_dir) > limits.unpacked_bytes:
        raise ArchiveError(f"more than {limits.unpacked_bytes} bytes once unpacked")
    files = [m.name for m in members if not m.is_dir]
    if not files:
        raise ArchiveError("no files")
    seen: set[str] = set()
    for name in files:
        if name.lower() in seen:
            raise ArchiveError(f"member {name!r}: appears twice (letter case aside)")
        seen.add(name.lower())
    dirs = {m.name for m in members if m.is_dir}
    if dirs & set(files):
        raise ArchiveError("a member is both a file and a folder")
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        return tops.pop() + "/"
    return ""


def _write(source: IO[bytes], target: Path, budget: list[int], name: str) -> None:
    with open(target, "xb") as out:
        while chunk := source.read(CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise ArchiveError(f"member {name!r}: unpacks past the size cap")
            out.write(chunk)


def _place(root: Path, name: str, prefix: str) -> Path | None:
    relative = name[len(prefix) :] if prefix and name.startswith(prefix) else name
    if not relative or relative == prefix.rstrip("/"):
        return None
    target = root.joinpath(*relative.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


@contextmanager
def _opened(path: Path) -> Iterator[tarfile.TarFile | zipfile.ZipFile]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zipped:
            yield zipped
        return
    if not tarfile.is_tarfile(path):
        raise ArchiveError("neither a zip nor a tar archive (plain or gzip)")
    with tarfile.open(path, "r:*") as tarred:
        yield tarred


def _members(
    archive: tarfile.TarFile | zipfile.ZipFile,
) -> list[tuple[_Member, Callable[[], IO[bytes] | None]]]:
    """Every member, checked, with how to open its bytes."""
    if isinstance(archive, zipfile.ZipFile):
        return [(m, partial(archive.open, info)) for m, info in _zip_members(archive)]
    return [(m, partial(archive.extractfile, info)) for m, info in _tar_members(archive)]


def unpack(path: Path, into: Path, limits: Limits) -> None:
    """Unpack the archive at ``path`` into the empty folder ``into``."""
    budget = [limits.unpacked_bytes]
    try:
        with _opened(path) as archive:
            members = _members(archive)
            prefix = _checked([m for m, _ in members], limits)
            for member, opened in members:
                target = _place(into, member.name, prefix)
                if target is None or member.is_dir:
                    continue
                source = opened()
                if source is None:
                    raise ArchiveError(f"member {member.name!r}: unreadable")
                with source:
                    _write(source, target, budget, member.name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, NotImplementedError, zlib.error) as exc:
        raise ArchiveError(f"a damaged archive ({exc})") from None
    except FileExistsError as exc:
        raise ArchiveError(f"member {exc.filename!r}: written twice") from None
