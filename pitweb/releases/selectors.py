"""Reads of a release: what its stored segments hold, day by day."""

from __future__ import annotations

import json

import pandas as pd
from django.core.files.storage import default_storage

from pitweb.releases.models import Release


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
