"""Inspect driving the exported decision points (README: "Inspect").

The samples (``pit-harness export``) carry no tools. ``pit_session`` rebinds the four tools
of each sample's session from its metadata over the release the task is given (refused if
it is another release), and ``knowable_picks`` scores the fraction of the answer's picks
that were knowable at that bell (0 for an answer with no picks: a refusal earns nothing).
This is an Inspect eval, not a pit-harness run: no sandbox, guard or receipt; for those,
run the solver through the harness (``mock_agent.py``).

    inspect eval reverse.py -T samples=/path/samples.jsonl -T release=/path/release

With ``-T mock=false`` the model is whatever ``--model`` names.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from mock_agent import mock_model

from harness.agents.adapters.inspect import pit_tools
from harness.agents.adapters.plain import picks_in
from harness.runs.export import SCORER, session_tools


@solver
def pit_session(release: str) -> Solver:
    """Give the sample the four tools of its session, rebound from its metadata."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.tools = pit_tools(session_tools(release, state.metadata))
        return state

    return solve


@scorer(metrics=[mean()], name=SCORER)
def knowable_picks(release: str) -> Scorer:
    """The fraction of the picks that were knowable at the sample's bell."""

    async def score(state: TaskState, target: Target) -> Score:
        picks = picks_in(state.output.completion)
        if not picks:
            return Score(value=0.0, answer="", explanation="no picks")
        tools = session_tools(release, state.metadata)
        late = [key for key in picks if not tools.is_knowable(key)]
        return Score(
            value=(len(picks) - len(late)) / len(picks),
            answer=",".join(picks),
            explanation=f"not knowable at the bell: {', '.join(late) or 'none'}",
        )

    return score


@task
def pit_decisions(
    samples: str = "samples.jsonl", release: str = "release", mock: bool = True
) -> Task:
    return Task(
        dataset=json_dataset(samples),
        solver=[pit_session(release), generate()],
        scorer=knowable_picks(release),
        model=mock_model() if mock else None,
    )
