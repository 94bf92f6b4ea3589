"""The submitter's forms on the forward track: what they ask for, read into the types the
services take (the rules themselves are the services')."""

from __future__ import annotations

from django import forms as f
from django.contrib.auth.models import User

from harness.vocabulary import ARMS, CLOCKS
from pitweb.execution.models import RegisteredAgent
from pitweb.execution.services import release_forms
from pitweb.forward.services import HOLD_MAX
from pitweb.releases.models import Release


def newest_releases() -> list[Release]:
    """The releases a commitment may enter: each the newest version of its line (no
    version the site holds grows it)."""
    return list(Release.objects.filter(children__isnull=True))


def release_forms_of(releases: list[Release]) -> list[str]:
    return sorted({name for r in releases for name in release_forms(r)})


class CommitForm(f.Form):
    agent = f.ChoiceField()
    release = f.ChoiceField()
    forms = f.MultipleChoiceField(widget=f.CheckboxSelectMultiple)
    hold_sessions = f.IntegerField(min_value=1, max_value=HOLD_MAX, initial=5)
    clocks = f.MultipleChoiceField(
        choices=[(c, c) for c in CLOCKS], widget=f.CheckboxSelectMultiple, initial=list(CLOCKS)
    )
    arms = f.MultipleChoiceField(
        choices=[(a, a) for a in ARMS], widget=f.CheckboxSelectMultiple, initial=list(ARMS)
    )
    model_version = f.CharField(max_length=500, required=False)
    training_cutoff = f.CharField(max_length=10, required=False)

    def __init__(self, *args: object, user: User, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.agents = list(RegisteredAgent.objects.filter(owner=user).order_by("name"))
        self.releases = newest_releases()
        # an HTTP agent is offered too, so that its refusal says why (the service's words)
        self.fields["agent"].choices = [(a.name, a.name) for a in self.agents]  # type: ignore[attr-defined]
        self.fields["release"].choices = [  # type: ignore[attr-defined]
            (r.content_digest, r.name) for r in self.releases
        ]
        self.fields["forms"].choices = [(name, name) for name in release_forms_of(self.releases)]  # type: ignore[attr-defined]

    def chosen_agent(self) -> RegisteredAgent:
        return next(a for a in self.agents if a.name == self.cleaned_data["agent"])

    def chosen_release(self) -> Release:
        return next(r for r in self.releases if r.content_digest == self.cleaned_data["release"])


class WithdrawForm(f.Form):
    reason = f.CharField(max_length=500)
