"""The closed sets of values the runs API returns, as the OpenAPI schema's enums: each
value with the words the pages use for it (``presentation``), so a client learns every
value (``reexecuted`` too) and what it means. ``ENUM_NAME_OVERRIDES`` (settings) names
each set by these lists; a test checks each against its model's or the harness's set."""

from __future__ import annotations

from typing import get_args

from harness.receipt.memory import MEMORY_VERDICTS
from harness.receipt.model import Verdict
from pitweb.runs.models import (
    CutoffRelation,
    JobState,
    VerificationJob,
    VerificationLevel,
    Visibility,
)
from pitweb.runs.presentation import (
    CUTOFF_WORDS,
    JOB_KIND_WORDS,
    LEVEL_WORDS,
    MASK_WORDS,
    MEMORY_WORDS,
    NOT_RUN_WORDS,
    STATE_WORDS,
    VISIBILITY_WORDS,
)

Choices = list[tuple[str, str]]

VERIFICATION_LEVEL: Choices = [(str(v), LEVEL_WORDS[v]) for v in VerificationLevel]
RUN_STATE: Choices = [(str(s), STATE_WORDS[s]) for s in JobState]
JOB_KIND: Choices = [(str(k), JOB_KIND_WORDS[k]) for k in VerificationJob.Kind]
VISIBILITY: Choices = [(str(v), VISIBILITY_WORDS[v]) for v in Visibility]
# a run's verdict: the probe's (the harness's set) or "not_run" (no probe in the receipt)
MASK_VERDICT: Choices = [
    *((v, MASK_WORDS[v]) for v in get_args(Verdict)),
    ("not_run", NOT_RUN_WORDS),
]
# a run's memory verdict on its platform figures (the harness's set)
MEMORY_VERDICT: Choices = [(v, MEMORY_WORDS[v]) for v in MEMORY_VERDICTS]
# where a run's window lies against its declared training cutoff (null: none declared)
CUTOFF_RELATION: Choices = [(str(v), CUTOFF_WORDS[v]) for v in CutoffRelation if v]
