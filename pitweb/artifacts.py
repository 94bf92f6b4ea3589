"""Reading stored artifacts on any machine.

Every artifact lives behind Django's storage API (a local folder, or an S3-compatible
object store by configuration), and nothing here asks storage for a local path. The
harness reads files, so a worker copies what it needs: a run's receipt, trajectory and
prices into a temporary folder for one job, and a release into a local cache that is
checked against the release's content digest before it is used.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage

from harness.release.bundle import Bundle
from pitweb.releases.models import Release

CHUNK = 1024 * 1024


def copy_to(name: str, target: Path) -> Path:
    """Copy the stored artifact ``name`` to the local file ``target``, streaming."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(name, "rb") as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out, CHUNK)
    return target


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
    partial = Path(tempfile.mkdtemp(prefix=f".{release.digest_hex[:12]}-", dir=root))
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
