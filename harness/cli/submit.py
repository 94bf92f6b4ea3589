"""``pit-harness submit``: upload a run (receipt, trajectory, prices, config) or an answer
set to a pitweb site, then wait for the site's verdict and say it, with an exit code a
script can act on."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.cli.common import UsageError
from harness.outcomes import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from harness.progress import terminal_bar
from harness.submit.client import Part, Refused, SiteClient, SiteFailure, is_loopback, printable
from harness.submit.credentials import SITE_VARIABLE, TokenError, find_token
from harness.submit.verdicts import NoVerdict, Verdict, judge_verdict, run_verdict, wait_for

EXIT_REFUSED = EXIT_USAGE  # the site refused what it was given, as a usage error is refused
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C

USAGE = """pit-harness submit RECEIPT --trajectory FILE [--prices FILE] [--config FILE]
                          [--site URL] [--timeout SECONDS]
       pit-harness submit answers ANSWERS --point-set NAME [--site URL] [--timeout SECONDS]"""

DESCRIPTION = """\
Upload a run (its receipt and trajectory, the price file it was priced with, and
optionally its config) or an answer set to a pitweb site, then wait for the site's
verdict: each state is printed once as the site reaches it (received, verifying,
verified or mismatch with the check named; an answer set's judge job: queued,
running, judged), and the page on the site is printed. An answer set for a sealed
point set (made with `pit-harness points answer --questions`) is not judged before
the set's reveal: the site's receipt (received, sealed until DATE, and its
commitment log entry) is printed, and nothing is waited for. A bar shows the upload's
progress when stdout and stderr are terminals (never when output is piped;
PIT_PROGRESS=0 turns it off).

The API token is read from the environment variable PITWEB_TOKEN, else from the
first line of $XDG_CONFIG_HOME/pitweb/token (~/.config/pitweb/token), a file that
must be readable by its owner alone (chmod 600; a file others may read is refused,
as ssh refuses a private key). There is no option for it: a token on the command
line lands in the shell's history. The site's address is --site, else PITWEB_URL
(make demo prints `export PITWEB_URL=... PITWEB_TOKEN=...`)."""

EPILOG = """\
exit codes:
  0  verified: every hash and score re-derived by the site and equal (an answer
     set: judged by the site's judge, its controls held; for a sealed set:
     received and logged, judged at its reveal)
  1  refuted: the site re-derived the run and a hash or a score differs (named)
  2  refused: the site refused the upload (a bad token, a file too large, a field
     it does not take, a receipt that is not what it claims; its words are
     printed), or a local file is missing, or the command was wrong
  3  the site's error, never a verdict: the site failed (an HTTP 5xx, its
     verifier's harness_error, its judge's failed controls), could not be reached,
     or gave no verdict within --timeout (the upload is stored; follow its page)
  130  interrupted while waiting (the upload is stored; follow its page)"""


def cmd_submit(args: argparse.Namespace) -> int:
    answers = args.receipt == "answers"
    parts = _answer_parts(args) if answers else _run_parts(args)
    site = args.site or os.environ.get(SITE_VARIABLE, "")
    if not site:
        raise UsageError(f"no site: pass --site URL or set {SITE_VARIABLE}")
    try:
        token = find_token()
    except TokenError as exc:
        raise UsageError(str(exc)) from None
    try:
        client = SiteClient(site, token)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if client.base.scheme == "http" and not is_loopback(client.base):
        print(
            f"pit-harness: warning: {client.base.host} is reached over plain HTTP: the token "
            "and the files cross the network unencrypted",
            file=sys.stderr,
        )
    with client:
        try:
            if answers:
                return _submit_answers(client, args, parts)
            return _submit_run(client, args, parts)
        except Refused as exc:
            print(f"pit-harness: refused by the site: {exc}", file=sys.stderr)
            return EXIT_REFUSED
        except SiteFailure as exc:
            print(f"pit-harness: error: {exc}", file=sys.stderr)
            return EXIT_INTERNAL
        except KeyboardInterrupt:  # mid-upload: the site stores nothing of a broken request
            print("pit-harness: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


def _file(path: str | None, what: str) -> Path:
    if path is None:
        raise UsageError(f"{what} is required")
    found = Path(path)
    if not found.is_file():
        raise UsageError(f"{what} {path}: no such file")
    if not os.access(found, os.R_OK):
        raise UsageError(f"{what} {path}: not readable")
    return found


def _run_parts(args: argparse.Namespace) -> list[Part]:
    if args.answers is not None or args.point_set is not None:
        raise UsageError("ANSWERS and --point-set are for `submit answers`")
    parts = [
        Part("receipt", _file(args.receipt, "RECEIPT")),
        Part("trajectory", _file(args.trajectory, "--trajectory")),
    ]
    for field in ("prices", "config"):
        if getattr(args, field) is not None:
            parts.append(Part(field, _file(getattr(args, field), f"--{field}")))
    return parts


def _answer_parts(args: argparse.Namespace) -> list[Part]:
    if args.trajectory or args.prices or args.config:
        raise UsageError("--trajectory, --prices and --config are for a run's receipt")
    if not args.point_set:
        raise UsageError("submit answers needs --point-set NAME (the set's name on the site)")
    return [Part("answers", _file(args.answers, "ANSWERS"))]


def _upload(client: SiteClient, where: str, parts: list[Part]) -> tuple[int, dict[str, Any]]:
    names = ", ".join(part.path.name for part in parts)
    with terminal_bar(f"uploading {names}", unit="KiB") as on_progress:
        return client.upload(where, parts, on_progress)


def _submit_run(client: SiteClient, args: argparse.Namespace, parts: list[Part]) -> int:
    status, run = _upload(client, "api/runs/", parts)
    run_id, submission = (printable(str(run.get(key)), 200) for key in ("run_id", "submission"))
    if status == 201:
        print(f"uploaded run {run_id} as submission {submission}", flush=True)
    else:  # 200: the same receipt again is the submission it already is
        print(f"already uploaded: run {run_id} is your submission {submission}", flush=True)
    print(f"page: {_page(client, run)}", flush=True)
    jobs = run.get("jobs")
    job_url = (
        jobs[-1].get("url")
        if isinstance(jobs, list) and jobs and isinstance(jobs[-1], dict)
        else None
    )
    if not isinstance(job_url, str) or not job_url:
        raise SiteFailure("the site's answer names no verification job to follow")
    return _waited(lambda: run_verdict(client.read(job_url)), args.timeout)


def _submit_answers(client: SiteClient, args: argparse.Namespace, parts: list[Part]) -> int:
    where = f"api/points/{_segment(args.point_set)}/answer-sets/"
    status, answer_set = _upload(client, where, parts)
    number = printable(str(answer_set.get("answer_set")), 200)
    if status == 201:
        print(f"uploaded answer set {number} to point set {args.point_set}", flush=True)
    else:
        print(f"already uploaded: the same answers are answer set {number}", flush=True)
    print(f"point set: {_page(client, answer_set)}", flush=True)
    received = answer_set.get("received")
    if isinstance(received, str) and received:
        # a sealed set: stored and logged, judged at the reveal; nothing more to wait for
        entry = answer_set.get("log_entry") or {}
        print(printable(received, 200), flush=True)
        if isinstance(entry, dict) and entry.get("digest"):
            print(
                f"commitment log entry {printable(str(entry.get('seq')), 20)} "
                f"{printable(str(entry.get('digest')), 80)} at "
                f"{printable(str(entry.get('stamped_at')), 40)} (keep it: it is your receipt)",
                flush=True,
            )
        return EXIT_OK
    urls = answer_set.get("judge_job_urls")
    if not isinstance(urls, list) or not urls:
        print(
            "not judged: this site judges uploaded answer sets only when its staff ask "
            "(no judge is named for uploads); no verdict to wait for",
            flush=True,
        )
        return EXIT_INTERNAL
    job_url = urls[0]  # newest first
    if not isinstance(job_url, str) or not job_url:
        raise SiteFailure("the site's answer names no judge job to follow")
    judged: dict[str, str] = {}

    def poll() -> Verdict:
        job = client.read(job_url)
        done = job.get("state") == "done" and isinstance(job.get("judged_set_url"), str)
        if done:
            judged["page"] = str(job.get("judged_set_page") or "")
        return judge_verdict(job, client.read(job["judged_set_url"]) if done else None)

    code = _waited(poll, args.timeout)
    if judged.get("page"):
        print(f"page: {client.url(judged['page'])}", flush=True)
    return code


def _segment(name: str) -> str:
    """A point set's name as one path segment (the site's names are slugs)."""
    if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
        raise UsageError(f"--point-set {name!r} is not a point set's name (letters, digits, - _)")
    return name


def _page(client: SiteClient, answer: dict[str, Any]) -> str:
    page = answer.get("page")
    if not isinstance(page, str) or not page:
        raise SiteFailure("the site's answer names no page")
    return printable(str(client.url(page)), 500)


def _waited(poll: Callable[[], Verdict], timeout: float) -> int:
    def said(verdict: Verdict) -> None:
        print(verdict.words, flush=True)

    try:
        return wait_for(poll, timeout=timeout, said=said).code
    except NoVerdict as exc:
        print(f"pit-harness: error: {exc}; the upload is stored: follow its page", file=sys.stderr)
        return EXIT_INTERNAL
    except Refused as exc:  # the upload was taken; the site now refuses to say its state
        print(f"pit-harness: error: the site stopped answering about it: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print(
            "pit-harness: stopped waiting; the upload is stored: follow its page", file=sys.stderr
        )
        return EXIT_INTERRUPTED


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 7 * 24 * 3600:
        raise argparse.ArgumentTypeError(f"{text!r}: between 0 and a week of seconds")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``submit RECEIPT ...`` and ``submit answers ANSWERS ...``."""
    parser = sub.add_parser(
        "submit",
        usage=USAGE,
        help="upload a run (or an answer set) to a pitweb site and wait for its verdict; "
        "exit 0 verified, 1 refuted, 2 refused, 3 the site's error or no verdict in time",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "receipt",
        metavar="RECEIPT",
        help="the run's receipt.json; or the word `answers`, then ANSWERS",
    )
    parser.add_argument(
        "answers", metavar="ANSWERS", nargs="?", help="with `answers`: the answer set's JSON"
    )
    parser.add_argument("--trajectory", metavar="FILE", help="the trajectory the receipt binds")
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="the price file the run was priced with (required by the site when the "
        "receipt states prices, so it can re-derive the returns)",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="the run's config (optional; must be the receipt's)"
    )
    parser.add_argument(
        "--point-set", metavar="NAME", help="with `answers`: the point set's name on the site"
    )
    parser.add_argument(
        "--site", metavar="URL", help=f"the site's address (default: ${SITE_VARIABLE})"
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        default=600.0,
        help="how long to wait for the verdict after the upload (default 600); past it, "
        "exit 3 with the last state",
    )
    parser.set_defaults(func=cmd_submit)
