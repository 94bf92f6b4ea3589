"""A run's certificate as JSON, the site's published keys and its signed revocation list
(at their well-known addresses), and staff's revocation."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from pitweb.accounts.access import staff_required
from pitweb.certificates import services
from pitweb.certificates.models import Certificate
from pitweb.core.errors import SubmissionError, error_body
from pitweb.core.signing import published_keys
from pitweb.core.tables import document_response
from pitweb.runs import selectors as runs
from pitweb.runs.api import submission_wanted
from pitweb.runs.views import refuses_bad_queries


def keys_json(request: HttpRequest) -> HttpResponse:
    """The key set: every key the site signs or signed with, its id and dates."""
    return document_response(published_keys())


def revocations_json(request: HttpRequest) -> HttpResponse:
    """The signed list of every revoked certificate."""
    return document_response(services.revocation_list())


@refuses_bad_queries
def run_certificate_json(request: HttpRequest, sha: str) -> HttpResponse:
    """The run's certificate as it stands (signed now if the verdict is new), or why the
    site signs nothing about it (409, the error envelope)."""
    visible = runs.visible_runs(request.user).select_related("platform", "platform__prices")
    run = runs.submission(visible, sha, submission_wanted(request.GET))
    if run is None:
        raise Http404("no such run")
    try:
        certificate = services.certificate_current(run=run)
    except SubmissionError as exc:
        return JsonResponse(error_body(exc.code, exc.message), status=exc.http_status)
    response = HttpResponse(certificate.envelope + "\n", content_type="application/json")
    response["Content-Disposition"] = (
        f'attachment; filename="certificate-{run.run_id}-{certificate.certificate_id[7:19]}.json"'
    )
    return response


def _certificate_or_404(certificate_id: str) -> Certificate:
    """A certificate by its id, written ``sha256:<hex>`` or bare."""
    wanted = certificate_id if certificate_id.startswith("sha256:") else f"sha256:{certificate_id}"
    found = Certificate.objects.filter(certificate_id=wanted).first()
    if found is None:
        raise Http404("no such certificate")
    return found


def certificate_json(request: HttpRequest, certificate_id: str) -> HttpResponse:
    """A certificate by its id (``sha256:`` or bare), revoked or not: what was signed."""
    found = _certificate_or_404(certificate_id)
    return HttpResponse(found.envelope + "\n", content_type="application/json")


@staff_required
@require_POST
def revoke_action(request: HttpRequest, certificate_id: str) -> HttpResponse:
    found = _certificate_or_404(certificate_id)
    back = reverse("run", args=[found.run.body_sha256.removeprefix("sha256:")])
    back += f"?submission={found.run_id}#certificate"
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was done: tick the confirmation box to revoke.")
        return redirect(back)
    try:
        services.certificate_revoke(
            certificate=found, reason=request.POST.get("reason", ""),
            staff=cast(User, request.user),
        )  # fmt: skip
    except SubmissionError as exc:
        messages.error(request, exc.message)
        return redirect(back)
    messages.success(request, f"Certificate {found.certificate_id[:19]} revoked.")
    return redirect(back)
