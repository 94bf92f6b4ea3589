"""The run pages: a run (its receipt, verification history and platform figures), its
tables and downloads, the submitter's withdrawal and staff actions; and the site's
methodology, changelog and status pages. Filter state lives in the URL; every table has
CSV and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, cast
from urllib.parse import urlencode

import msgspec
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from harness.interchange.every_eval_ever import Source
from harness.interchange.run_record import run_record, without_market
from harness.receipt.model import Cell
from pitweb import charts
from pitweb.accounts.access import staff_required
from pitweb.core.errors import SubmissionError, bad_request_page
from pitweb.core.tables import table_response
from pitweb.execution.services import agent_of_run, reexecution_request
from pitweb.runs import presentation, selectors, services, tables
from pitweb.runs.api import submission_wanted
from pitweb.runs.models import Run
from pitweb.runs.verify_commands import audit_commands, verify_commands


def _figure(figure: Any) -> Any:
    return json.loads(figure.to_json())


def refuses_bad_queries(
    view: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """A query or form the view's serializer refuses is the site's 400 page, saying what
    was wrong (the API answers the same with its JSON envelope)."""

    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            return view(request, *args, **kwargs)
        except SubmissionError as exc:
            return bad_request_page(request, exc.message)

    return checked


def _run_or_404(request: HttpRequest, sha: str) -> Run:
    wanted = submission_wanted(request.GET)
    runs = selectors.visible_runs(request.user).select_related("platform", "platform__prices")
    found = selectors.submission(runs, sha, wanted)
    if found is None:
        raise Http404("no such run")
    return found


def _grid(cells: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Cells by arm and clock: the receipt's typed cells, or the platform's figures."""
    by = [(c.arm, c.clock, c) if isinstance(c, Cell) else (c["arm"], c["clock"], c) for c in cells]
    return {arm: {clock: c for a, clock, c in by if a == arm} for arm in charts.ARM_ORDER}


def _platform_context(run: Run, proven: bool) -> dict[str, Any]:
    """The run page's platform figures and their charts, or why there are none."""
    score = run.platform if proven else None
    context: dict[str, Any] = {
        "platform": score,
        "platform_status": presentation.platform_status(run) if proven else "",
        "platform_grid": None,
        "figures": {},
        "no_chart_because": "",
    }
    if score is None or score.state != "scored" or not score.figures:
        context["no_chart_because"] = (
            "No platform figures yet ("
            + (context["platform_status"] or run.withheld_reason)
            + "), so there is nothing to draw."
        )
        return context
    figures = score.figures
    frame = charts.platform_frame(figures["cells"])
    context["platform_grid"] = _grid(figures["cells"])
    context["platform_deltas"] = figures.get("contamination") or {}
    context["platform_delta_intervals"] = figures.get("contamination_interval_95") or {}
    memory = presentation.run_memory(run)
    context["memory_verdict"], context["memory_words"] = memory or ("", "")
    split = figures.get("placebo")  # a window that crosses the declared training cutoff
    if split:
        context["placebo"] = split
        context["placebo_rows"] = presentation.placebo_rows(split)
        chart = charts.placebo_split(split)
        if chart is not None:
            context["figures"]["placebo"] = _figure(chart)
    if not charts.has_numbers(frame):
        context["no_chart_because"] = (
            "No trade of this run could be priced with the reference prices, so there is "
            "nothing to draw."
        )
        return context
    context["figures"]["returns"] = _figure(charts.returns_by_clock(frame))
    context["costs"] = figures.get("costs")
    context["index"] = figures.get("benchmark_index")
    if context["index"]:
        market = charts.cumulative_against_index(figures["cells"], context["index"]["symbol"])
        if market is not None:
            context["figures"]["market"] = _figure(market)
    deltas = [v for d in context["platform_deltas"].values() for v in d.values()]
    values = [v for v in deltas if v is not None]
    if values and all(v == 0 for v in values):
        missing = len(deltas) - len(values)
        context["no_delta_chart_because"] = (
            (
                "Every contamination delta is +0.00 pp: the agent's priced trades were the "
                "same on every arm"
                if not missing
                else f"Every contamination delta with a figure is +0.00 pp ({missing} n/a: "
                "a cell without a figure)"
            )
            + ", so there is no bar to draw. "
            + (
                "Its mask leaks, so this says nothing about memory."
                if run.mask_verdict == "mask_leaks"
                else "An agent that ignores what the filings say scores alike on every arm."
            )
        )
        return context
    intervals = figures.get("contamination_interval_95") or {}
    delta = charts.contamination(context["platform_deltas"], run.mask_verdict, intervals)
    if delta is not None:
        context["figures"]["deltas"] = _figure(delta)
        context["shifted_delta_reading"] = presentation.shifted_delta_reading(
            (intervals.get("pit") or {}).get("main_minus_shifted")
        )
    return context


@refuses_bad_queries
def run_page(request: HttpRequest, sha: str) -> HttpResponse:
    wanted = submission_wanted(request.GET)
    runs = selectors.visible_runs(request.user).select_related("platform", "platform__prices")
    found, candidates = selectors.pick(runs, sha, wanted)
    if found is None and candidates:  # a run id or prefix naming several runs: list them
        return render(
            request, "run_choices.html", {"key": sha, "runs": candidates[:50]}, status=300
        )
    if found is None:
        raise Http404("no such run")
    if found.body_sha256.removeprefix("sha256:") != sha:  # a short id: the permalink is the hash
        return redirect(
            reverse("run", args=[found.body_sha256.removeprefix("sha256:")])
            + f"?submission={found.pk}"
        )
    run = found
    receipt = run.receipt
    jobs = selectors.run_jobs(run, user=request.user)
    proven = run.proven
    return render(
        request,
        "run.html",
        {
            "run": run,
            "body": receipt,
            "sha": sha,
            "proven": proven,
            "withheld_because": run.withheld_reason,
            "level_words": presentation.level_words(run),
            "verdicts": presentation.header_verdicts(run),
            "family": run.family,
            "declared": presentation.DECLARED,
            "could_read_future": presentation.could_read_future(run),
            # the badge names the relation: the words after it say what it means
            "cutoff_words": presentation.cutoff_words(run).split(": ", 1)[-1]
            if run.cutoff_relation
            else presentation.cutoff_words(run),
            "forward_tested_words": presentation.FORWARD_TESTED_WORDS,
            "grid": _grid(receipt.cells),
            "clocks": charts.CLOCK_ORDER,
            "probe": receipt.probe,
            "checklist": presentation.checklist(receipt),
            "network": receipt.network,
            "stated_prices": receipt.protocol.p4.prices,
            "history": selectors.job_diffs(jobs),
            "latest_job": jobs[-1] if jobs else None,
            "job_in_progress": bool(jobs) and not jobs[-1].is_final,
            "other_submissions": selectors.other_submissions(request.user, run),
            "receipt_pretty": json.dumps(run.body, indent=2, sort_keys=True),
            "release_name": run.release.name if run.release else run.release_digest,
            "min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES,
            "registered_agent": _registered_agent(request, run),
            "verify": verify_commands(run, site=request.build_absolute_uri("/").rstrip("/")),
            "fault_rows": presentation.fault_rows(run.body),
            "model_cost": presentation.model_cost(run),
            "usage_cells": [
                {"arm": c["arm"], "clock": c["clock"], **c["usage"]}
                for c in run.body["cells"]
                if c.get("usage")
            ]
            if proven
            else [],
            **_audit_context(run),
            **_platform_context(run, proven),
        },
    )


def _audit_context(run: Run) -> dict[str, Any]:
    """The run page's reasoning audit: its cells and its sentence in words, and the
    commands that make it again (nothing for a run the system has not proved)."""
    audit = selectors.reasoning_audit_of(run)
    if audit is None:
        return {"audit": None}
    return {
        "audit": audit,
        "audit_rows": presentation.audit_rows(audit),
        "audit_summary": presentation.audit_summary(audit),
        "audit_commands": audit_commands(run, audit["digest"]),
    }


def _registered_agent(request: HttpRequest, run: Run) -> Any:
    """For staff: the registered agent an uploaded run's digest names (re-executable)."""
    if not (request.user.is_authenticated and request.user.is_staff) or run.executed:
        return None
    return agent_of_run(run)


@refuses_bad_queries
def run_table(request: HttpRequest, sha: str, name: str) -> HttpResponse:
    """One of the run page's tables as CSV or JSON: cells, probe or jobs."""
    run = _run_or_404(request, sha)
    fmt = request.GET.get("format", "json")
    if name == "cells" and not run.proven:
        return JsonResponse({"withheld": run.withheld_reason}, status=409)
    if name == "cells":
        cells = msgspec.to_builtins(run.receipt.cells)
        response = table_response(fmt, "cells", tables.CELL_COLUMNS, cells)
    elif name == "probe":
        rows = tables.probe_rows(run.receipt.probe)
        response = table_response(fmt, "probe", tables.PROBE_COLUMNS, rows)
    elif name == "jobs":
        rows = tables.job_rows(selectors.job_diffs(selectors.run_jobs(run, user=request.user)))
        response = table_response(fmt, "jobs", tables.JOB_COLUMNS, rows)
    else:
        raise Http404("no such table")
    if response is None:
        raise Http404("format must be csv or json")
    return response


@refuses_bad_queries
def run_cells_json(request: HttpRequest, sha: str) -> JsonResponse:
    run = _run_or_404(request, sha)
    if not run.proven:
        return JsonResponse({"withheld": run.withheld_reason}, status=409)
    receipt = run.receipt
    return JsonResponse(
        msgspec.to_builtins({"cells": receipt.cells, "contamination": receipt.contamination})
    )


@refuses_bad_queries
def run_every_eval_ever(request: HttpRequest, sha: str) -> JsonResponse:
    """A proven run in Every Eval Ever's shared schema (``harness.interchange``), made
    from the body the site verified and validated against the schema: the site states
    itself as the evaluator, a third party to the submitter's model."""
    run = _run_or_404(request, sha)
    if not run.proven:
        return JsonResponse({"withheld": run.withheld_reason}, status=409)
    record = run_record(
        without_market(run.body),  # the submitter's index is not the site's to check
        source=Source(organization=settings.PITWEB_SIGNING_ISSUER, relationship="third_party"),
        retrieved_at=timezone.now(),
    )
    response = JsonResponse(record, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{run.run_id}.every-eval-ever.json"'
    return response


@refuses_bad_queries
def run_status_json(request: HttpRequest, sha: str) -> JsonResponse:
    """Polled by the run page for live verification progress."""
    run = _run_or_404(request, sha)
    job = run.jobs.first()
    return JsonResponse(
        {"status": run.status, "job": job.pk if job else None, "state": job.state if job else None}
    )


@refuses_bad_queries
def run_reasoning_audit_json(request: HttpRequest, sha: str) -> HttpResponseBase:
    """The run's reasoning audit as the worker stored it: its canonical bytes, whose
    sha256 is the digest the run page shows."""
    run = _run_or_404(request, sha)
    if not run.proven:
        return JsonResponse({"withheld": run.withheld_reason}, status=409)
    audit = selectors.reasoning_audit_of(run)
    if audit is None:
        raise Http404("this run has no reasoning audit")
    return FileResponse(
        default_storage.open(audit["artifact_name"], "rb"),
        content_type="application/json",
        filename=f"reasoning-audit-{run.run_id}.json",
    )


@refuses_bad_queries
def run_download(request: HttpRequest, sha: str, what: str) -> FileResponse:
    run = _run_or_404(request, sha)
    name = {"trajectory": run.trajectory_name, "receipt": run.receipt_name}.get(what)
    if not name:
        raise Http404("no such artifact")
    return FileResponse(
        default_storage.open(name, "rb"),
        as_attachment=True,
        filename=f"{what}-{run.run_id}{'.jsonl' if what == 'trajectory' else '.json'}",
    )


def methodology_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "methodology.html", {"min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES}
    )


def changelog_page(request: HttpRequest) -> HttpResponse:
    events = selectors.changelog()
    rows = [
        {
            "when": e.created_at.isoformat(),
            "action": e.action,
            "run": e.run.run_id if e.run else None,
            "actor": e.actor.username if e.actor else None,
            "reason": e.reason,
        }
        for e in events
    ]
    exported = table_response(request.GET.get("format", ""), "events", tables.EVENT_COLUMNS, rows)
    return exported or render(request, "changelog.html", {"events": events})


def status_page(request: HttpRequest) -> HttpResponse:
    data = selectors.status_data(request.user)
    if request.GET.get("format") == "json" and "table" not in request.GET:
        return JsonResponse(data)
    table = request.GET.get("table")
    if table in ("workers", "recent_latencies"):
        columns = (
            ("worker", "state", "last_heartbeat", "agent_isolation")
            if table == "workers"
            else ("job", "run_id", "state", "seconds")
        )
        exported = table_response(request.GET.get("format", "csv"), table, columns, data[table])
        if exported is not None:
            return exported
    return render(request, "status.html", {"data": data})


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


@require_POST
@refuses_bad_queries
def withdraw_action(request: HttpRequest, sha: str) -> HttpResponse:
    """The submitter withdraws their own run (a form on its page)."""
    if not request.user.is_authenticated:
        raise Http404("no such run")
    owner = request.user
    found = selectors.submission(
        Run.objects.filter(submitter=owner), sha, submission_wanted(request.POST)
    )
    if found is None:
        raise Http404("no such run")
    back = reverse("run", args=[sha]) + f"?submission={found.pk}"
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was done: tick the confirmation box to withdraw.")
        return redirect(back + "#withdraw")
    try:
        services.run_withdraw(run=found, owner=owner, reason=request.POST.get("reason", ""))
    except SubmissionError as exc:
        messages.error(request, f"Nothing was done: {exc.message}.")
        return redirect(back + "#withdraw")
    messages.success(request, "The run is withdrawn: off the board, still counted.")
    return redirect(back)


@staff_required
@require_POST
@refuses_bad_queries
def staff_action(request: HttpRequest, sha: str, action: str) -> HttpResponse:
    if request.content_type not in FORM_TYPES:  # no body, or not a form: nothing to read
        return bad_request_page(request, "a staff action is posted as the run page's form")
    found = selectors.submission(Run.objects.all(), sha, submission_wanted(request.POST))
    if found is None:
        raise Http404("no such run")
    run: Run = found
    staff = cast(User, request.user)  # staff_required: a signed-in staff user
    reason = request.POST.get("reason", "")

    def back_with_the_form() -> HttpResponse:
        """Back to the page with what was typed kept in the form that failed."""
        kept = urlencode(
            {
                "action": action,
                "reason": reason.replace("\x00", ""),
                "flag": request.POST.get("flag", "").replace("\x00", ""),
            }
        )
        kept += f"&submission={run.pk}"
        return redirect(reverse("run", args=[sha]) + f"?{kept}#staff")

    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was done: tick the confirmation box to act.")
        return back_with_the_form()
    try:
        if action == "reverify":
            job = services.run_reverify(run=run, staff=staff, reason=reason)
            messages.success(request, f"Re-verification queued as job {job.pk}.")
        elif action in ("hide", "unhide"):
            services.run_set_hidden(run=run, staff=staff, hidden=action == "hide", reason=reason)
            messages.success(
                request, "The run is hidden." if action == "hide" else "The run is shown again."
            )
        elif action == "flag":
            run = services.run_set_flag(
                run=run, staff=staff, flag=request.POST.get("flag", ""), reason=reason
            )
            messages.success(request, "The flag is set." if run.flag else "The flag is cleared.")
        elif action == "reexecute":
            execution = reexecution_request(by=staff, run=run, reason=reason)
            messages.success(request, f"Re-execution queued as execution {execution.pk}.")
        elif action == "requeue":
            moved = services.jobs_requeue(staff=staff, run=run, reason=reason)
            messages.success(
                request, f"Requeued {len(moved)} job(s) whose worker stopped heart-beating."
            )
        else:
            raise Http404("no such action")
    except SubmissionError as exc:
        messages.error(request, f"Nothing was done: {exc.message}.")
        return back_with_the_form()
    return redirect(reverse("run", args=[sha]) + f"?submission={run.pk}")
