"""``pit-harness submit`` as a process, as a submitter runs it: the token never from the
command line, what it refuses before a byte leaves the machine (exit 2), a refusal or a
failure of the site said in words (exit 2, exit 3), a site that is not there (exit 3).
Against a live site: tests/pitweb/runs/test_submit_command.py and
tests/pitweb/points/test_submit_answers_command.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from harness.cli import build_parser
from tests.support.canned_site import canned_site, closed_port
from tests.support.submit import submit, token_in_file

TOKEN = "pit_" + "c3" * 20
CREATED = json.dumps({"run_id": "r", "submission": 1, "page": "/runs/x/", "jobs": []}).encode()


@pytest.fixture()
def run_files(tmp_path: Path) -> list[str]:
    receipt, trajectory = tmp_path / "receipt.json", tmp_path / "trajectory.jsonl"
    receipt.write_text("{}\n")
    trajectory.write_text("{}\n")
    return [str(receipt), "--trajectory", str(trajectory)]


def _submit_options() -> set[str]:
    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {option for a in commands.choices["submit"]._actions for option in a.option_strings}


def test_no_option_takes_a_token() -> None:
    options = _submit_options()
    assert "--trajectory" in options and "--site" in options  # the options are these
    assert not [option for option in options if "token" in option or "key" in option]


@pytest.mark.parametrize(
    "extra",
    [["--token", TOKEN], [f"--token={TOKEN}"], ["--tok", TOKEN], ["--auth", TOKEN], [TOKEN]],
    ids=["--token", "--token=", "an abbreviation", "--auth", "a second word"],
)
def test_a_token_on_the_command_line_is_refused_and_nothing_is_sent(
    tmp_path: Path, run_files: list[str], extra: list[str]
) -> None:
    with canned_site(201, CREATED) as site:
        done = submit(*run_files, *extra, "--site", site.url, home=tmp_path)
    assert done.code == 2, done
    assert site.seen == []


def test_a_world_readable_token_file_is_refused_and_nothing_is_sent(
    tmp_path: Path, run_files: list[str]
) -> None:
    path = token_in_file(tmp_path, TOKEN, 0o644)
    with canned_site(201, CREATED) as site:
        done = submit(*run_files, "--site", site.url, home=tmp_path)
    assert done.code == 2, done
    assert f"token file {path} is accessible by others (permissions 0644)" in done.err
    assert f"chmod 600 {path}" in done.err and done.out == ""
    assert site.seen == []


def test_the_token_file_is_read_when_the_environment_has_none(
    tmp_path: Path, run_files: list[str]
) -> None:
    token_in_file(tmp_path, TOKEN)
    with canned_site(401, b'{"error": {"code": "authentication_failed", "message": "no"}}') as site:
        submit(*run_files, "--site", site.url, home=tmp_path)
    assert [seen.headers["Authorization"] for seen in site.seen] == [f"Token {TOKEN}"]


def test_a_missing_local_file_is_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    receipt = tmp_path / "receipt.json"
    receipt.write_text("{}")
    with canned_site(201, CREATED) as site:
        done = submit(
            str(receipt), "--trajectory", str(tmp_path / "no-such.jsonl"), "--site", site.url,
            home=tmp_path, PITWEB_TOKEN=TOKEN,
        )  # fmt: skip
    assert done.code == 2, done
    assert f"--trajectory {tmp_path / 'no-such.jsonl'}: no such file" in done.err
    assert site.seen == []


def test_no_site_is_a_usage_error(tmp_path: Path, run_files: list[str]) -> None:
    done = submit(*run_files, home=tmp_path, PITWEB_TOKEN=TOKEN)
    assert done.code == 2 and "pass --site URL or set PITWEB_URL" in done.err


def test_answers_and_a_runs_files_are_not_mixed(tmp_path: Path, run_files: list[str]) -> None:
    with canned_site(201, CREATED) as site:
        mixed = submit("answers", run_files[0], "--trajectory", run_files[2],
                       "--point-set", "four", "--site", site.url, home=tmp_path,
                       PITWEB_TOKEN=TOKEN)  # fmt: skip
        no_set = submit("answers", run_files[0], "--site", site.url, home=tmp_path,
                        PITWEB_TOKEN=TOKEN)  # fmt: skip
    assert (mixed.code, no_set.code) == (2, 2)
    assert "for a run's receipt" in mixed.err and "needs --point-set NAME" in no_set.err
    assert site.seen == []


def test_an_unreachable_site_is_exit_3_saying_so(tmp_path: Path, run_files: list[str]) -> None:
    site = f"http://127.0.0.1:{closed_port()}"
    done = submit(*run_files, home=tmp_path, PITWEB_TOKEN=TOKEN, PITWEB_URL=site)
    assert done.code == 3, done
    assert done.err.startswith(f"pit-harness: error: could not reach {site}/: ")
    assert TOKEN not in done.err + done.out


def test_a_refusal_is_exit_2_said_in_words_not_json(tmp_path: Path, run_files: list[str]) -> None:
    envelope = {"error": {"code": "unknown_field", "message": "unknown multipart field(s): x"}}
    with canned_site(400, json.dumps(envelope).encode()) as site:
        done = submit(*run_files, "--site", site.url, home=tmp_path, PITWEB_TOKEN=TOKEN)
    assert done.code == 2
    assert done.err == (
        "pit-harness: refused by the site: unknown multipart field(s): x "
        "(HTTP 400, unknown_field)\n"
    )


def test_a_server_error_is_exit_3_said_in_words(tmp_path: Path, run_files: list[str]) -> None:
    envelope = {"error": {"code": "server_error", "message": "the server failed; it is logged"}}
    with canned_site(500, json.dumps(envelope).encode()) as site:
        done = submit(*run_files, "--site", site.url, home=tmp_path, PITWEB_TOKEN=TOKEN)
    assert done.code == 3
    assert done.err == (
        "pit-harness: error: the site failed on POST /api/runs/ (HTTP 500, server_error: the "
        "server failed; it is logged)\n"
    )


def test_plain_http_to_another_machine_is_warned_of(tmp_path: Path, run_files: list[str]) -> None:
    # a name that does not resolve: the warning comes before the attempt
    done = submit(*run_files, "--site", "http://pitweb.invalid", home=tmp_path, PITWEB_TOKEN=TOKEN)
    assert done.code == 3
    assert "pitweb.invalid is reached over plain HTTP: the token and the files cross" in done.err


def test_an_upload_answer_naming_no_job_is_the_sites_error(
    tmp_path: Path, run_files: list[str]
) -> None:
    with canned_site(201, CREATED) as site:
        done = submit(*run_files, "--site", site.url, home=tmp_path, PITWEB_TOKEN=TOKEN)
    assert done.code == 3
    assert done.out == f"uploaded run r as submission 1\npage: {site.url}/runs/x/\n"
    assert done.err == "pit-harness: error: the site's answer names no verification job to follow\n"
