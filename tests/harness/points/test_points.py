"""Judged points: the 174 real PITFALL points, broken copies of them, the hashes the real
artifact records, and the metrics against hand-computed values."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.points import PointError, load_points, suite_sha256
from harness.points.markdown import parse_point
from harness.points.metrics import (
    fleiss_kappa,
    outcome,
    pass_at_k,
    raw_agreement,
    summary,
    wilson,
)
from tests.support.data import shared_path


@pytest.fixture(scope="module")
def points_dir() -> Path:
    return shared_path("data", "pitfall", "points")


@pytest.fixture(scope="module")
def artifact() -> dict:  # type: ignore[type-arg]
    path = shared_path("data", "pitfall", "results", "2026-08-14-all-points-sol-xhigh.json")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_all_174_real_points_validate_and_hash_as_the_real_artifact_says(
    points_dir: Path,
    artifact: dict,  # type: ignore[type-arg]
) -> None:
    points = load_points(points_dir)
    assert len(points) == 174
    assert suite_sha256(points) == artifact["point_suite_sha256"]
    by_id = {p.id: p for p in points}
    for result in artifact["results"]:
        point = by_id[result["point_id"]]
        assert point.point_sha256 == result["point_sha256"]
        assert point.question_sha256 == result["question_sha256"]
        assert point.ground_truth_sha256 == result["ground_truth_sha256"]
    assert [p.id for p in points][:1] == sorted(p.id for p in points if "a-share" in str(p.path))[
        :1
    ]


def test_the_question_alone_is_rendered_never_ground_truth_or_provenance(points_dir: Path) -> None:
    for point in load_points(points_dir):
        shown = point.agent_payload()
        assert point.ground_truth not in shown and point.provenance not in shown
        assert "<summary>评测时隐藏" not in shown
    some = load_points(points_dir)[0]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "points", "render", some.id,
         "--points-dir", str(points_dir)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout == some.question + "\n"
    assert some.ground_truth not in done.stdout and some.provenance not in done.stdout


SAMPLE = """# sample-point

## Question

What happened?

## Ground Truth

<details>
<summary>Hidden during evaluation</summary>

It went up.

</details>

## Provenance

<details>
<summary>Expand for audit</summary>

A filing.

</details>
"""

BROKEN = {
    "a capital in the id": (SAMPLE.replace("# sample-point", "# Sample-point"), "kebab-case"),
    "a double hyphen": (SAMPLE.replace("# sample-point", "# sample--point"), "kebab-case"),
    "no H1": (SAMPLE.replace("# sample-point\n", "sample-point\n"), "line 1 must be"),
    "a placeholder": (SAMPLE.replace("What happened?", "{{question}}"), "unresolved template placeholder"),
    "no Provenance": (SAMPLE.split("## Provenance")[0], "H2 sections must be exactly"),
    "an extra section": (SAMPLE + "\n## Notes\n\nx\n", "H2 sections must be exactly"),
    "sections out of order": (
        SAMPLE.replace("## Ground Truth", "## TMP").replace("## Provenance", "## Ground Truth").replace("## TMP", "## Provenance"),
        "H2 sections must be exactly",
    ),
    "an empty question": (SAMPLE.replace("What happened?", ""), "the Question is empty"),
    "a bare ground truth": (
        SAMPLE.replace("<details>\n<summary>Hidden during evaluation</summary>\n\nIt went up.\n\n</details>", "It went up."),
        "must be wrapped in a <details> block",
    ),
    "an empty hidden body": (SAMPLE.replace("It went up.", ""), "empty body"),
    "a two-line summary": (
        SAMPLE.replace("<summary>Hidden during evaluation</summary>", "<summary>\nHidden</summary>"),
        "must be wrapped in a <details> block",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_point_is_refused_naming_its_file_and_rule(case: str, tmp_path: Path) -> None:
    text, rule = BROKEN[case]
    path = tmp_path / "sample-point.md"
    with pytest.raises(PointError) as refused:
        parse_point(text, path)
    assert str(refused.value).startswith(str(path)) and rule in str(refused.value)


def test_the_file_name_must_be_the_id(tmp_path: Path) -> None:
    with pytest.raises(PointError, match="the file name must be the id"):
        parse_point(SAMPLE, tmp_path / "other-name.md")


def test_a_heading_inside_a_code_block_is_content_and_free_content_is_kept(
    tmp_path: Path,
) -> None:
    text = SAMPLE.replace(
        "What happened?",
        "What happened?\n\n```text\n## Not a section\n```\n\n### A sub-heading\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n<details><summary>冻结资料</summary>\n\n资料\n\n</details>",
    )
    point = parse_point(text, tmp_path / "sample-point.md")
    assert "## Not a section" in point.question and "资料" in point.question
    assert point.ground_truth == "It went up." and point.provenance == "A filing."


def test_a_points_folder_needs_its_template_and_unique_ids(
    points_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "points"
    shutil.copytree(points_dir, copy)
    first = sorted(p for p in copy.rglob("*.md") if p.name != "META.md")[0]
    (copy / "extra").mkdir()
    shutil.copy(first, copy / "extra" / first.name)
    with pytest.raises(PointError, match=f"duplicate point ids: {first.stem}"):
        load_points(copy)
    (copy / "META.md").unlink()
    with pytest.raises(PointError, match=r"META\.md is missing"):
        load_points(copy)
    with pytest.raises(PointError, match="no such points folder"):
        load_points(tmp_path / "nowhere")


def test_the_cli_validates_and_names_a_broken_file(points_dir: Path, tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", "points", *args],
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    done = cli("validate", "--points-dir", str(points_dir))
    assert done.returncode == 0 and done.stdout.startswith(
        f"Validated 174 point(s) in {points_dir}"
    )
    copy = tmp_path / "points"
    shutil.copytree(points_dir, copy)
    victim = sorted(copy.rglob("*.md"))[3]
    victim.write_text(victim.read_text(encoding="utf-8").replace("## Provenance", "## Sources"))
    broken = cli("validate", "--points-dir", str(copy))
    assert broken.returncode == 2
    assert str(victim) in broken.stderr and "H2 sections must be exactly" in broken.stderr
    assert "Traceback" not in broken.stderr
    assert cli("show", "no-such-point", "--points-dir", str(points_dir)).returncode == 2


# -- metrics --------------------------------------------------------------------------


def test_outcomes_keep_harness_errors_out_of_every_denominator() -> None:
    classes = ["completely_correct"] * 3 + ["analysis_logic_error", None]
    result = summary(classes)
    assert (result["pass"], result["fail"], result["harness_error"], result["judged"]) == (
        3,
        1,
        1,
        4,
    )
    assert result["accuracy"] == 0.75
    assert outcome(None) == "HARNESS_ERROR" and outcome("other_error") == "FAIL"
    with pytest.raises(ValueError):
        outcome("seventh_class")


def test_the_wilson_interval_against_a_hand_computation() -> None:
    # 132 of 174: p = 0.7586207, z^2/n = 0.0220773, centre = (p + z^2/2n)/(1 + z^2/n)
    # = 0.7530348, half-width = z*sqrt(p(1-p)/n + z^2/4n^2)/(1 + z^2/n) = 0.0631395
    low, high = wilson(132, 174)
    assert low == pytest.approx(0.6898953, abs=1e-6) and high == pytest.approx(0.8161743, abs=1e-6)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    with pytest.raises(ValueError):
        wilson(0, 0)


def test_unbiased_pass_at_k_against_hand_computed_values() -> None:
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - (3 / 5) * (2 / 4))  # 0.7
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - (7 * 6 * 5 * 4 * 3) / (10 * 9 * 8 * 7 * 6))
    assert pass_at_k(4, 3, 2) == 1.0  # fewer than k wrong answers: a pass is guaranteed
    assert pass_at_k(4, 0, 4) == 0.0
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)


def test_raw_agreement_far_above_chance_corrected_agreement() -> None:
    # 6 of 8 items agree, yet with one class so common, kappa is below zero: -1/7
    ratings = [["completely_correct"] * 2] * 6 + [
        ["completely_correct", "analysis_logic_error"],
        ["analysis_logic_error", "completely_correct"],
    ]
    assert raw_agreement(ratings) == 0.75
    assert fleiss_kappa(ratings) == pytest.approx(-1 / 7)
    # perfect agreement across two classes is kappa 1
    assert fleiss_kappa([["a", "a"], ["b", "b"]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fleiss_kappa([["a"], ["b"]])


# -- PITFALL's judged-point artifact ---------------------------------------------------


def test_the_real_artifact_imports_with_its_class_counts(
    points_dir: Path,
    artifact: dict,  # type: ignore[type-arg]
) -> None:
    from harness.points.baseline import import_baseline

    path = shared_path("data", "pitfall", "results", "2026-08-14-all-points-sol-xhigh.json")
    imported = import_baseline(path, load_points(points_dir))
    figures = imported.summary()
    assert figures["class_counts"] == {
        "completely_correct": 132,
        "numeric_factual_error": 4,
        "non_numeric_factual_error": 4,
        "analysis_assumption_error": 31,
        "analysis_logic_error": 3,
        "other_error": 0,
    }
    assert (figures["pass"], figures["judged"], figures["harness_error"]) == (132, 174, 0)
    assert figures["accuracy_interval_95"] == pytest.approx([0.6898953, 0.8161743], abs=1e-6)
    assert imported.judge == {"model": "gpt-5.6-sol", "reasoning_effort": "xhigh"}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "points", "import", str(path),
         "--points-dir", str(points_dir)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "accuracy 132/174 = 0.7586  95% Wilson [0.6899, 0.8162]" in done.stdout


def _written(tmp_path: Path, data: object, name: str = "artifact.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_tampered_truncated_and_older_artifacts_are_refused_saying_why(
    points_dir: Path,
    artifact: dict,
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    import copy

    from harness.points.baseline import ArtifactError, import_baseline

    points = load_points(points_dir)

    def refused(data: object, why: str) -> None:
        with pytest.raises(ArtifactError, match=why):
            import_baseline(_written(tmp_path, data), points)

    regraded = copy.deepcopy(artifact)  # one verdict changed, the summary left alone
    regraded["results"][0]["evaluation"]["class"] = "other_error"
    refused(regraded, "summary class_counts differ")
    swapped = copy.deepcopy(artifact)  # an answer judged against another ground truth
    swapped["results"][0]["ground_truth_sha256"] = "0" * 64
    refused(swapped, f"point {artifact['results'][0]['point_id']}: ground_truth_sha256")
    unreasoned = copy.deepcopy(artifact)
    unreasoned["results"][1]["evaluation"]["decisive_reason"] = " "
    refused(unreasoned, "without its decisive reason")
    pruned = copy.deepcopy(artifact)  # the failures left out, the counts made to agree
    pruned["results"] = [r for r in pruned["results"]
                         if r["evaluation"]["class"] == "completely_correct"]  # fmt: skip
    pruned["point_count"] = len(pruned["results"])
    pruned["summary"]["class_counts"] = {k: (132 if k == "completely_correct" else 0)
                                         for k in pruned["summary"]["class_counts"]}  # fmt: skip
    refused(pruned, "no result for 42 point")
    uncounted = copy.deepcopy(artifact)
    uncounted["summary"]["completed"] = 100
    refused(uncounted, "completed/failed differ")
    twice = copy.deepcopy(artifact)
    twice["results"].append(twice["results"][0])
    refused(twice, "appears twice")
    refused(
        {"schema_version": 1, "started_at": "x", "matrix": {}, "summary": [{"model": "m"}],
         "results": [{"case_id": "x", "case_sha256": "y"}]},
        "a structured smoke run",
    )  # fmt: skip
    refused(
        {"schema_version": 1, "matrix": {}, "summary": [], "results": [{"scenario_id": "x"}]},
        "a walk-forward run",
    )
    refused(
        {**artifact, "artifact_type": "finagentbench_live_shadow_seal"},
        "only 'pitfall_point_baseline'",
    )
    refused([], "a JSON object is expected")
    truncated = tmp_path / "truncated.json"
    truncated.write_text(json.dumps(artifact)[:5000], encoding="utf-8")
    with pytest.raises(ArtifactError, match="truncated"):
        import_baseline(truncated, points)
    with pytest.raises(ArtifactError, match="point_suite_sha256 differs"):
        import_baseline(_written(tmp_path, artifact), points[:-1])
