"""A release's page (its manifest, rows per day, its reference-price versions, its
versions) and its downloads: its files as one archive, and each reference-price version
as a CSV; the staff page that registers a release (a new version) from the inbox."""

from __future__ import annotations

import base64
import json

from django.conf import settings
from django.contrib import messages
from django.core.files.storage import default_storage
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from harness.release.store import ReleaseError
from pitweb.accounts.access import staff_required
from pitweb.charts import rows_per_day
from pitweb.core.tables import table_response
from pitweb.releases import archive, selectors
from pitweb.releases.services import release_archive_seal, release_register


def _digest_headers(response: HttpResponseBase, sha256: str) -> None:
    """The download's own hash, for a client to check what it received (RFC 9530)."""
    raw = bytes.fromhex(sha256.removeprefix("sha256:"))
    response["Repr-Digest"] = f"sha-256=:{base64.b64encode(raw).decode()}:"
    response["ETag"] = f'"{sha256.removeprefix("sha256:")}"'


def release_page(request: HttpRequest, digest: str) -> HttpResponse:
    release = selectors.release_or_404(digest)
    frame = selectors.rows_per_day(release)
    figure = json.loads(rows_per_day(frame).to_json()) if frame is not None else None
    manifest = release.manifest
    if request.GET.get("format") == "json":
        return JsonResponse(manifest)
    forms = [{"form": f, "rows": n} for f, n in manifest["row_counts"]["by_form"].items()]
    exported = table_response(request.GET.get("format", ""), "forms", ("form", "rows"), forms)
    if exported is not None:
        return exported
    held = selectors.files_held(release)
    return render(
        request,
        "release.html",
        {
            "release": release_archive_seal(release=release) if held else release,
            "held": held,
            "archive_name": archive.file_name(release),
            "manifest": manifest,
            "figure": figure,
            "reference_prices": release.reference_prices.order_by("-version"),
            "children": selectors.versions_after(release),
            "manifest_pretty": json.dumps(manifest, indent=2, sort_keys=True),
        },
    )


@require_safe
def release_archive(request: HttpRequest, digest: str) -> HttpResponseBase:
    """The release's files as one tar archive, streamed (HEAD: its headers alone)."""
    release = selectors.release_or_404(digest)
    if not selectors.files_held(release):
        raise Http404("this site does not hold the release's files")
    release = release_archive_seal(release=release)
    response: HttpResponseBase
    if request.method == "HEAD":
        response = HttpResponse(content_type="application/x-tar")
    else:
        response = StreamingHttpResponse(
            archive.archive_chunks(release), content_type="application/x-tar"
        )
    response["Content-Length"] = str(release.archive_size)
    response["Content-Disposition"] = f'attachment; filename="{archive.file_name(release)}"'
    _digest_headers(response, release.archive_sha256)
    return response


@require_safe
def reference_prices_csv(request: HttpRequest, digest: str, version: str) -> HttpResponseBase:
    """One reference-price version's file, byte for byte as registered."""
    release = selectors.release_or_404(digest)
    prices = selectors.prices_version(release, version)
    if prices is None or not default_storage.exists(prices.file_name):
        raise Http404("no such reference-price version")
    name = f"reference-prices-v{prices.version}-{release.digest_hex[:12]}.csv"
    response: HttpResponseBase
    if request.method == "HEAD":
        response = HttpResponse(content_type="text/csv")
        response["Content-Length"] = str(default_storage.size(prices.file_name))
        response["Content-Disposition"] = f'attachment; filename="{name}"'
    else:
        response = FileResponse(
            default_storage.open(prices.file_name, "rb"),
            as_attachment=True,
            filename=name,
            content_type="text/csv",
        )
    _digest_headers(response, prices.file_sha256)
    return response


@staff_required
@require_http_methods(["GET", "POST"])
def release_register_page(request: HttpRequest) -> HttpResponse:
    """Staff: register a release folder that lies in the inbox (PITWEB_RELEASE_INBOX),
    a version after its parent. Only a folder named among the inbox's is ever read."""
    inbox = settings.PITWEB_RELEASE_INBOX
    folders = selectors.inbox_folders(inbox)
    if request.method == "POST":
        name = request.POST.get("folder", "")
        if name not in folders:
            messages.error(
                request, f"Nothing was registered: {name!r} is not a folder of the inbox."
            )
            return redirect(reverse("release-register"))
        try:
            release, created = release_register(path=inbox / name)
        except (ReleaseError, OSError) as exc:
            messages.error(request, f"Nothing was registered: {exc}")
            return redirect(reverse("release-register"))
        parent = f", grown from {release.parent.content_digest}" if release.parent else ""
        verb = "Registered" if created else "Already registered:"
        messages.success(request, f"{verb} version {release.version} of {release.name}{parent}.")
        return redirect(reverse("release", args=[release.digest_hex]))
    return render(request, "release_register.html", {"folders": folders, "inbox": inbox})
