"""Reading stored artifacts on any machine, and the local files a job makes of them.

Every artifact lives behind Django's storage API (a local folder, or an S3-compatible
object store by configuration), and nothing here asks storage for a local path. The
harness reads files, so a worker copies what it needs: a run's receipt, trajectory and
prices into a folder for one job, and a release into a local cache that is checked
against the release's content digest before it is used.

Every such folder or file (a job's folder, an upload spooled to disk, a release copy
being made) lives in one root and is named by its job and by the process that owns it;
the owner removes it on every way out, and ``scratch_sweep`` removes those of owners that
died without doing so (a worker killed mid-job).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from harness.release.bundle import Bundle
from pitweb.core.errors import SubmissionError
from pitweb.releases.models import Release

CHUNK = 1024 * 1024
log = logging.getLogger(__name__)


# -- job folders -----------------------------------------------------------------------
#
# A name says who owns the entry: ``pitweb-{kind}-{label}-{machine}-{boot}-{pid}-{start}-``
# and a random tail (``tempfile``'s, so two entries never share a name). ``machine`` is a
# hash of the host name, ``boot`` of the kernel's boot id, ``start`` the pid's start time
# in clock ticks since boot (``/proc/PID/stat``; "x" where the system does not say).
#
# Why a sweep never removes a live job's entry, with several processes on one machine:
# - An entry is made by its owner, in one step (mkdtemp / O_EXCL), under its owner's own
#   name: there is no moment at which it exists under a name that is not its owner's.
# - Only the owner writes into it, and the owner removes it (or moves it into place)
#   before its job returns, so an entry whose owner is alive is in use or about to be
#   removed by that owner: the sweep leaves it. One whose owner is dead is written by nobody: removing it races
#   with nothing but another sweep removing it too, which ``rmtree(ignore_errors)`` and
#   ``unlink(missing_ok)`` allow.
# - The owner is alive when a process with its pid runs now and started at its start
#   time. A pid is reused only after its process has ended and then by a process that
#   started later, so a reused pid has another start time: the old entry is dead. A
#   zombie (ended, not yet reaped) is dead too. Another boot of the machine means every
#   owner is dead (no process outlives a reboot).
# - Entries of another machine (a root shared between hosts) are never judged: their
#   pids mean nothing here. What cannot be judged (no /proc: only "the pid exists") is
#   kept: a leftover is a leak, a wrong removal would break a live job.

_ENTRY = re.compile(
    r"pitweb-(?P<kind>[a-z]+)-(?P<label>[0-9a-z]+)-(?P<machine>[0-9a-f]{8})-"
    r"(?P<boot>[0-9a-f]{8}|x)-(?P<pid>[0-9]+)-(?P<start>[0-9]+|x)-[0-9a-z_]+"
)


def scratch_root() -> Path:
    """The one folder that holds every job folder and spooled upload of this site:
    Django's FILE_UPLOAD_TEMP_DIR when set, else ``work`` in the var folder."""
    root = Path(settings.FILE_UPLOAD_TEMP_DIR or Path(settings.VAR_DIR) / "work")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _hash8(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _machine() -> str:
    return _hash8(socket.gethostname())


@cache
def _boot() -> str:
    try:
        return _hash8(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
    except OSError:
        return "x"


def _process(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a running pid as /proc tells them, or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat.rsplit(b")", 1)[1].split()  # after the command's name, which may hold ")"
    return fields[0].decode(), fields[19].decode()


def _prefix(kind: str, label: object) -> str:
    pid = os.getpid()
    me = _process(pid)
    tag = re.sub(r"[^0-9a-z]", "", str(label).lower())[:24] or "x"
    return f"pitweb-{kind}-{tag}-{_machine()}-{_boot()}-{pid}-{me[1] if me else 'x'}-"


def _owner_alive(entry: re.Match[str]) -> bool:
    if entry["machine"] != _machine():
        return True  # another machine's: not ours to judge
    if "x" not in (entry["boot"], _boot()) and entry["boot"] != _boot():
        return False  # made before this machine last booted
    pid = int(entry["pid"])
    if pid <= 0:
        return True  # never ours: os.kill would signal a whole group
    seen = _process(pid)
    if seen is not None:
        state, start = seen
        return state not in ("Z", "X") and entry["start"] in ("x", start)
    try:
        os.kill(pid, 0)  # no /proc here (or not for this pid): only whether it exists
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True  # it exists, or is another user's: its start time cannot be compared


def scratch_sweep(*roots: Path) -> list[Path]:
    """Remove the entries (in the scratch root, the release cache, or ``roots``) whose
    owner has died; the reasoning is above."""
    removed = []
    for root in roots or (scratch_root(), Path(settings.PITWEB_RELEASE_CACHE)):
        try:
            entries = list(os.scandir(root))
        except FileNotFoundError:
            continue
        for entry in entries:
            named = _ENTRY.fullmatch(entry.name)
            if named is None or _owner_alive(named):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    if removed:
        log.info("removed %d folder(s) and file(s) of dead jobs", len(removed))
    return removed


@contextlib.contextmanager
def job_folder(kind: str, label: object) -> Iterator[Path]:
    """A private folder for one job, removed however the job ends (a dead owner's is
    removed by the next sweep)."""
    with tempfile.TemporaryDirectory(prefix=_prefix(kind, label), dir=scratch_root()) as tmp:
        yield Path(tmp)


def job_file(kind: str, label: object, *, delete: bool = True) -> IO[bytes]:
    """A private temporary file for one job, open for writing, in the scratch root."""
    return tempfile.NamedTemporaryFile(
        prefix=_prefix(kind, label), dir=scratch_root(), delete=delete
    )


def copy_to(name: str, target: Path) -> Path:
    """Copy the stored artifact ``name`` to the local file ``target``, streaming."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(name, "rb") as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out, CHUNK)
    return target


def stored_sha256(name: str) -> str:
    """``sha256:<hex>`` of the stored artifact ``name``, read back from storage."""
    with default_storage.open(name, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def store_bytes(name: str, data: bytes) -> str:
    """Put ``data`` into storage under ``name``, content-addressed (the name is made from
    the bytes' hash): stored once; a file under the name with other bytes (damaged) is
    replaced. Returns the stored file's sha256, read back."""
    sha = "sha256:" + hashlib.sha256(data).hexdigest()
    if default_storage.exists(name) and stored_sha256(name) != sha:
        default_storage.delete(name)
    if not default_storage.exists(name):
        saved = default_storage.save(name, ContentFile(data))
        if saved != name:  # a concurrent writer stored the same bytes first
            default_storage.delete(saved)
    return stored_sha256(name)


def release_held(release: Release) -> bool:
    return bool(default_storage.exists(f"{release.storage_prefix}/manifest.json"))


def release_copy(release: Release) -> Path:
    """A local folder holding the release's files, copied from storage once per machine
    and checked against the release's content digest (a damaged or partial copy is
    never used: it is made aside and moved into place whole)."""
    root = Path(settings.PITWEB_RELEASE_CACHE)
    folder = root / release.digest_hex
    if (folder / "manifest.json").exists():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    # beside its final place, so that the move is one rename; named by its owner, so a
    # copy whose worker died is swept
    partial = Path(tempfile.mkdtemp(prefix=_prefix("release", release.digest_hex[:12]), dir=root))
    try:
        copy_to(f"{release.storage_prefix}/manifest.json", partial / "manifest.json")
        for name in release.manifest["files"]:
            copy_to(f"{release.storage_prefix}/{name}", partial / name)
        copied = Bundle.load(partial)
        if copied.content_digest != release.content_digest:
            raise ValueError(
                f"the stored release {release.name} hashes to {copied.content_digest}, "
                f"not {release.content_digest}"
            )
        try:
            os.rename(partial, folder)
        except OSError:  # another worker on this machine put a whole copy there first
            shutil.rmtree(partial, ignore_errors=True)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return folder


def spool(upload: IO[bytes], limit: int, what: str) -> tuple[Path, str, int]:
    """Copy an upload to a private temporary file, hashing it; refuse past ``limit``."""
    digest = hashlib.sha256()
    size = 0
    handle = job_file("spool", what, delete=False)  # the caller unlinks it; a dead one's is swept
    try:
        while chunk := upload.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise SubmissionError("too_large", f"{what} is larger than {limit} bytes", 413)
            digest.update(chunk)
            handle.write(chunk)
    except BaseException:
        handle.close()
        os.unlink(handle.name)
        raise
    handle.close()
    return Path(handle.name), "sha256:" + digest.hexdigest(), size
