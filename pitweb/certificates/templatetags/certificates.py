"""``{% run_certificate run %}``: the run page's certificate section, from this app, so the
runs app never imports the one built on it."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from pitweb.certificates.selectors import run_certificates
from pitweb.runs.models import Run
from pitweb.runs.verify_commands import RECEIPT


def commands(run: Run, site: str) -> str:
    """How to fetch the certificate, the keys and the revocation list and check them,
    in the folder the verify commands made (where the receipt already is)."""
    sha = run.body_sha256.removeprefix("sha256:")
    certificate = site + reverse("run-certificate", args=[sha]) + f"?submission={run.pk}"
    return "\n".join(
        [
            f"curl -fLo certificate.json '{certificate}'",
            f"curl -fLo pitweb-keys.json '{site}{reverse('signing-keys')}'",
            f"curl -fLo pitweb-revocations.json '{site}{reverse('revocations')}'",
            f"pit-harness certificate verify certificate.json --keys pitweb-keys.json "
            f"--receipt {RECEIPT} --revocations pitweb-revocations.json",
        ]
    )


register = template.Library()


@register.inclusion_tag("certificates/run_section.html", takes_context=True)
def run_certificate(context: template.Context, run: Run) -> dict[str, Any]:
    request = context.get("request")
    site = request.build_absolute_uri("/").rstrip("/") if request is not None else ""
    return {
        **run_certificates(run),
        "commands": commands(run, site),
        "run": run,
        "sha": run.body_sha256.removeprefix("sha256:"),
        "user": context.get("user"),
        "csrf_token": context.get("csrf_token"),
    }
