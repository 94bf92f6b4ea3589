"""Writes for judged points, one module per idea: point sets (``point_sets``: an upload,
the reveal), live-shadow cohorts (``live``: sealed, resolved, finalized), the points jobs
(``jobs``: models, requests, dispatch, the sweep's share) and the answer and judged sets
they make (``answers``: the workers' results, a submitter's upload, PITFALL's import), and
PITFALL's own cohorts' artifacts (``pitfall``).
Callers use this package's names; the modules import one way (``live`` -> ``answers`` ->
``jobs`` -> ``point_sets``), and none of them imports ``work``: the work calls these
services, never the reverse.
"""

from pitweb.points.services.answers import (
    answer_job_finish,
    answer_set_store,
    answer_set_upload,
    judge_job_finish,
    pitfall_import,
    point_set_reveal,
    sealed_answers_judge,
)
from pitweb.points.services.jobs import (
    answer_job_request,
    enqueue_points_job,
    judge_job_request,
    model_register,
    points_job_finish,
    points_requeue_stale,
)
from pitweb.points.services.live import live_cohort_create, live_point_resolve
from pitweb.points.services.pitfall import pitfall_artifacts_import
from pitweb.points.services.point_sets import (
    point_set_create,
    point_set_upload,
)

__all__ = [
    "answer_job_finish",
    "answer_job_request",
    "answer_set_store",
    "answer_set_upload",
    "enqueue_points_job",
    "judge_job_finish",
    "judge_job_request",
    "live_cohort_create",
    "live_point_resolve",
    "model_register",
    "pitfall_artifacts_import",
    "pitfall_import",
    "point_set_create",
    "point_set_reveal",
    "point_set_upload",
    "points_job_finish",
    "points_requeue_stale",
    "sealed_answers_judge",
]
