"""A release's files as one tar archive, the same bytes every time: what a reader
downloads to run ``pit-harness verify --bundle`` on their own machine.

The archive holds one folder, ``release-<first 12 hex digits of the content digest>``,
with ``manifest.json`` and every file the manifest lists, read through Django's storage
API in name order. Every entry has the same owner (0, no names), mode 0644 and time (the
release window's last day, 00:00 UTC), so the archive is a function of the stored files
alone: its size and sha256 are computed once and shown beside the download. It is
written as it is read, a chunk at a time, never held whole in memory."""

from __future__ import annotations

import hashlib
import tarfile
from calendar import timegm
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from django.core.files.storage import default_storage

from pitweb.releases.models import Release

CHUNK = 1024 * 1024
BLOCK = tarfile.BLOCKSIZE
RECORD = tarfile.RECORDSIZE


class ArchiveDamaged(Exception):
    """A stored file is not the size it had when the archive began: storage changed
    under the archive (never expected: stored files are never rewritten)."""


@dataclass(frozen=True)
class ArchiveFacts:
    size: int
    sha256: str  # "sha256:<hex>"


def folder_name(release: Release) -> str:
    """The one folder the archive unpacks into (what ``--bundle`` names)."""
    return f"release-{release.digest_hex[:12]}"


def file_name(release: Release) -> str:
    return f"{folder_name(release)}.tar"


def _members(release: Release) -> list[str]:
    return ["manifest.json", *sorted(release.manifest["files"])]


def _header(release: Release, name: str, size: int) -> bytes:
    info = tarfile.TarInfo(f"{folder_name(release)}/{name}")
    info.size = size
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = timegm(date.fromisoformat(str(release.window_end)).timetuple())
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "strict")


def archive_chunks(release: Release) -> Iterator[bytes]:
    """The archive's bytes, a chunk at a time."""
    written = 0
    for name in _members(release):
        stored = f"{release.storage_prefix}/{name}"
        size = default_storage.size(stored)
        header = _header(release, name, size)
        yield header
        copied = 0
        with default_storage.open(stored, "rb") as handle:
            while chunk := handle.read(min(CHUNK, size - copied)):
                copied += len(chunk)
                yield chunk
        if copied != size:
            raise ArchiveDamaged(f"{stored} held {copied} bytes, not {size}")
        padding = -size % BLOCK
        if padding:
            yield bytes(padding)
        written += len(header) + size + padding
    end = 2 * BLOCK  # the end-of-archive marker, then the record tar readers expect
    end += -(written + end) % RECORD
    yield bytes(end)


def archive_facts(release: Release) -> ArchiveFacts:
    """Size and sha256 of the archive, computed by writing it once."""
    digest = hashlib.sha256()
    size = 0
    for chunk in archive_chunks(release):
        digest.update(chunk)
        size += len(chunk)
    return ArchiveFacts(size=size, sha256=f"sha256:{digest.hexdigest()}")
