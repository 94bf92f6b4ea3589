"""Registering a release: its files are copied into artifact storage and checked, and
the archive a reader downloads is sealed (its size and sha256 computed once). A version
of a release (``pit-harness release append``) is registered after its parent, and only
when it grows the parent the site holds."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from harness.release.bundle import Bundle
from harness.release.chain import child_problems
from harness.release.store import ReleaseError
from pitweb.releases.archive import archive_facts
from pitweb.releases.models import Release
from pitweb.releases.signals import release_version_registered


def _parent_of(bundle: Bundle) -> Release | None:
    """The registered release ``bundle`` names as its parent (None when it names none),
    once the bundle is checked to grow it byte for byte.

    The parent's files were checked against its manifest when it was registered, so its
    manifest and stored index stand for its stored bytes here.
    """
    named = bundle.manifest.get("parent")
    if named is None:
        return None
    digest = named.get("content_digest") if isinstance(named, dict) else None
    parent = Release.objects.filter(content_digest=digest).first()
    if parent is None:
        raise ReleaseError(
            f"{bundle.name} is a version of {digest} ({named.get('name') if isinstance(named, dict) else '?'}), "
            "which is not registered here: register the parent first"
        )
    index_name = f"{parent.storage_prefix}/index.json"
    if not default_storage.exists(index_name):
        raise ReleaseError(f"the site does not hold the files of the parent {digest}")
    with default_storage.open(index_name, "rb") as handle:
        segments = json.loads(handle.read())["segments"]
    problems = child_problems(parent.manifest, segments, bundle)
    if problems:
        raise ReleaseError(f"{bundle.name} does not grow its parent: " + "; ".join(problems))
    if parent.children.exists():
        raise ReleaseError(
            f"{digest} already has a later version ({parent.children.get().content_digest}): "
            "a release line does not fork; append to its newest version"
        )
    return parent


def release_register(*, path: str | os.PathLike[str]) -> tuple[Release, bool]:
    """Check every file of the release at ``path`` (and, for a version, that it grows its
    registered parent) and store it; idempotent on its digest. A new registration sends
    ``release_version_registered`` once its transaction commits."""
    bundle = Bundle.load(path)
    problems = bundle.check()
    if problems:
        raise ReleaseError("; ".join(problems))
    existing = Release.objects.filter(content_digest=bundle.content_digest).first()
    if existing is not None:
        return release_archive_seal(release=existing), False
    parent = _parent_of(bundle)
    prefix = f"releases/{bundle.content_digest.removeprefix('sha256:')}"
    for name in ["manifest.json", *bundle.manifest["files"]]:
        target = f"{prefix}/{name}"
        if not default_storage.exists(target):
            with open(Path(path) / name, "rb") as handle:
                default_storage.save(target, File(handle))
    try:
        release, created = _create(bundle, prefix, parent)
    except IntegrityError:  # another version of the same parent registered meanwhile
        raise ReleaseError(
            f"{bundle.name}: its parent gained another version meanwhile: a line does not fork"
        ) from None
    return release_archive_seal(release=release), created


def _create(bundle: Bundle, prefix: str, parent: Release | None) -> tuple[Release, bool]:
    manifest = bundle.manifest
    with transaction.atomic():
        release, created = Release.objects.get_or_create(
            content_digest=bundle.content_digest,
            defaults={
                "name": manifest["name"],
                "manifest": manifest,
                "window_start": manifest["window"]["start"],
                "window_end": manifest["window"]["end"],
                "row_count": manifest["row_counts"]["total"],
                "storage_prefix": prefix,
                "parent": parent,
                "version": parent.version + 1 if parent is not None else 1,
            },
        )
        if created:
            sessions = list(manifest.get("sessions_added") or [])
            transaction.on_commit(
                lambda: release_version_registered.send(
                    sender=Release, release=release, parent=parent, sessions_added=sessions
                )
            )
    return release, created


def release_archive_seal(*, release: Release) -> Release:
    """The release with its archive's size and sha256, computed from the stored files
    the first time they are asked for (the same bytes every time: idempotent)."""
    if release.archive_sha256 and release.archive_size is not None:
        return release
    facts = archive_facts(release)
    Release.objects.filter(pk=release.pk).update(
        archive_size=facts.size, archive_sha256=facts.sha256
    )
    release.archive_size, release.archive_sha256 = facts.size, facts.sha256
    return release
