"""Server-rendered pages. Filter state lives in the URL; every table has CSV and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import wraps
from types import SimpleNamespace
from typing import Any, NamedTuple, cast
from urllib.parse import urlencode

import msgspec
from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.models import User
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST
from msgspec import UNSET

from harness import snapshot as snapshots
from harness.receipt.model import (
    Cell,
    CostsSlot,
    DisaggregationSlot,
    ModelVersionSlot,
    ProvenanceSlot,
    ReceiptBody,
    RetrievalSlot,
    Slot,
    TrainingCutoffSlot,
)
from pitweb import charts
from pitweb.core.errors import SubmissionError, bad_request_page, error_body
from pitweb.releases.models import Release
from pitweb.runs import boardcache, selectors, services, tables
from pitweb.runs.api import LEADERBOARD_COLUMNS, leaderboard_csv, snapshot_csv, submission_wanted
from pitweb.runs.board import board_stamp
from pitweb.runs.models import Run, Snapshot


def _figure(figure: Any) -> Any:
    return json.loads(figure.to_json())


class BoardQuery(NamedTuple):
    """What a board request asks for: its filters, its page, and its cursors (after,
    before) when it pages by key."""

    filters: dict[str, Any]
    page: int
    cursors: tuple[str | None, str | None]


def _board_query(request: HttpRequest) -> BoardQuery:
    """The board query of a request (``SubmissionError`` if bad)."""
    from pitweb.runs.api import _cursors, _filters, _page_number

    return BoardQuery(_filters(request), _page_number(request), _cursors(request))


def _served_board(
    request: HttpRequest,
    kind: str,
    query: BoardQuery,
    answer: Callable[[dict[str, Any]], str],
) -> str:
    """``answer`` of the board page the query asks for, cached under ``kind``.

    The public page is rendered once per board version and stored-board computation,
    for each query the board links to (boardcache), one render at a time. A page asked
    for by cursor is read from the stored board each time (cursors are countless, the
    cache is not); a signed-in user's holds their own runs and is never cached."""
    filters, page, (after, before) = query
    key = None
    if not request.user.is_authenticated and not (after or before):
        stamp = board_stamp()
        hit = boardcache.cached(kind, stamp, filters, page)
        if hit is not None:
            return cast(str, hit)
        key = boardcache.key(kind, stamp, filters, page, rows=selectors.PAGE_ROWS)

    def draw() -> tuple[str, bool]:
        board = selectors.leaderboard(
            **filters, page=page, per_page=selectors.PAGE_ROWS, after=after, before=before
        )
        return answer(board), board["current"]

    return boardcache.served(key, draw)


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    try:
        query = _board_query(request)
    except SubmissionError as exc:
        return render(request, "400.html", {"message": f"Bad filter: {exc.message}."}, status=400)
    return HttpResponse(
        _served_board(
            request, "board-page", query, lambda board: _leaderboard_html(request, board, query)
        )
    )


def leaderboard_chart(request: HttpRequest) -> HttpResponse:
    """The chart of the board page with the same query (filters, page or cursor), as
    Plotly's figure JSON (``figure``: null when no run has both figures) and its ``note``.
    The page fetches it once it has loaded, with Plotly: the table comes first."""
    try:
        query = _board_query(request)
    except SubmissionError as exc:
        return JsonResponse(error_body(exc.code, exc.message), status=exc.http_status)

    def answer(board: dict[str, Any]) -> str:
        figure, note = charts.board_scatter([*board["ranked"], *board["mask_leaks"]])
        drawn = figure.to_json() if figure is not None else "null"
        return f'{{"figure": {drawn}, "note": {json.dumps(note)}}}'

    return HttpResponse(
        _served_board(request, "board-chart", query, answer), content_type="application/json"
    )


def _leaderboard_html(
    request: HttpRequest,
    board: dict[str, Any],
    query: BoardQuery,
) -> str:
    filters, page, (after, before) = query
    # what the chart will draw, said now; the chart itself is fetched after the page loads
    points, chart_note = charts.board_points([*board["ranked"], *board["mask_leaks"]])
    shown = {k: filters[k] or "" for k in ("release", "form", "start", "end")}
    shown["isolated"] = "1" if filters["isolated"] else ""
    this_page = {k: v for k, v in shown.items() if v}
    this_page |= {"page": str(page)} if page > 1 else {}
    this_page |= {k: v for k, v in (("after", after), ("before", before)) if v}
    return render_to_string(
        "leaderboard.html",
        {
            "board": board,
            "query": urlencode({k: v for k, v in shown.items() if v}),
            "pagination": board["pagination"],
            "releases": Release.objects.order_by("name").values_list("name", flat=True),
            "filters": shown,
            "board_chart_src": reverse("leaderboard-chart") + "?" + urlencode(this_page)
            if points
            else None,
            "board_chart_note": chart_note,
            "cite": selectors.latest_snapshot(filters),
        },
        request=request,
    )


APART_TITLES = (
    ("unranked", "Not ranked yet: no platform figure, or too few trades"),
    ("mask_leaks", "Mask leaks: control void"),
    ("errors", "Cells that did not complete"),
    ("failed", "Failed verification"),
    ("pending", "Pending verification"),
    ("invalid", "Invalid (network egress or aborted)"),
)


def _snapshot(snapshot_id: str) -> Snapshot:
    from pitweb.runs.api import id_or_none

    found = selectors.snapshot_by_id(id_or_none(snapshot_id))
    if found is None:
        raise Http404("no such snapshot")
    return found


def snapshot_page(request: HttpRequest, snapshot_id: str) -> HttpResponse:
    """A published board as it stood (``?format=json``: what its digest is recomputed
    from; ``?format=csv``: its rows, each with its row digest), less the rows whose runs
    were withdrawn or hidden since (their row digests only), and what has happened since
    to its other runs."""
    snapshot = _snapshot(snapshot_id)
    if request.GET.get("format") == "json":
        response = HttpResponse(selectors.snapshot_text(snapshot), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="snapshot-{snapshot.pk}.json"'
        return response
    content = selectors.snapshot_board(snapshot)
    if request.GET.get("format") == "csv":
        response = HttpResponse(
            snapshot_csv(content["board"]), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="snapshot-{snapshot.pk}.csv"'
        return response
    return render(
        request,
        "snapshot.html",
        {
            "snapshot": snapshot,
            "content": content,
            "board": content["board"],
            "filters": {k: v for k, v in content["filters"].items() if v},
            "since": selectors.snapshot_since(snapshot, content["board"]),
            "removed": sum(
                snapshots.is_removed(r) for rows in content["board"].values() for r in rows
            ),
            "apart": [
                (title, content["board"][name])
                for name, title in APART_TITLES
                if content["board"].get(name)
            ],
            "url": request.build_absolute_uri(reverse("snapshot", args=[snapshot.pk])),
        },
    )


def snapshots_page(request: HttpRequest) -> HttpResponse:
    snapshots = Snapshot.objects.defer("content").select_related("published_by")[:200]
    return render(request, "snapshots.html", {"snapshots": snapshots})


@staff_member_required
@require_POST
def snapshot_publish_action(request: HttpRequest) -> HttpResponse:
    """Staff publish a snapshot of the board drawn with the form's filters."""
    from pitweb.runs.api import _filters

    try:
        filters = _filters(SimpleNamespace(GET=request.POST, user=request.user))
    except SubmissionError as exc:
        return bad_request_page(request, f"bad filter: {exc.message}")
    filters.pop("user", None)
    back = (
        reverse("leaderboard")
        + "?"
        + urlencode(
            {k: v for k, v in filters.items() if v and k != "isolated"}
            | ({"isolated": "1"} if filters.get("isolated") else {})
        )
    )
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was done: tick the confirmation box to publish.")
        return redirect(back + "#cite")
    try:
        snapshot = services.snapshot_publish(
            filters=filters, reason=request.POST.get("reason", ""), staff=cast(User, request.user)
        )
    except SubmissionError as exc:
        messages.error(request, f"Nothing was done: {exc.message}.")
        return redirect(back + "#cite")
    messages.success(request, f"Snapshot {snapshot.pk} published.")
    return redirect(reverse("snapshot", args=[snapshot.pk]))


def family_page(request: HttpRequest, family_id: str) -> HttpResponse:
    from pitweb.runs.api import id_or_none

    found = selectors.family_attempts(request.user, id_or_none(family_id))
    if found is None:
        raise Http404("no such family")
    if request.GET.get("format") == "json":
        return JsonResponse(found)
    chart, chart_note = charts.board_scatter(found["runs"])
    return render(
        request,
        "family.html",
        {
            "family": found,
            "chart": _figure(chart) if chart is not None else None,
            "chart_note": chart_note,
        },
    )


def leaderboard_csv_page(request: HttpRequest) -> HttpResponse:
    from pitweb.runs.api import _filters

    try:
        filters = _filters(request)
    except SubmissionError as exc:
        return HttpResponse(
            f"Bad filter: {exc.message}", status=400, content_type="text/plain; charset=utf-8"
        )
    response = HttpResponse(
        leaderboard_csv(selectors.leaderboard_export(**filters)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="leaderboard.csv"'
    return response


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


P_SLOT_LABELS = {
    "P1_model_version": "P1 model version",
    "P2_training_cutoffs": "P2 training cutoff",
    "P3_retrieval_timestamps": "P3 retrieval timestamps",
    "P4_costs_and_frictions": "P4 costs and frictions",
    "P5_window_provenance": "P5 window provenance",
    "P6_disaggregation": "P6 disaggregation",
}


def _p_summary(slot: Slot) -> str:
    """One line of what a reporting slot holds."""
    if slot.status == "gap":
        return "not declared: a listed gap, never a guess"
    match slot:
        case ModelVersionSlot():
            return str(slot.declared)
        case TrainingCutoffSlot():
            return f"{slot.declared}: {_said(slot.check)} ({_said(slot.meaning)})"
        case RetrievalSlot():
            return (
                f"{slot.tool_calls} tool calls, {slot.rows_served} rows served; "
                f"{slot.acceptance_stamped_rows} of {slot.rows_in_window} rows carry an "
                f"acceptance stamp, {slot.pit_fallback_rows} fall back to published_at. "
                f"{slot.rule}"
            )
        case CostsSlot():
            prices = slot.prices
            stated = (
                f"prices declared as {prices.source!r}, pulled {prices.pulled_at} "
                f"({prices.basis} basis, not verified by the harness)"
                if prices
                else "no prices: the receipt's returns are n/a"
            )
            return (
                f"{slot.entry}, held {slot.hold_sessions} sessions; costs "
                f"{slot.costs}, slippage {slot.slippage}, shorts "
                f"{'yes' if slot.shorts else 'no'}; {stated}"
            )
        case ProvenanceSlot():
            return (
                f"release {slot.release} ({slot.source_kind or 'unknown source'}), "
                f"{slot.sessions} sessions {slot.first_session}..{slot.last_session}, "
                f"forms {', '.join(slot.forms)}"
            )
        case DisaggregationSlot():
            return f"scores per form: {', '.join(sorted(slot.by_form)) or 'none'}"
    return ""


def _said(value: object) -> str:
    """A field the body may leave out, as the page has always printed it."""
    return "None" if value is UNSET else str(value)


def _checklist(receipt: ReceiptBody) -> list[dict[str, str]]:
    return [
        {
            "slot": P_SLOT_LABELS[key],
            "kind": slot.kind.replace("_", " "),
            "status": slot.status,
            "what": _p_summary(slot),
        }
        for key, slot in receipt.protocol.slots().items()
    ]


def _grid(cells: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Cells by arm and clock: the receipt's typed cells, or the platform's figures."""
    by = [(c.arm, c.clock, c) if isinstance(c, Cell) else (c["arm"], c["clock"], c) for c in cells]
    return {arm: {clock: c for a, clock, c in by if a == arm} for arm in charts.ARM_ORDER}


def _platform_context(run: Run, proven: bool) -> dict[str, Any]:
    """The run page's platform figures and their charts, or why there are none."""
    score = run.platform if proven else None
    context: dict[str, Any] = {
        "platform": score,
        "platform_status": selectors.platform_status(run) if proven else "",
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
    if not charts.has_numbers(frame):
        context["no_chart_because"] = (
            "No trade of this run could be priced with the reference prices, so there is "
            "nothing to draw."
        )
        return context
    context["figures"]["returns"] = _figure(charts.returns_by_clock(frame))
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
        context["shifted_delta_reading"] = selectors.shifted_delta_reading(
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
            "level_words": selectors.level_words(run),
            "verdicts": selectors.header_verdicts(run),
            "family": run.family,
            "declared": selectors.DECLARED,
            "could_read_future": selectors.could_read_future(run),
            "grid": _grid(receipt.cells),
            "clocks": charts.CLOCK_ORDER,
            "probe": receipt.probe,
            "checklist": _checklist(receipt),
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
            **_platform_context(run, proven),
        },
    )


def _registered_agent(request: HttpRequest, run: Run) -> Any:
    """For staff: the registered agent an uploaded run's digest names (re-executable)."""
    if not (request.user.is_authenticated and request.user.is_staff) or run.executed:
        return None
    from pitweb.execution.services import agent_of_run

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
        response = tables.table_response(fmt, "cells", tables.CELL_COLUMNS, cells)
    elif name == "probe":
        rows = tables.probe_rows(run.receipt.probe)
        response = tables.table_response(fmt, "probe", tables.PROBE_COLUMNS, rows)
    elif name == "jobs":
        rows = tables.job_rows(selectors.job_diffs(selectors.run_jobs(run, user=request.user)))
        response = tables.table_response(fmt, "jobs", tables.JOB_COLUMNS, rows)
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
def run_status_json(request: HttpRequest, sha: str) -> JsonResponse:
    """Polled by the run page for live verification progress."""
    run = _run_or_404(request, sha)
    job = run.jobs.first()
    return JsonResponse(
        {"status": run.status, "job": job.pk if job else None, "state": job.state if job else None}
    )


@refuses_bad_queries
def run_download(request: HttpRequest, sha: str, what: str) -> FileResponse:
    from django.core.files.storage import default_storage

    run = _run_or_404(request, sha)
    name = {"trajectory": run.trajectory_name, "receipt": run.receipt_name}.get(what)
    if not name:
        raise Http404("no such artifact")
    return FileResponse(
        default_storage.open(name, "rb"),
        as_attachment=True,
        filename=f"{what}-{run.run_id}{'.jsonl' if what == 'trajectory' else '.json'}",
    )


COMPARE_MAX = 4


def _compare_runs(request: HttpRequest) -> tuple[list[Run], list[str]]:
    """The runs ?runs=a,b (a permalink) or ?run=a&run=b (the board's checkboxes) name,
    each by body hash, run id or a 12+ hex prefix, and what could not be used, in words."""
    given = [*request.GET.get("runs", "").split(","), *request.GET.getlist("run")]
    keys = list(dict.fromkeys(k.strip() for k in given if k.strip()))
    notes = []
    if len(keys) > COMPARE_MAX:
        notes.append(
            f"Only {COMPARE_MAX} runs are compared at once: {', '.join(keys[COMPARE_MAX:])} left out."
        )
        keys = keys[:COMPARE_MAX]
    visible = selectors.visible_runs(request.user).select_related("platform", "platform__prices")
    runs: list[Run] = []
    for key in keys:
        found, candidates = selectors.pick(visible, key, None)
        if found is not None:
            if found.pk not in {r.pk for r in runs}:
                runs.append(found)
        elif candidates:
            notes.append(
                f"{key} names {len(candidates)} runs: use a longer body hash "
                "(the candidates are listed on its run page)."
            )
        elif not selectors.KEY.fullmatch(key.lower().removeprefix("sha256:")):
            notes.append(f"{key[:80]} is not a run id or body hash (12 to 64 hex digits).")
        else:
            notes.append(f"{key} names no run you can see.")
    return runs, notes


def _compare_warnings(runs: list[Run]) -> list[str]:
    warnings = []
    if len({r.release_digest for r in runs}) > 1:
        warnings.append(
            "These runs are over different releases: their figures come from different "
            "filings and are not directly comparable."
        )
    versions = {
        (r.release_digest, r.platform.prices.version) for r in runs if r.platform is not None
    }
    if len({v for _, v in versions}) > 1:
        warnings.append(
            "These runs were priced with different reference-price versions: "
            + ", ".join(sorted({f"v{v}" for _, v in versions}))
            + "."
        )
    return warnings


def compare_page(request: HttpRequest) -> HttpResponse:
    runs, notes = _compare_runs(request)
    # refuted or pending runs have no numbers; proven ones are charted on platform figures
    charted = {
        f"{r.agent} {r.run_id}": charts.platform_frame(r.platform.figures["cells"])
        for r in runs
        if r.proven
        and r.platform is not None
        and r.platform.state == "scored"
        and r.platform.figures is not None
    }
    figure = charts.compare_runs(charted) if charted else None
    rows = [selectors.leaderboard_row(r) for r in runs]
    return render(
        request,
        "compare.html",
        {
            "runs": runs,
            "rows": rows,
            "notes": notes,
            "warnings": _compare_warnings(runs),
            "figure": _figure(figure) if figure else None,
            "no_chart_because": ""
            if figure
            else "None of these runs has platform figures (pending, refuted or not yet "
            "priced with reference prices), so there is nothing to draw.",
            "columns": LEADERBOARD_COLUMNS,
        },
    )


def release_page(request: HttpRequest, digest: str) -> HttpResponse:
    release = get_object_or_404(Release, content_digest=f"sha256:{digest}")
    import pandas as pd
    from django.core.files.storage import default_storage

    index_name = f"{release.storage_prefix}/index.json"
    figure = None
    if default_storage.exists(index_name):
        with default_storage.open(index_name, "rb") as handle:
            segments = json.loads(handle.read())["segments"]
        frame = pd.DataFrame(
            [{"date": s["date"], "form": s["form"], "rows": s["rows"]} for s in segments]
        )
        figure = _figure(charts.rows_per_day(frame))
    manifest = release.manifest
    if request.GET.get("format") == "json":
        return JsonResponse(manifest)
    forms = [{"form": f, "rows": n} for f, n in manifest["row_counts"]["by_form"].items()]
    exported = tables.table_response(
        request.GET.get("format", ""), "forms", ("form", "rows"), forms
    )
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
    exported = tables.table_response(
        request.GET.get("format", ""), "events", tables.EVENT_COLUMNS, rows
    )
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
        exported = tables.table_response(
            request.GET.get("format", "csv"), table, columns, data[table]
        )
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


@staff_member_required
@require_POST
@refuses_bad_queries
def staff_action(request: HttpRequest, sha: str, action: str) -> HttpResponse:
    if request.content_type not in FORM_TYPES:  # no body, or not a form: nothing to read
        return bad_request_page(request, "a staff action is posted as the run page's form")
    found = selectors.submission(Run.objects.all(), sha, submission_wanted(request.POST))
    if found is None:
        raise Http404("no such run")
    run: Run = found
    staff = cast(User, request.user)  # staff_member_required: a logged-in staff user
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
            from pitweb.execution.services import reexecution_request

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
