"""The forward track's pages: the track (the log's head and every commitment), the log
itself as JSON and its head, one commitment's page (its entry as hashed, how to check it
offline), and the owner's forms to commit an agent and to withdraw a commitment."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import condition, require_POST

from harness import canonical
from harness.attest.heads import head_statement
from harness.forward.standing import METHOD
from pitweb import charts
from pitweb.core.errors import SubmissionError, error_body
from pitweb.core.params import id_or_none
from pitweb.core.signing import now_stamp, signing_key, site_sign
from pitweb.core.tables import document_response, table_response
from pitweb.forward import selectors, services, standings
from pitweb.forward.forms import CommitForm, WithdrawForm
from pitweb.forward.models import Commitment

COLUMNS = (
    "seq", "agent", "agent_digest", "submitter", "release", "release_digest", "forms",
    "hold_sessions", "clocks", "arms", "model_version", "training_cutoff", "committed_at",
    "entry_digest", "state", "withdrawn_by_entry", "forward_runs",
)  # fmt: skip


# the site's published key set, served at this well-known address by the certificates app


RUN_COLUMNS = (
    "seq", "agent", "kind", "release_version", "release_digest", "start", "end", "sessions",
    "status", "problems", "run_id", "level", "clock", "priced", "priced_through", "prices_end",
    "main_return",
    "shifted_return", "priced_trades", "trades",
)  # fmt: skip


def _head_etag(request: HttpRequest, *args: Any) -> str:
    """The log's address changes only with its head: a cache revalidates (``no-cache``)
    and is answered 304 until an entry is appended."""
    head = selectors.log_head()
    return f"{head['seq']}-{head['digest'] or 'empty'}"


def forward_page(request: HttpRequest) -> HttpResponse:
    rows = selectors.commitment_rows(selectors.public_commitments())
    runs = selectors.forward_run_rows()
    wanted = request.GET.get("format", "")
    if request.GET.get("table") == "runs":
        exported = table_response(wanted, "forward-runs", RUN_COLUMNS, runs)
    else:
        exported = table_response(wanted, "commitments", COLUMNS, rows)
    if exported is not None:
        return exported
    return render(
        request,
        "forward/track.html",
        {"head": selectors.log_head(), "rows": rows, "runs": runs,
         "log_url": request.build_absolute_uri(reverse("forward-log")),
         "signed_head_url": request.build_absolute_uri(reverse("forward-log-head-signed")),
         "keys_url": request.build_absolute_uri(reverse("signing-keys"))},
    )  # fmt: skip


@condition(etag_func=_head_etag)
def log_json(request: HttpRequest) -> HttpResponse:
    """The whole log, each entry's stored body as it was hashed."""
    return document_response(selectors.log_document(), filename="commitments-log.json")


@condition(etag_func=_head_etag)
def head_json(request: HttpRequest) -> HttpResponse:
    return document_response(selectors.log_head())


def head_signed_json(request: HttpRequest) -> HttpResponse:
    """The log's head signed by the site now (``harness.attest.heads``): the DSSE
    envelope a reader keeps and later passes to ``pit-harness commitments verify
    --signed-head``. Apart from ``head.json``, whose body and ETag stay the head's alone:
    this one's bytes change with the time it is signed at, so it has no ETag."""
    head = selectors.log_head()
    if not head["seq"]:
        return JsonResponse(
            error_body("empty_log", "the commitment log is empty: it has no head to sign"),
            status=404,
        )
    signing_key()  # a key made on first use is made before the time it signs at
    return document_response(site_sign(head_statement(head["seq"], head["digest"], now_stamp())))


def _detail_or_404(seq: str) -> selectors.CommitmentDetail:
    found = selectors.commitment_by_seq(seq)
    if found is None:
        raise Http404("no such commitment")
    return found


def _commitment_page(
    request: HttpRequest, found: selectors.CommitmentDetail, form: WithdrawForm, status: int = 200
) -> HttpResponse:
    user = request.user
    commitment = found.commitment
    may_withdraw = (
        user.is_authenticated
        and (user.is_staff or commitment.owner_id == user.pk)
        and commitment.live
    )
    return render(
        request,
        "forward/commitment.html",
        {
            "c": commitment,
            "row": selectors.commitment_rows([commitment])[0],
            "entry": found.entry,
            "entry_json": canonical.line(found.entry.body),
            "withdrawal": found.withdrawal,
            "withdrawal_json": canonical.line(found.withdrawal.body) if found.withdrawal else "",
            "runs": found.runs,
            "head": selectors.log_head(),
            "log_url": request.build_absolute_uri(reverse("forward-log")),
            "may_withdraw": may_withdraw,
            "form": form,
        },
        status=status,
    )


def commitment_page(request: HttpRequest, seq: str) -> HttpResponse:
    found = selectors.commitment_by_seq(seq)
    if found is None:
        # a withdraw entry's number: the page of the commitment it withdrew
        number = id_or_none(seq)
        withdrawn = Commitment.objects.filter(withdrawal__seq=number or 0)
        target = withdrawn.select_related("entry").first()
        if target is None:
            raise Http404("no such commitment")
        return redirect(reverse("forward-commitment", args=[target.entry.seq]) + "#withdrawal")
    return _commitment_page(request, found, WithdrawForm())


@login_required
@require_POST
def withdraw_action(request: HttpRequest, seq: str) -> HttpResponse:
    found = _detail_or_404(seq)
    form = WithdrawForm(request.POST)
    if form.is_valid():
        user = request.user
        assert isinstance(user, User)
        try:
            row = services.commitment_withdraw(
                by=user, commitment=found.commitment, reason=form.cleaned_data["reason"]
            )
        except SubmissionError as exc:
            form.add_error(None, exc.message)
            return _commitment_page(request, found, form, status=exc.http_status)
        seq_of = found.entry.seq
        messages.success(request, f"Commitment {seq_of} withdrawn: log entry {row.seq}.")
        return redirect(reverse("forward-commitment", args=[seq_of]))
    return _commitment_page(request, found, form, status=400)


@login_required
def commit_page(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?agent=`` chooses the agent); POST: the commitment, then its page."""
    user = request.user
    assert isinstance(user, User)
    if request.method != "POST":
        form = CommitForm(user=user, initial={"agent": request.GET.get("agent", "")})
        return render(request, "forward/commit.html", {"form": form})
    form = CommitForm(request.POST, user=user)
    if form.is_valid():
        data = form.cleaned_data
        try:
            commitment = services.commitment_create(
                by=user, agent=form.chosen_agent(), release=form.chosen_release(),
                forms=data["forms"], hold_sessions=data["hold_sessions"], clocks=data["clocks"],
                arms=data["arms"], model_version=data["model_version"],
                training_cutoff=data["training_cutoff"],
            )  # fmt: skip
        except SubmissionError as exc:
            form.add_error(None, exc.message)
        else:
            seq = commitment.entry.seq
            messages.success(request, f"Committed: log entry {seq}.")
            return redirect(reverse("forward-commitment", args=[seq]))
    return render(request, "forward/commit.html", {"form": form}, status=400)


BOARD_COLUMNS = (
    "position", "rank_low", "rank_high", "ranked", "needs_trades", "seq", "agent", "submitter",
    "agent_digest", "state", "committed_at", "commitments", "ranked_confidence", "clock",
    "forward_from", "forward_to", "forward_sessions", "forward_versions", "forward_trades",
    "forward_priced_trades", "forward_return", "forward_interval_95",
    "forward_interval_family_wise", "backtest_from", "backtest_to", "backtest_sessions",
    "backtest_priced_trades", "backtest_return", "backtest_interval_95", "decay",
    "decay_interval_95", "backtest_delta_shifted", "backtest_delta_shifted_interval",
    "model_version", "training_cutoff", "cutoff_precedes_backtest", "run_shas",
)  # fmt: skip
CURVE_COLUMNS = ("agent", "date", "days", "trades", "forward_return")


def forward_board_page(request: HttpRequest) -> HttpResponse:
    """The forward board of one benchmark (``?benchmark=<key>``, or the only one), its
    table as CSV or JSON (``?format=``; ``?table=curves`` for the curves' points)."""
    boards = standings.forward_boards()
    wanted = request.GET.get("benchmark") or None
    board = standings.board_of(wanted, boards)
    if wanted is not None and board is None:
        raise Http404("no forward benchmark has that key")
    fmt = request.GET.get("format", "")
    if board is not None:
        if request.GET.get("table") == "curves":
            points = [
                {"agent": name, **point} for name, curve in board.curves.items() for point in curve
            ]
            exported = table_response(fmt, "forward-curves", CURVE_COLUMNS, points)
        else:
            exported = table_response(fmt, "forward-board", BOARD_COLUMNS, board.rows)
        if exported is not None:
            return exported
    figures = {}
    if board is not None:
        decay = charts.forward_decay(board.rows)
        curves = charts.forward_curves(board.curves)
        figures = {
            "decay": None if decay is None else json.loads(decay.to_json()),
            "curves": None if curves is None else json.loads(curves.to_json()),
        }
    return render(
        request,
        "forward/board.html",
        {"boards": boards, "board": board, "figures": figures, "method": METHOD,
         "min_trades": settings.PITWEB_MIN_RANKED_TRADES},
    )  # fmt: skip
