"""The judged-point site's test fixtures and helpers: point files zipped as staff upload
them, a four-point set, the loopback chat server, and the jobs that
answer and judge a set through the real services."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.points import services
from pitweb.points.engine import engine_points
from pitweb.points.models import AnswerSet, JudgedSet, ModelEndpoint, PointSet
from tests.support.chat_server import Chat, serving

META = (Path(__file__).resolve().parents[2] / "examples" / "points" / "META.md").read_text()
SECRET_TRUTH = "The answer is forty-two thousand and seven"
SECRET_SOURCE = "Provenance kept in the vault, row 9931"


def point_file(point_id: str, question: str, truth: str, provenance: str) -> str:
    return (
        f"# {point_id}\n\n## Question\n\n{question}\n\n## Ground Truth\n\n<details>\n"
        f"<summary>Hidden during evaluation</summary>\n\n{truth}\n\n</details>\n\n"
        f"## Provenance\n\n<details>\n<summary>Expand for audit</summary>\n\n{provenance}\n\n"
        "</details>\n"
    )


def point_files(count: int = 3) -> dict[str, str]:
    files = {"points/META.md": META}
    for n in range(count):
        files[f"points/suite-{n % 2}/p-{n}.md"] = point_file(
            f"p-{n}", f"What is figure {n}?", f"{SECRET_TRUTH} ({n}).", f"{SECRET_SOURCE}-{n}"
        )
    return files


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.fixture()
def chat() -> Iterator[tuple[Chat, str]]:
    with serving() as served:
        yield served


@pytest.fixture()
def point_set(staff: User) -> PointSet:
    """A public set of four points, uploaded by staff."""
    archive = io.BytesIO(zipped(point_files(4)))
    return services.point_set_upload(
        user=staff, name="four", title="", archive=archive, state="public", reveal_on=None
    )


def knows_first(chat: Chat, point_set: PointSet) -> None:
    """The agent answers the first point with its Ground Truth, the rest wrongly."""
    truths = {p.question: p.ground_truth for p in engine_points(point_set)}
    first = engine_points(point_set)[0].question
    chat.agent = lambda question, n: truths[question] if question == first else "It is 99."


def endpoints(url: str, **judge: Any) -> tuple[ModelEndpoint, ModelEndpoint]:
    """An agent and the pinned judge, both served at ``url``."""
    agent = services.model_register(user=None, name="agent", base_url=url, model="agent-x")
    judged = services.model_register(
        user=None, name="judge", base_url=url, model="gpt-5.6-sol", effort="xhigh", **judge
    )
    return agent, judged


def answered_by(point_set: PointSet, agent: ModelEndpoint) -> AnswerSet:
    """``point_set`` answered by ``agent`` through an answer job, which must end done."""
    job = services.answer_job_request(user=None, point_set=point_set, endpoint=agent)
    job.refresh_from_db()
    assert job.state == "done", job.message
    assert job.answer_set is not None
    return job.answer_set


def judged_by(answers: AnswerSet, judge: ModelEndpoint, **job: Any) -> JudgedSet:
    """``answers`` judged by ``judge`` through a judge job, which must end done."""
    made = services.judge_job_request(user=None, answer_set=answers, endpoint=judge, **job)
    made.refresh_from_db()
    assert made.state == "done", made.message
    assert made.judged_set is not None
    return made.judged_set
