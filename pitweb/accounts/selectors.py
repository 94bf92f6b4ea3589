"""Accounts' reads: a person's tokens, the staff's invitations, and the account page's
lists of what a person owns (their runs, private ones included; answer sets; executions;
families). Each list is one query (or two with its prefetch), however long it is.

The account page reads the apps built on accounts; the rest of accounts (models,
services, the token's authentication) is a foundation they import, and imports none of
them (the import contract in pyproject.toml names these two modules as the exception).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Prefetch, Q, QuerySet

from pitweb.accounts.models import ApiToken, Invitation
from pitweb.execution.models import ExecutionJob
from pitweb.points.models import AnswerSet, JudgedSet
from pitweb.runs.models import Family, Run

# the account page lists this many of each, newest first (the API lists every run)
LISTED = 200


def tokens_of(user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("revoked", "-created_at", "-id")


def invitations() -> QuerySet[Invitation]:
    return Invitation.objects.select_related("created_by", "used_by")


def runs_of(user: User) -> QuerySet[Run]:
    """Every run ``user`` submitted: private, hidden and withdrawn ones included."""
    return (
        Run.objects.filter(submitter=user)
        .select_related("release")
        .order_by("-submitted_at", "-pk")[:LISTED]
    )


def answer_sets_of(user: User) -> QuerySet[AnswerSet]:
    judged = JudgedSet.objects.order_by("-pk")
    return (
        AnswerSet.objects.filter(submitter=user)
        .select_related("point_set")
        .prefetch_related(Prefetch("judged", queryset=judged, to_attr="judged_newest_first"))
        .order_by("-created_at", "-pk")[:LISTED]
    )


def executions_of(user: User) -> QuerySet[ExecutionJob]:
    """Executions of an agent ``user`` owns or asked for, and re-executions of their runs."""
    return (
        ExecutionJob.objects.filter(
            Q(agent__owner=user) | Q(requested_by=user) | Q(checked__submitter=user)
        )
        .select_related("agent", "release", "made", "checked")
        .distinct()
        .order_by("-created_at", "-pk")[:LISTED]
    )


def families_of(user: User) -> QuerySet[Family]:
    return Family.objects.filter(submitter=user).order_by("-last_at", "-pk")[:LISTED]


@dataclass(frozen=True)
class AccountPage:
    tokens: QuerySet[ApiToken]
    runs: QuerySet[Run]
    answer_sets: QuerySet[AnswerSet]
    executions: QuerySet[ExecutionJob]
    families: QuerySet[Family]


def account_page(user: User) -> AccountPage:
    return AccountPage(
        tokens=tokens_of(user),
        runs=runs_of(user),
        answer_sets=answer_sets_of(user),
        executions=executions_of(user),
        families=families_of(user),
    )
