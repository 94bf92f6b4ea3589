"""The board's pages: each benchmark's board (its table, chart JSON and CSV), the
benchmarks a query reaches listed grouped (ranked across none), the board's old
addresses sent on to their benchmark, a family's attempts, the published snapshots, and
runs compared side by side. Filter state lives in the URL; every table has CSV and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST

from harness import canonical
from harness import snapshot as snapshots
from harness.rundata.benchmark import is_key
from pitweb import charts
from pitweb.accounts.access import staff_required
from pitweb.board import cache as boardcache
from pitweb.board import selectors
from pitweb.board.benchmarks import benchmark_by_key, board_scope
from pitweb.board.exports import LEADERBOARD_COLUMNS, leaderboard_csv, snapshot_csv
from pitweb.board.families import family_attempts
from pitweb.board.filters import BoardQuery, board_filters, board_query, pinned
from pitweb.board.models import Snapshot
from pitweb.board.query import PAGE_ROWS
from pitweb.board.rows import APART_TITLES, leaderboard_row
from pitweb.board.services import snapshot_publish
from pitweb.board.snapshots import (
    latest_snapshot,
    signed_snapshot,
    snapshot_board,
    snapshot_by_id,
    snapshot_chain,
    snapshot_signer,
    snapshot_since,
    snapshot_text,
)
from pitweb.board.stamp import board_stamp
from pitweb.core.errors import SubmissionError, bad_request_page, error_body
from pitweb.core.params import id_or_none
from pitweb.releases.models import Release
from pitweb.runs import selectors as run_selectors
from pitweb.runs.models import Benchmark, Run
from pitweb.runs.presentation import agent_name

# what stays in the address when a query is sent on to one benchmark's board
KEPT = ("isolated", "cutoff", "page", "after", "before")
# the site's published key set (pitweb.core.signing.published_keys), served at this
# well-known address by the certificates app


def _figure(figure: Any) -> Any:
    return json.loads(figure.to_json())


def _served_board(
    request: HttpRequest,
    kind: str,
    query: BoardQuery,
    answer: Callable[[dict[str, Any]], str],
) -> str:
    """``answer`` of the board page the query asks for, cached under ``kind``.

    The public page is rendered once per board version and stored-board computation,
    for each query the board links to (``cache``), one render at a time. A page asked
    for by cursor is read from the stored board each time (cursors are countless, the
    cache is not); a signed-in user's holds their own runs and is never cached."""
    filters, page, (after, before) = query
    key = None
    if not request.user.is_authenticated and not (after or before):
        stamp = board_stamp()
        hit = boardcache.cached(kind, stamp, filters, page)
        if hit is not None:
            return cast(str, hit)
        key = boardcache.key(kind, stamp, filters, page, rows=PAGE_ROWS)

    def draw() -> tuple[str, bool]:
        board = selectors.leaderboard(
            **filters, page=page, per_page=PAGE_ROWS, after=after, before=before
        )
        return answer(board), board["current"]

    return boardcache.served(key, draw)


def _benchmark(key: str) -> Benchmark:
    """The benchmark a board address names (a 404 for anything else, crafted or not)."""
    found = benchmark_by_key(key) if is_key(key) else None
    if found is None:
        raise Http404("no such benchmark")
    return found


def _kept(request: HttpRequest) -> str:
    kept = {k: v for k, v in request.GET.items() if k in KEPT and v}
    return "?" + urlencode(kept) if kept else ""


def benchmarks_page(request: HttpRequest) -> HttpResponse:
    """The boards a query reaches: one benchmark's (redirected to), or several, their
    runs grouped by benchmark and ranked across none."""
    try:
        query = board_query(request.GET, request.user)
    except SubmissionError as exc:
        return render(request, "400.html", {"message": f"Bad filter: {exc.message}."}, status=400)
    scope = board_scope(request.user, query.filters)
    if not isinstance(scope, list):
        return redirect(reverse("benchmark", args=[scope.key]) + _kept(request))
    if query.filters.get("benchmark"):
        raise Http404("no such benchmark")
    filters = query.filters
    board = selectors.leaderboard(**filters, per_page=PAGE_ROWS)
    shown = {k: filters[k] or "" for k in ("release", "form", "start", "end")}
    shown["isolated"] = "1" if filters["isolated"] else ""
    shown["cutoff"] = filters["cutoff"] or ""
    groups = [
        group | {"rows": [r for r in board["ranked"] if r["benchmark"] == group["key"]]}
        for group in board["benchmarks"]
    ]
    return render(
        request,
        "board_groups.html",
        {
            "board": board,
            "groups": groups,
            "filters": shown,
            "query": urlencode({k: v for k, v in shown.items() if v}),
            "releases": Release.objects.order_by("name").values_list("name", flat=True),
        },
    )


def benchmark_page(request: HttpRequest, key: str) -> HttpResponse:
    """One benchmark's board: the only place runs are ranked. A cached page is served on
    the board's stamp alone; an unknown key (never cached: no public run has it) is
    found out when the board is drawn, and is a 404."""
    if not is_key(key):
        raise Http404("no such benchmark")
    try:
        query = _pinned_query(request, key)
    except SubmissionError as exc:
        return render(request, "400.html", {"message": f"Bad filter: {exc.message}."}, status=400)
    return HttpResponse(
        _served_board(
            request, "board-page", query, lambda board: _leaderboard_html(request, board, query)
        )
    )


def _pinned_query(request: HttpRequest, key: str) -> BoardQuery:
    query = board_query(request.GET, request.user)
    return query._replace(filters=pinned(key, query.filters))


def _one(board: dict[str, Any]) -> dict[str, Any]:
    """The benchmark of a board drawn for one key (a 404 when the key names none)."""
    if board["grouped"]:
        raise Http404("no such benchmark")
    return cast(dict[str, Any], board["benchmark"])


def benchmark_chart(request: HttpRequest, key: str) -> HttpResponse:
    """The chart of a benchmark's board page with the same query (page or cursor), as
    Plotly's figure JSON (``figure``: null when no run has both figures) and its ``note``.
    The page fetches it once it has loaded, with Plotly: the table comes first."""
    if not is_key(key):
        raise Http404("no such benchmark")
    try:
        query = _pinned_query(request, key)
    except SubmissionError as exc:
        return JsonResponse(error_body(exc.code, exc.message), status=exc.http_status)

    def answer(board: dict[str, Any]) -> str:
        _one(board)
        figure, note = charts.board_scatter([*board["ranked"], *board["mask_leaks"]])
        drawn = figure.to_json() if figure is not None else "null"
        return f'{{"figure": {drawn}, "note": {json.dumps(note)}}}'

    return HttpResponse(
        _served_board(request, "board-chart", query, answer), content_type="application/json"
    )


def old_chart(request: HttpRequest) -> HttpResponse:
    """The chart's old address: sent to the one benchmark its query reaches, else no
    figure (a chart never draws two benchmarks' runs as one board)."""
    try:
        filters = board_query(request.GET, request.user).filters
    except SubmissionError as exc:
        return JsonResponse(error_body(exc.code, exc.message), status=exc.http_status)
    scope = board_scope(request.user, filters)
    if not isinstance(scope, list):
        return redirect(reverse("benchmark-chart", args=[scope.key]) + _kept(request))
    note = "these runs span several benchmarks: each has its own board" if scope else ""
    return JsonResponse({"figure": None, "note": note})


def _leaderboard_html(
    request: HttpRequest,
    board: dict[str, Any],
    query: BoardQuery,
) -> str:
    benchmark = _one(board)
    filters, page, (after, before) = query
    # what the chart will draw, said now; the chart itself is fetched after the page loads
    points, chart_note = charts.board_points([*board["ranked"], *board["mask_leaks"]])
    shown = {"isolated": "1" if filters["isolated"] else "", "cutoff": filters.get("cutoff") or ""}
    this_page = {k: v for k, v in shown.items() if v}
    this_page |= {"page": str(page)} if page > 1 else {}
    this_page |= {k: v for k, v in (("after", after), ("before", before)) if v}
    return render_to_string(
        "leaderboard.html",
        {
            "board": board,
            "query": urlencode({k: v for k, v in shown.items() if v}),
            "pagination": board["pagination"],
            "benchmark": benchmark,
            "apart_empty": not any(board[name] for name, _ in APART_TITLES),
            "filters": shown,
            "publish_filters": {"benchmark": benchmark["key"], **shown},
            "board_chart_src": reverse("benchmark-chart", args=[benchmark["key"]])
            + "?"
            + urlencode(this_page)
            if points
            else None,
            "board_chart_note": chart_note,
            "cite": latest_snapshot(filters),
        },
        request=request,
    )


def _snapshot(snapshot_id: str) -> Snapshot:
    found = snapshot_by_id(id_or_none(snapshot_id))
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
        response = HttpResponse(snapshot_text(snapshot), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="snapshot-{snapshot.pk}.json"'
        return response
    content = snapshot_board(snapshot)
    if request.GET.get("format") == "csv":
        response = HttpResponse(
            snapshot_csv(content["board"]), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="snapshot-{snapshot.pk}.csv"'
        return response
    place = snapshot_chain(snapshot)
    return render(
        request,
        "snapshot.html",
        {
            "snapshot": snapshot,
            "content": content,
            "board": content["board"],
            "filters": {k: v for k, v in content["filters"].items() if v},
            "benchmark": benchmark_by_key(content["filters"].get("benchmark")),
            "since": snapshot_since(snapshot, content["board"]),
            "removed": sum(
                snapshots.is_removed(r) for rows in content["board"].values() for r in rows
            ),
            "apart": [
                (title, content["board"][name])
                for name, title in APART_TITLES
                if content["board"].get(name)
            ],
            "url": request.build_absolute_uri(reverse("snapshot", args=[snapshot.pk])),
            "signer": snapshot_signer(snapshot),
            "place": place,
            "chain_urls": [
                request.build_absolute_uri(reverse("snapshot-signed", args=[link.pk]))
                for link in place.chain
            ],
            "keys_url": request.build_absolute_uri(reverse("signing-keys")),
        },
    )


def snapshot_signed(request: HttpRequest, snapshot_id: str) -> HttpResponse:
    """A snapshot's signed form, what ``pit-harness snapshot verify --keys`` checks: the
    snapshot as the public may see it now and the site's signature over its digest."""
    snapshot = snapshot_by_id(id_or_none(snapshot_id))
    if snapshot is None:
        return JsonResponse(error_body("not_found", "no such snapshot"), status=404)
    document = signed_snapshot(snapshot)
    if document is None:
        return JsonResponse(
            error_body(
                "not_signed",
                f"snapshot {snapshot.pk} was published before snapshots were signed: its "
                f"JSON ({reverse('snapshot', args=[snapshot.pk])}?format=json) and content "
                "digest are all there is to check",
            ),
            status=404,
        )
    response = HttpResponse(canonical.line(document), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="snapshot-{snapshot.pk}.signed.json"'
    return response


def snapshots_page(request: HttpRequest) -> HttpResponse:
    snapshots = Snapshot.objects.defer("content").select_related("published_by")[:200]
    return render(request, "snapshots.html", {"snapshots": snapshots})


@staff_required
@require_POST
def snapshot_publish_action(request: HttpRequest) -> HttpResponse:
    """Staff publish a snapshot of the board drawn with the form's filters."""
    try:
        filters = board_filters(request.POST, request.user)
    except SubmissionError as exc:
        return bad_request_page(request, f"bad filter: {exc.message}")
    filters.pop("user", None)
    asked = {k: v for k, v in filters.items() if v and k not in ("isolated", "benchmark")}
    asked |= {"isolated": "1"} if filters.get("isolated") else {}
    back = (
        reverse("benchmark", args=[filters["benchmark"]])
        if filters.get("benchmark") and benchmark_by_key(filters["benchmark"])
        else reverse("leaderboard")
    ) + ("?" + urlencode(asked) if asked else "")
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was done: tick the confirmation box to publish.")
        return redirect(back + "#cite")
    try:
        snapshot = snapshot_publish(
            filters=filters, reason=request.POST.get("reason", ""), staff=cast(User, request.user)
        )
    except SubmissionError as exc:
        messages.error(request, f"Nothing was done: {exc.message}.")
        return redirect(back + "#cite")
    messages.success(request, f"Snapshot {snapshot.pk} published.")
    return redirect(reverse("snapshot", args=[snapshot.pk]))


def family_page(request: HttpRequest, family_id: str) -> HttpResponse:
    found = family_attempts(request.user, id_or_none(family_id))
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
    """The board as CSV at its old address: sent to the one benchmark's CSV its query
    reaches, else every benchmark's rows grouped, ranked across none."""
    try:
        filters = board_filters(request.GET, request.user)
    except SubmissionError as exc:
        return HttpResponse(
            f"Bad filter: {exc.message}", status=400, content_type="text/plain; charset=utf-8"
        )
    scope = board_scope(request.user, filters)
    if not isinstance(scope, list):
        return redirect(reverse("benchmark-csv", args=[scope.key]) + _kept(request))
    return _csv(filters)


def benchmark_csv(request: HttpRequest, key: str) -> HttpResponse:
    """One benchmark's whole board as CSV."""
    benchmark = _benchmark(key)
    try:
        filters = board_filters(request.GET, request.user)
    except SubmissionError as exc:
        return HttpResponse(
            f"Bad filter: {exc.message}", status=400, content_type="text/plain; charset=utf-8"
        )
    return _csv(pinned(benchmark.key, filters))


def _csv(filters: dict[str, Any]) -> HttpResponse:
    response = HttpResponse(
        leaderboard_csv(selectors.leaderboard_export(**filters)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="leaderboard.csv"'
    return response


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
    visible = run_selectors.visible_runs(request.user).select_related(
        "platform", "platform__prices"
    )
    runs: list[Run] = []
    for key in keys:
        found, candidates = run_selectors.pick(visible, key, None)
        if found is not None:
            if found.pk not in {r.pk for r in runs}:
                runs.append(found)
        elif candidates:
            notes.append(
                f"{key} names {len(candidates)} runs: use a longer body hash "
                "(the candidates are listed on its run page)."
            )
        elif not run_selectors.KEY.fullmatch(key.lower().removeprefix("sha256:")):
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
        f"{agent_name(r.agent)} {r.run_id}": charts.platform_frame(r.platform.figures["cells"])
        for r in runs
        if r.proven
        and r.platform is not None
        and r.platform.state == "scored"
        and r.platform.figures is not None
    }
    figure = charts.compare_runs(charted) if charted else None
    rows = [leaderboard_row(r) for r in runs]
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
