"""The site's job states in words and exit codes, and the wait for the last one."""

from __future__ import annotations

import pytest

from harness.submit.client import SiteFailure
from harness.submit.verdicts import NoVerdict, Verdict, judge_verdict, run_verdict, wait_for


def test_each_run_state_has_its_exit_code() -> None:
    said = [
        run_verdict({"state": "received"}),
        run_verdict({"state": "verifying"}),
        run_verdict({"state": "verified"}),
        run_verdict({"state": "mismatch", "mismatch_check": "cell main/pit total_return"}),
        run_verdict({"state": "harness_error", "message": "verifier error"}),
        run_verdict({"state": "unknown_release"}),
        run_verdict({"state": "a_state_added_later"}),
    ]
    assert [(v.final, v.code) for v in said if v.final] == [
        (True, 0),
        (True, 1),
        (True, 3),
        (True, 3),
    ]
    assert [v.state for v in said if not v.final] == [
        "received",
        "verifying",
        "a_state_added_later",
    ]


def test_a_mismatch_names_the_check_and_a_verifier_failure_is_the_sites() -> None:
    refuted = run_verdict({"state": "mismatch", "mismatch_check": "cell main/pit total_return"})
    assert refuted.words.startswith(
        "mismatch: cell main/pit total_return differs from what the site re-derived"
    )
    failed = run_verdict({"state": "harness_error", "message": "verifier error: OSError"})
    assert failed.words == (
        "harness_error: the site's verifier failed (verifier error: OSError); a problem of "
        "the site, not a verdict on the run"
    )


def test_a_judged_set_with_a_result_is_0_and_one_whose_judge_failed_is_the_sites() -> None:
    done = {"state": "done", "judged_set_url": "/api/points/four/judged/1/"}
    usable = {"status": "usable", "accuracy": 0.25, "accuracy_low": 0.046,
              "accuracy_high": 0.699, "pass": 1, "fail": 3, "harness_error": 0}  # fmt: skip
    judged = judge_verdict(done, usable)
    assert (judged.final, judged.code) == (True, 0)
    assert judged.words == (
        "judged: accuracy 25.0% (95% interval 4.6% to 69.9%), 1 PASS, 3 FAIL, "
        "0 harness errors (outside the denominator)"
    )
    unreliable = {"status": "judge_unreliable", "figures_withheld_because": "judge unreliable: x"}
    assert judge_verdict(done, unreliable).code == 3
    assert judge_verdict({"state": "control_failed", "message": "p-1"}, None).code == 3
    assert not judge_verdict({"state": "running"}, None).final
    with pytest.raises(SiteFailure, match="names no judged set"):
        judge_verdict({"state": "done"}, None)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_each_state_is_told_once_and_the_final_one_ends_the_wait() -> None:
    # the site retries its own failure: verifying -> received -> verifying again
    states = iter(["received", "received", "verifying", "received", "verifying", "verified"])
    told: list[str] = []
    clock = Clock()
    final = wait_for(
        lambda: run_verdict({"state": next(states)}),
        timeout=60, said=lambda v: told.append(v.state), clock=clock, sleep=clock.sleep,
    )  # fmt: skip
    assert final.state == "verified" and told == ["received", "verifying", "verified"]


def test_a_failure_to_read_the_state_is_waited_through() -> None:
    answers: list[Verdict | Exception] = [
        run_verdict({"state": "received"}), SiteFailure("the site is down a moment"),
        run_verdict({"state": "verified"}),
    ]  # fmt: skip

    def poll() -> Verdict:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = Clock()
    assert wait_for(poll, timeout=60, said=lambda v: None, clock=clock, sleep=clock.sleep).code == 0


def test_a_site_down_until_the_time_runs_out_is_said() -> None:
    def down() -> Verdict:
        raise SiteFailure("could not reach the site")

    clock = Clock()
    with pytest.raises(NoVerdict) as ran_out:
        wait_for(down, timeout=10, said=lambda v: None, clock=clock, sleep=clock.sleep)
    assert str(ran_out.value) == "no verdict after 10 s; last failure: could not reach the site"


def test_a_wait_that_runs_out_names_the_last_state() -> None:
    clock = Clock()
    with pytest.raises(NoVerdict) as ran_out:
        wait_for(
            lambda: run_verdict({"state": "received"}),
            timeout=5, said=lambda v: None, clock=clock, sleep=clock.sleep,
        )  # fmt: skip
    assert str(ran_out.value) == "no verdict after 5 s; last state received"
    assert clock.now == 5
