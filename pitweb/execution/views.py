"""The execution pages: registered agents (staff register, owners ask for runs) and an
execution's own page (its cells' progress, the run it made or checked, a divergence side
by side)."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from pitweb.core.errors import SubmissionError, bad_request_page
from pitweb.execution import selectors, services
from pitweb.execution.api import ExecutionOut
from pitweb.execution.models import ExecutionJob
from pitweb.releases.models import Release


def _job_or_404(request: HttpRequest, job_id: str) -> ExecutionJob:
    job = selectors.visible_job(request.user, job_id)
    if job is None:
        raise Http404("no such execution")
    return job


def execution_page(request: HttpRequest, job_id: str) -> HttpResponse:
    job = _job_or_404(request, job_id)
    return render(
        request,
        "execution.html",
        {
            "job": job,
            "cells": selectors.cells(job, request.user),
            "side_by_side": selectors.side_by_side(job.comparison),
            "divergence": (job.comparison or {}).get("divergence"),
            "running": not job.is_final,
        },
    )


def execution_json(request: HttpRequest, job_id: str) -> JsonResponse:
    job = _job_or_404(request, job_id)
    return JsonResponse(ExecutionOut(job, context={"request": request}).data)


@login_required
def agents_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "agents.html",
        {
            "agents": selectors.visible_agents(request.user),
            "packages": sorted(settings.PITWEB_AGENT_PACKAGES.items()),
            "users": User.objects.order_by("username") if request.user.is_staff else [],
            "releases": Release.objects.all(),
            "jobs": selectors.visible_jobs(request.user)[:50],
        },
    )


@login_required
@require_POST
def agents_action(request: HttpRequest, action: str) -> HttpResponse:
    """Staff register an agent; an owner (or staff) asks for an execution."""
    user = request.user
    assert isinstance(user, User)
    form = request.POST
    try:
        if action == "register":
            owner = User.objects.filter(username=form.get("owner", "")).first()
            if owner is None:
                raise SubmissionError("unknown_user", "owner: no such user")
            services.agent_register(
                by=user, name=form.get("name", ""), owner=owner,
                package=form.get("package", ""), url=form.get("url", ""),
                dialect=form.get("dialect", ""),
            )  # fmt: skip
            return redirect(reverse("agents"))
        if action == "execute":
            agent = selectors.visible_agents(user).filter(name=form.get("agent", "")).first()
            release = Release.objects.filter(content_digest=form.get("release", "")).first()
            if agent is None or release is None:
                raise SubmissionError("not_found", "no such agent or release")
            job = services.execution_request(
                by=user, agent=agent, release=release,
                start=_day(form.get("start")), end=_day(form.get("end")),
                forms=[f for f in form.get("forms", "").split(",") if f.strip()] or None,
                model_version=form.get("model_version", "").strip(),
                training_cutoff=form.get("training_cutoff", "").strip(),
                fault_plan=form.get("fault_plan", "").strip() or None,
            )  # fmt: skip
            return redirect(reverse("execution", args=[job.pk]))
    except SubmissionError as exc:
        return bad_request_page(request, exc.message)
    raise Http404("no such action")


def _day(value: Any) -> date:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise SubmissionError("invalid_window", "start and end: dates as YYYY-MM-DD") from None
