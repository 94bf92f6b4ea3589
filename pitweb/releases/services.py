"""Registering a release: its files are copied into artifact storage and checked, and
the archive a reader downloads is sealed (its size and sha256 computed once)."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from harness.release.bundle import Bundle
from harness.release.store import ReleaseError
from pitweb.releases.archive import archive_facts
from pitweb.releases.models import Release


def release_register(*, path: str | os.PathLike[str]) -> tuple[Release, bool]:
    """Check every file of the release at ``path`` and store it; idempotent on its digest."""
    bundle = Bundle.load(path)
    problems = bundle.check()
    if problems:
        raise ReleaseError("; ".join(problems))
    existing = Release.objects.filter(content_digest=bundle.content_digest).first()
    if existing is not None:
        return release_archive_seal(release=existing), False
    prefix = f"releases/{bundle.content_digest.removeprefix('sha256:')}"
    for name in ["manifest.json", *bundle.manifest["files"]]:
        target = f"{prefix}/{name}"
        if not default_storage.exists(target):
            with open(Path(path) / name, "rb") as handle:
                default_storage.save(target, File(handle))
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
            },
        )
    return release_archive_seal(release=release), created


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
