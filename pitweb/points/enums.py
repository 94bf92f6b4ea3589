"""The closed sets of values the points API returns, as the OpenAPI schema's enums (as
``pitweb.runs.enums`` does for runs): each value with the words the points pages use
for it (``words``, and the pages' own explanations after it), so a client learns every
error class, outcome and judge status and what it means. ``ENUM_NAME_OVERRIDES``
(settings) names each set by these lists; a test checks each against the harness's or
the model's whole set."""

from __future__ import annotations

from django.utils.text import capfirst

from harness.points.gates import UNRELIABLE, USABLE
from harness.points.metrics import CLASSES, FAIL, HARNESS_ERROR, PASS
from pitweb.points.models import STATE_WORDS, AnswerSet, JudgedSet, PointSet, PointSetState
from pitweb.runs.presentation import words

Choices = list[tuple[str, str]]

# a verdict's outcome: seed 004's three, as the judged set's page explains them
OUTCOME_WORDS = {
    PASS: "the judge called the answer completely correct",
    FAIL: "the judge found one of the five errors in the answer",
    HARNESS_ERROR: "no usable verdict (the judge unreachable or unreadable); outside every "
    "denominator, never the answer's result",
}
# what the judge's controls made of a judged set (its page's "status")
RELIABILITY_WORDS = {
    USABLE: "its judge held its controls; its figures are shown",
    UNRELIABLE: "its judge failed its controls; no figure is shown, it is never ranked, "
    "and the rule it broke is said",
    JudgedSet.Status.IMPORTED: "the artifact's own judge, checked against its raw replies, "
    "but not controlled here; shown, never ranked",
}
JUDGED_ORIGIN_WORDS = {
    JudgedSet.Origin.IMPORTED: "the verdicts of the artifact's own judge, checked against "
    "its raw replies",
    JudgedSet.Origin.SITE: "the site's judge, with its controls and gates",
}
ANSWER_ORIGIN_WORDS = {
    AnswerSet.Origin.IMPORTED: "from a PITFALL judged artifact",
    AnswerSet.Origin.UPLOADED: "uploaded by a submitter",
    AnswerSet.Origin.ANSWERED: "answered by the site's workers",
}


ANSWER_TIMING_WORDS = {
    AnswerSet.Timing.BEFORE_REVEAL: "received while its set was sealed: committed before the "
    "labels were public (formal, ranked on the points board)",
    AnswerSet.Timing.AFTER_REVEAL: "received once its set's labels were public: judged, "
    "listed apart, never ranked with the formal results",
    AnswerSet.Timing.OPEN: "a public set's: development data, never ranked",
}


def _said(value: str, why: str) -> str:
    return f"{words(value)}: {why}"


# the class a page heads a column with: "Numeric factual error"
JUDGED_CLASS: Choices = [(c, capfirst(words(c))) for c in CLASSES]
OUTCOME: Choices = [(o, _said(o, why)) for o, why in OUTCOME_WORDS.items()]
RELIABILITY: Choices = [(str(s), _said(s, RELIABILITY_WORDS[s])) for s in JudgedSet.Status]
POINT_SET_STATE: Choices = [
    (str(s), STATE_WORDS[s].format(when="its reveal date")) for s in PointSetState
]
JUDGED_ORIGIN: Choices = [(str(o), _said(o, JUDGED_ORIGIN_WORDS[o])) for o in JudgedSet.Origin]
POINT_SET_KIND: Choices = [
    (str(PointSet.Kind.FIXED), "fixed: point files whose Ground Truth existed when the set was made"),
    (str(PointSet.Kind.LIVE_SHADOW), "live_shadow: Questions whose outcome did not exist yet, "
     "each resolved after its resolution date"),
]  # fmt: skip
ANSWER_TIMING: Choices = [(str(t), _said(t, ANSWER_TIMING_WORDS[t])) for t in AnswerSet.Timing]
ANSWER_ORIGIN: Choices = [(str(o), _said(o, ANSWER_ORIGIN_WORDS[o])) for o in AnswerSet.Origin]
