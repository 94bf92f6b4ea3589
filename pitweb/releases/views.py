"""A release's page: its manifest, rows per day, and its reference-price versions."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render

from pitweb.charts import rows_per_day
from pitweb.core.tables import table_response
from pitweb.releases import selectors
from pitweb.releases.models import Release


def release_page(request: HttpRequest, digest: str) -> HttpResponse:
    release = get_object_or_404(Release, content_digest=f"sha256:{digest}")
    frame = selectors.rows_per_day(release)
    figure = json.loads(rows_per_day(frame).to_json()) if frame is not None else None
    manifest = release.manifest
    if request.GET.get("format") == "json":
        return JsonResponse(manifest)
    forms = [{"form": f, "rows": n} for f, n in manifest["row_counts"]["by_form"].items()]
    exported = table_response(request.GET.get("format", ""), "forms", ("form", "rows"), forms)
    if exported is not None:
        return exported
    return render(
        request,
        "release.html",
        {
            "release": release,
            "manifest": manifest,
            "figure": figure,
            "reference_prices": release.reference_prices.order_by("-version"),
            "manifest_pretty": json.dumps(manifest, indent=2, sort_keys=True),
        },
    )
