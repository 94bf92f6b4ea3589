"""The releases page: every registered release with its window, rows, largest forms,
current reference prices, archive, and the benchmarks and verified public runs on it.
It sits above the apps, as the home page does: a release's facts are the releases
app's, the runs on it are counted by the runs app (releases never import runs)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from pitweb.core.tables import table_response
from pitweb.releases.selectors import releases_listed
from pitweb.runs.selectors import public_counts_by_release

# what the CSV and JSON exports hold, a row per release, in the table's order
COLUMNS = (
    "name",
    "content_digest",
    "page",
    "window_start",
    "window_end",
    "rows",
    "forms",
    "prices_version",
    "prices_registered_at",
    "benchmarks",
    "verified_public_runs",
    "archive_bytes",
    "archive_sha256",
)
# the forms named in a release's row; the rest are counted
FORMS_SHOWN = 3


def forms_in_words(by_form: dict[str, int], shown: int = FORMS_SHOWN) -> str:
    """A release's largest forms with their share of its rows, the rest counted:
    "4 (48%), 8-K (17%), 424B2 (9%) and 14 more"."""
    total = sum(by_form.values())
    largest = sorted(by_form.items(), key=lambda item: (-item[1], item[0]))
    named = []
    for form, rows in largest[:shown]:
        share = rows / total * 100 if total else 0.0
        named.append(f"{form} ({'<1' if 0 < share < 1 else f'{share:.0f}'}%)")
    rest = len(largest) - shown
    return ", ".join(named) + (f" and {rest} more" if rest > 0 else "")


def _utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


def release_rows() -> list[dict[str, Any]]:
    """Every registered release as the page's table and its exports show it, newest
    window first. Two queries however many releases."""
    counts = public_counts_by_release()
    rows = []
    for release in releases_listed():
        benchmarks, verified = counts.get(release.content_digest, (0, 0))
        by_form = release.manifest.get("row_counts", {}).get("by_form", {})
        rows.append(
            {
                "name": release.name,
                "content_digest": release.content_digest,
                "digest_hex": release.digest_hex,
                "page": reverse("release", args=[release.digest_hex]),
                "window_start": release.window_start,
                "window_end": release.window_end,
                "rows": release.row_count,
                "forms": forms_in_words(by_form),
                "prices_version": release.prices_version,  # type: ignore[attr-defined]
                "prices_registered_at": _utc(release.prices_registered_at),  # type: ignore[attr-defined]
                "benchmarks": benchmarks,
                "verified_public_runs": verified,
                "archive_bytes": release.archive_size,
                "archive_sha256": release.archive_sha256 or None,
            }
        )
    return rows


@require_safe
def releases_page(request: HttpRequest) -> HttpResponse:
    """The releases as a table, or its CSV or JSON (``?format=``)."""
    rows = release_rows()
    exported = table_response(request.GET.get("format", ""), "releases", COLUMNS, rows)
    if exported is not None:
        return exported
    return render(request, "releases.html", {"releases": rows})
