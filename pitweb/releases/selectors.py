"""Reads of a release: every registered release (the releases page), the release or
price version a URL names, and what its stored segments hold, day by day."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from django.core.files.storage import default_storage
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from pitweb.core.params import DIGEST_RULE, digest_or_none, id_or_none
from pitweb.releases.models import ReferencePrices, Release


def releases_listed() -> QuerySet[Release]:
    """Every registered release, newest window first, each annotated with its current
    reference-price version (``prices_version``, ``prices_registered_at``; None when it
    has none): one query however many releases."""
    current = ReferencePrices.objects.filter(release=OuterRef("pk")).order_by("-version")
    return Release.objects.annotate(
        prices_version=Subquery(current.values("version")[:1]),
        prices_registered_at=Subquery(current.values("registered_at")[:1]),
    )


def release_named(digest: str) -> Release | None:
    """The release a path's digest names (bare, or after ``sha256:``), or None."""
    wanted = digest_or_none(digest)
    if wanted is None:
        return None
    return Release.objects.select_related("parent").filter(content_digest=wanted).first()


def release_or_404(digest: str) -> Release:
    """``release_named``, or Http404 saying how a digest is written."""
    release = release_named(digest)
    if release is None:
        raise Http404(f"no such release ({DIGEST_RULE})")
    return release


def files_held(release: Release) -> bool:
    """Whether storage holds the release's files (its manifest is written last)."""
    return bool(default_storage.exists(f"{release.storage_prefix}/manifest.json"))


def prices_version(release: Release, version: str) -> ReferencePrices | None:
    """The release's reference-price version ``version`` (its number), or None."""
    number = id_or_none(version)
    if number is None:
        return None
    return release.reference_prices.filter(version=number).first()


def rows_per_day(release: Release) -> pd.DataFrame | None:
    """Rows per day and form of the release's segments (its stored index), or None when
    its files are not in storage."""
    index_name = f"{release.storage_prefix}/index.json"
    if not default_storage.exists(index_name):
        return None
    with default_storage.open(index_name, "rb") as handle:
        segments = json.loads(handle.read())["segments"]
    return pd.DataFrame(
        [{"date": s["date"], "form": s["form"], "rows": s["rows"]} for s in segments]
    )


def versions_after(release: Release) -> QuerySet[Release]:
    """The versions grown from ``release`` (its children), oldest first."""
    return release.children.order_by("version", "registered_at")


def inbox_folders(inbox: Path) -> list[str]:
    """The names of the release folders in the staff inbox (a folder with a manifest)."""
    if not inbox.is_dir():
        return []
    return sorted(p.name for p in inbox.iterdir() if p.is_dir() and (p / "manifest.json").is_file())
