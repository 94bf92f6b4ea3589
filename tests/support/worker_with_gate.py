"""A Celery worker whose verification (or, with PITWEB_TEST_GATE_AT=score, whose
platform scoring; with =cell, whose execution cell) stops at a gate: it writes STARTED, then waits for a file that never
comes. The integration test kills it there, mid-job."""

import os
import sys
import time
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitweb.settings")
django.setup()

import pitweb.execution.work as execution  # noqa: E402
import pitweb.pricing.scoring as scoring  # noqa: E402
import pitweb.runs.verification as verification  # noqa: E402
from pitweb import celery_app  # noqa: E402

gate = Path(os.environ["PITWEB_TEST_GATE"])


def held(*args: object, **kwargs: object) -> object:
    gate.with_suffix(".started").write_text(str(os.getpid()))
    while not gate.exists():  # released only by a test that wants the job to finish
        time.sleep(0.05)
    raise SystemExit("gate opened")


if os.environ.get("PITWEB_TEST_GATE_AT") == "score":
    scoring.rescore = held  # type: ignore[assignment]
elif os.environ.get("PITWEB_TEST_GATE_AT") == "cell":
    execution.run_cell = held  # type: ignore[assignment]
else:
    verification.rederive = held  # type: ignore[assignment]
celery_app.worker_main(
    ["worker", "--pool=solo", "--loglevel=WARNING", "-n", "gated@%h", *sys.argv[1:]]
)
