"""The agent's sandbox, tried as an adversary would: every route around the guard fails,
nothing of the host is visible, look-ahead picks do not count, state does not cross
cells, limits hold for effect, and failures land on the right side."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents import stub
from harness.agents.adapters.plain import from_callable
from harness.agents.base import AgentSpec
from harness.cli import main as cli_main
from harness.isolation.drivers import LINE_FIELDS
from harness.isolation.sandbox.inside import CELL_NAME
from harness.isolation.sandbox.outside import SandboxSettings
from harness.receipt.rederive import rederive
from harness.release.bundle import Bundle
from harness.rundata.config import ConfigError
from harness.tools.toolbox import Toolbox
from tests.support.data import build_release
from tests.support.sandbox import crash_when_told as _crash_when_told
from tests.support.sandbox import require_sandbox
from tests.support.sandbox import sandbox_config as config

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    require_sandbox()


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def decision_texts(out: Path, arm: str | None = None) -> list[str]:
    return [
        e["text"]
        for e in events(out / "trajectory.jsonl")
        if e["event"] == "decision" and (arm is None or e["arm"] == arm)
    ]


# -- routes around the guard -------------------------------------------------------------


def _attempt(fn: Any) -> str:
    try:
        return f"succeeded: {fn()!r}"[:200]
    except BaseException as exc:
        return f"failed: {type(exc).__name__}: {exc}"[:200]


def _raw_socket(port: int) -> Any:
    import _socket

    s = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    return s.connect(("127.0.0.1", port)) or s.getpeername()


def _socket_type(port: int) -> Any:
    s = socket.SocketType(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    return s.connect(("127.0.0.1", port)) or s.getpeername()


def _reloaded(port: int) -> Any:
    import importlib

    fresh = importlib.reload(socket)
    return fresh.create_connection(("127.0.0.1", port), timeout=2).getpeername()


def _raw_dns() -> Any:
    import _socket

    return _socket.getaddrinfo("example.com", 80)


def _libc_ok(result: int, done: str) -> str:
    import ctypes

    if result != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return done


def _ctypes_connect(port: int) -> Any:
    import ctypes
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    address = struct.pack("!HH4s8x", socket.AF_INET, port, socket.inet_aton("127.0.0.1"))
    address = struct.pack("=H", socket.AF_INET) + address[2:]
    return _libc_ok(libc.connect(fd, address, len(address)), "connected")


def _ptrace(parent: int) -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return _libc_ok(libc.ptrace(16, parent, 0, 0), "attached")  # PTRACE_ATTACH


def _command(args: list[str]) -> Any:
    done = subprocess.run(args, capture_output=True, check=False)
    if done.returncode != 0:
        raise OSError(done.returncode, done.stderr.decode()[:100])
    return done.stdout or "ran"


def _read(path: str) -> Any:
    with open(path, "rb") as handle:
        return len(handle.read())


def _attempts(port: int, parent: int, release: str, prices: str) -> dict[str, Any]:
    """Every route an in-process guard could not close; each result is what happened."""
    return {
        "_socket.socket": _attempt(lambda: _raw_socket(port)),
        "socket.SocketType": _attempt(lambda: _socket_type(port)),
        "importlib.reload": _attempt(lambda: _reloaded(port)),
        "_socket.getaddrinfo": _attempt(_raw_dns),
        "ctypes.connect": _attempt(lambda: _ctypes_connect(port)),
        "curl": _attempt(
            lambda: _command(["curl", "-sS", "--max-time", "2", f"http://127.0.0.1:{port}/"])
        ),
        "nsenter": _attempt(lambda: _command(["nsenter", f"--net=/proc/{parent}/ns/net", "true"])),
        "ptrace": _attempt(lambda: _ptrace(parent)),
        "proc_root": _attempt(lambda: _read(f"/proc/{parent}/root{release}/main.jsonl")),
        "proc_environ": _attempt(lambda: _read(f"/proc/{parent}/environ")),
        "release": _attempt(lambda: _read(f"{release}/main.jsonl")),
        "prices": _attempt(lambda: _read(prices)),
    }


def test_every_route_around_the_guard_fails_inside_the_sandbox(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    parent, release, prices = os.getpid(), str(march_release), str(march_prices)
    captured_connect = socket.socket.connect  # a reference taken before the run

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        report = _attempts(port, parent, release, prices)
        s = socket.socket.__new__(socket.socket)
        try:
            socket.socket.__init__(s, socket.AF_INET, socket.SOCK_STREAM)
            captured_connect(s, ("127.0.0.1", port))
            report["captured connect"] = "succeeded"
        except OSError as exc:
            report["captured connect"] = f"failed: {exc}"
        return {"picks": [], "text": json.dumps(report)}

    cfg = config(
        march_release,
        tmp_path,
        end="2023-03-01",
        probe=0,
        arms=("main",),
        clocks=("pit",),
        prices={"path": prices, "source": "SYNTHETIC"},
    )
    body = run(from_callable(agent), cfg).body
    reports = [json.loads(text) for text in decision_texts(tmp_path)]
    assert reports and all(len(report) == 13 for report in reports)
    for report in reports:
        assert all(outcome.startswith("failed") for outcome in report.values()), report
    listener.settimeout(0)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing reached the host's listener
    listener.close()
    # what the agent did is in the trajectory; the routes through the interpreter are in
    # the receipt too, each at the agent's own line (a subprocess's are not: the
    # namespace holds those), and the receipt says what held them all
    assert body["valid"] is False
    attempts = body["network"]["attempts"]
    calls = {a["call"] for a in attempts}
    assert calls == {"socket.connect", "socket.getaddrinfo", "ctypes.dlsym"}, calls
    assert all("test_sandbox" in a["site"] for a in attempts), attempts
    targets = {a["target"] for a in attempts}
    assert {f"127.0.0.1:{port}", "example.com:80", "connect"} <= targets
    # each session's run of the agent: raw socket, SocketType, reload (its own look-up and
    # its connect, which no patched function wraps), raw DNS, ctypes, captured connect
    assert len(attempts) == 7 * len(reports)
    assert body["capabilities"]["network_isolated"] is True
    network = body["network"]
    assert network["guard"] == "network-namespace+wire" and network["counted"] == "wire"
    # off loopback, only the raw look-up sent anything: its queries, counted on the wire
    assert network["wire"] and {
        (w["protocol"], w["address"], w["port"]) for w in network["wire"]
    } == {("udp", "192.0.2.53", 53)}
    assert network["egress_attempts"] == len(network["wire"])
    assert network["guard_sites"] == len(attempts) and network["difference"]
    assert body["capabilities"]["filesystem_confined"] is True
    assert socket.socket.connect is captured_connect  # the harness's own socket is whole


def test_urlopen_in_the_sandbox_is_recorded_with_its_call_site(
    march_release: Path, tmp_path: Path
) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        import urllib.request

        with contextlib.suppress(OSError):
            urllib.request.urlopen("http://example.com/", timeout=1)
        return []

    body = run(from_callable(agent), config(march_release, tmp_path, probe=0)).body
    assert body["valid"] is False
    attempts = body["network"]["attempts"]
    assert attempts and all(a["call"] == "socket.create_connection" for a in attempts)
    assert all("test_sandbox" in a["site"] for a in attempts)


def test_release_under_the_agents_folder_is_masked(tmp_path: Path) -> None:
    """An agent package whose folder also holds the release and the outputs sees neither."""
    package = tmp_path / "leaky_agent"
    package.mkdir()
    release = build_release(package / "release", end=date(2023, 3, 3), seed=3, rows=400)
    (package / "__init__.py").write_text(
        "import os\n"
        "HERE = os.path.dirname(__file__)\n"
        "def agent(prompt, tools):\n"
        "    seen = sorted(os.listdir(HERE))\n"
        "    inside = sorted(os.listdir(os.path.join(HERE, 'release')))\n"
        "    return {'picks': [], 'text': repr((seen, inside))}\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        out = package / "out"
        cfg = config(release, out, probe=0, agent="leaky_agent:agent", arms=("main",))
        from harness.agents.base import load_agent

        body = run(load_agent("leaky_agent:agent"), cfg).body
    finally:
        sys.path.remove(str(tmp_path))
    texts = set(decision_texts(out))
    assert texts == {repr((["__init__.py", "out", "release"], []))}  # masked: empty
    assert body["capabilities"]["filesystem_confined"] is True


# -- knowability ---------------------------------------------------------------------------


def test_look_ahead_picks_get_no_trade_a_stub_would_not_get(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    release = Bundle.load(march_release)
    every_key = [key for arm in ("main", "redacted", "shifted") for key in release.row_keys(arm)]

    def cheat(prompt: str, tools: Any) -> list[str]:
        for name in ("_count", "_new_from"):
            with contextlib.suppress(AttributeError):
                setattr(tools, name, 10**9)
        with contextlib.suppress(AttributeError):
            tools._index = None
        return every_key

    cheated = run(
        from_callable(cheat),
        config(march_release, tmp_path / "cheat", agent_process=agent_process, probe=0),
    )
    honest = run(stub(), config(march_release, tmp_path / "stub", agent_process=agent_process))
    for key in cheated.cells:
        got = {t.row_key for t in cheated.trades(*key)}
        assert got <= {t.row_key for t in honest.trades(*key)}, key
        assert got  # it did trade what was knowable
    assert all(c["rejected_picks"] > 0 for c in cheated.body["cells"])


def test_rederive_refuses_a_trajectory_edited_to_hold_a_look_ahead_pick(
    march_release: Path, tmp_path: Path
) -> None:
    from harness import canonical
    from harness.receipt.build import receipt_text
    from harness.rundata.trajectory import file_sha256

    result = run(stub(), config(march_release, tmp_path, agent_process="in_process"))
    rows = Bundle.load(march_release).rows("main")
    late = next(r["row_key"] for r in rows if r["partition_date"] > "2023-03-10")
    lines = (tmp_path / "trajectory.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        event = json.loads(line)
        if event["event"] == "decision" and event["picks"]:
            event["picks"].append(late)
            lines[n] = canonical.line(event)
            where = (event["arm"], event["clock"], event["session"])
            break
    (tmp_path / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    body = receipt["body"]
    body["binding"]["trajectory_sha256"] = file_sha256(tmp_path / "trajectory.jsonl")
    body["trajectory"]["sha256"] = body["binding"]["trajectory_sha256"]
    (tmp_path / "receipt.json").write_text(receipt_text(body, receipt["emitted_at"]))
    check = rederive(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", release=march_release
    )
    bad = check.first_mismatch
    assert bad is not None and bad.name == "knowability"
    assert f"cell {where[0]}/{where[1]} session {where[2]}: row {late}" in bad.detail
    assert result.body["valid"] is True  # the honest run was fine


# -- the agent's faults, and ours ----------------------------------------------------------


AGENTS = """
import os, sys, socket

class _Raises:
    def __init__(self):
        raise RuntimeError("constructor says no")
    def decide(self, task, tools):
        return []

class _Dials:
    def __init__(self):
        socket.create_connection(("example.com", 80), timeout=1)
    def decide(self, task, tools):
        return []

def exits(prompt, tools):
    sys.exit(0)

def surrogate_text(prompt, tools):
    return {"picks": [], "text": "the answer is \\udc80"}

def nan_argument(prompt, tools):
    tools.pit_search(query="x", limit=float("nan"))
    return []

def infinite_argument(prompt, tools):
    tools.pit_list(limit=float("inf"))
    return []

def surrogate_argument(prompt, tools):
    tools.pit_search(query="\\ud800", limit=3)
    return []

from harness.agents.base import AgentSpec
raises = AgentSpec("raises", _Raises)
dials = AgentSpec("dials", _Dials)
"""


@pytest.fixture()
def agents_module(tmp_path: Path) -> Any:
    folder = tmp_path / "agentsrc"
    folder.mkdir()
    (folder / "faulty_agents.py").write_text(AGENTS)
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))
    sys.modules.pop("faulty_agents", None)


def _cli_run(
    capsys: pytest.CaptureFixture[str], release: Path, out: Path, agent: str, **extra: Any
) -> tuple[int, dict[str, Any], str]:
    run_json = out / "run.json"
    out.mkdir(parents=True, exist_ok=True)
    run_json.write_text(
        json.dumps(
            {
                "bundle_path": str(release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-03",
                "agent": agent,
                **extra,
            }
        )
    )
    code = cli_main(
        [
            "run",
            "--config",
            str(run_json),
            "--trajectory",
            str(out / "t.jsonl"),
            "--receipt",
            str(out / "r.json"),
        ]
    )
    err = capsys.readouterr().err
    receipt = json.loads((out / "r.json").read_text()) if (out / "r.json").exists() else {}
    return code, receipt.get("body", {}), err


@pytest.mark.parametrize("mode", ["isolated", "in_process"])
def test_agent_faults_write_a_receipt_and_exit_4(
    march_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agents_module: Path,
    mode: str,
) -> None:
    extra = {"agent_process": mode}
    code, body, err = _cli_run(
        capsys, march_release, tmp_path / "r", "faulty_agents:raises", **extra
    )
    assert code == 4, err
    assert all(c["status"] == "agent_error" for c in body["cells"])
    assert {c["agent_fault"]["kind"] for c in body["cells"]} == {"constructor_raised"}
    assert "constructor says no" in body["cells"][0]["agent_fault"]["message"]

    code, body, err = _cli_run(
        capsys, march_release, tmp_path / "d", "faulty_agents:dials", **extra
    )
    assert code == 4, err
    assert body["valid"] is False and body["network"]["egress_attempts"] >= 9
    assert all(c["status"] == "agent_error" for c in body["cells"])

    code, body, err = _cli_run(
        capsys, march_release, tmp_path / "x", "faulty_agents:exits", **extra
    )
    assert code == 4, err
    assert {c["agent_fault"]["kind"] for c in body["cells"]} == {"agent_exit"}
    assert body["probe"]["verdict"] == "no_items"  # it was served nothing to be asked about


@pytest.mark.parametrize(
    "agent", ["surrogate_text", "nan_argument", "infinite_argument", "surrogate_argument"]
)
def test_values_that_are_not_json_data_are_the_agents_fault_with_a_receipt(
    march_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agents_module: Path,
    agent: str,
) -> None:
    """NaN, the infinities and lone surrogates, in decision text or a tool argument: the
    agent's fault (exit 4, a receipt written), never a usage error without one."""
    code, body, err = _cli_run(
        capsys, march_release, tmp_path / agent, f"faulty_agents:{agent}", agent_process="isolated"
    )
    assert code == 4, err
    assert all(c["status"] == "agent_error" for c in body["cells"])
    kinds = {c["agent_fault"]["kind"] for c in body["cells"]}
    assert kinds == {"protocol_violation"}
    assert all("not JSON data" in c["agent_fault"]["message"] for c in body["cells"])


def test_egress_in_the_probe_under_abort_ends_in_a_receipt(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    class DialsOnTheProbe:
        def decide(self, task: Any, tools: Any) -> list[str]:
            if task.kind == "probe":
                socket.getaddrinfo("example.com", 80)
            return [r["row_key"] for r in tools.pit_list()["rows"]]

    cfg = config(march_release, tmp_path, network_policy="abort", agent_process=agent_process)
    body = run(AgentSpec("dials_on_probe", DialsOnTheProbe), cfg).body
    assert body["valid"] is False and "network egress" in body["aborted"]
    assert all(c["status"] == "complete" for c in body["cells"])
    assert body["network"]["egress_attempts"] == 1
    assert (tmp_path / "receipt.json").exists()


def test_egress_in_the_probes_constructor_under_abort_ends_in_a_receipt(
    march_release: Path, tmp_path: Path
) -> None:
    made: list[int] = []  # in-process only: module state is how the tenth agent knows

    class DialsWhenMadeForTheProbe:
        def __init__(self) -> None:
            made.append(1)
            if len(made) == 10:
                socket.getaddrinfo("example.com", 80)

        def decide(self, task: Any, tools: Any) -> list[str]:
            return [r["row_key"] for r in tools.pit_list()["rows"]]

    cfg = config(march_release, tmp_path, network_policy="abort", agent_process="in_process")
    body = run(AgentSpec("dials", DialsWhenMadeForTheProbe), cfg).body
    assert body["valid"] is False and "network egress" in body["aborted"]
    assert all(c["status"] == "complete" for c in body["cells"])
    assert body["probe"]["status"] == "not_run"
    assert (tmp_path / "receipt.json").exists()


def test_a_child_killed_mid_cell_is_retried_and_the_body_says_so(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        tools.pit_coverage()
        return [r["row_key"] for r in tools.pit_list()["rows"]]

    calm = run(from_callable(agent), config(march_release, tmp_path / "calm"))

    original = Toolbox.pit_coverage
    killed: list[int] = []

    def kill_the_cell_once(self: Toolbox) -> dict[str, Any]:
        if not killed and self.arm == "redacted" and self.clock == "dump":
            leaf = _sandbox_leaf()
            os.kill(leaf, signal.SIGKILL)
            killed.append(leaf)
        return original(self)

    monkeypatch.setattr(Toolbox, "pit_coverage", kill_the_cell_once)
    disturbed = run(from_callable(agent), config(march_release, tmp_path / "disturbed"))
    assert killed
    # the same scores; the ledger (hashed) and the trajectory's attempt_failed event differ
    differs = {"attempts", "binding", "trajectory"}
    assert {k: v for k, v in disturbed.body.items() if k not in differs} == {
        k: v for k, v in calm.body.items() if k not in differs
    }
    [entry] = disturbed.body["attempts"]
    assert entry["cell"] == "redacted/dump" and entry["attempt"] == 1
    assert "the agent's process exited" in entry["failure"]
    assert entry["egress_attempts"] == [] and entry["model_exchanges"] == 0
    assert calm.body["attempts"] == []
    [logged] = [e for e in events(tmp_path / "disturbed" / "trajectory.jsonl")
                if e["event"] == "attempt_failed"]  # fmt: skip
    assert {k: logged[k] for k in entry} == entry
    rederived = rederive(
        tmp_path / "disturbed" / "receipt.json",
        trajectory=tmp_path / "disturbed" / "trajectory.jsonl",
        release=march_release,
    )
    assert rederived.ok, rederived.first_mismatch
    # a ledger stripped from the body (and the body hashed again) is refused
    from harness.receipt.build import receipt_text

    data = json.loads((tmp_path / "disturbed" / "receipt.json").read_text())
    data["body"]["attempts"] = []
    (tmp_path / "disturbed" / "receipt.json").write_text(
        receipt_text(data["body"], data["emitted_at"])
    )
    stripped = rederive(
        tmp_path / "disturbed" / "receipt.json",
        trajectory=tmp_path / "disturbed" / "trajectory.jsonl",
        release=march_release,
    )
    assert stripped.first_mismatch is not None and stripped.first_mismatch.name == "attempts"


def _sandbox_leaf() -> int:
    """The agent's own process: the one process of this test's sandbox that serves a cell.
    The zygote keeps the next cell forked and waiting beside it, as deep as the running one
    and named apart from it until it is handed its task (start times and pids cannot tell
    the two apart: a spare can start in the same clock tick, and pids wrap)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    serving: list[int] = []
    stack = [os.getpid()]
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_bytes().strip() == CELL_NAME:
                serving.append(pid)
                continue  # its children, if any, are the agent's own
        stack.extend(children.get(pid, []))
    assert len(serving) == 1, f"one cell should be serving, found {serving}"
    return serving[0]


# -- the same run in both processes -------------------------------------------------------


def test_isolated_and_in_process_runs_match_but_for_what_was_enforced(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        cover = tools.pit_coverage()
        rows = tools.pit_list(limit=7, since="window_start")["rows"]
        hits = tools.pit_search("8-K", limit=3)["rows"]
        read = tools.pit_read(rows[0]["row_key"])["status"] if rows else "none"
        picks = [r["row_key"] for r in rows + hits] + [None, "r-0000000000000000"]
        return {"picks": picks, "text": f"{cover['knowable_rows']} {read} {tools.session_date}"}

    prices = {"path": str(march_prices), "source": "SYNTHETIC"}
    bodies, trails = {}, {}
    for mode in ("isolated", "in_process"):
        out = tmp_path / mode
        run(from_callable(agent), config(march_release, out, agent_process=mode, prices=prices))
        receipt = json.loads((out / "receipt.json").read_text())
        bodies[mode] = receipt["body"]
        trails[mode] = [  # all but run_start and the capabilities found, which differ
            line
            for line in (out / "trajectory.jsonl").read_text().splitlines()[1:]
            if '"event":"capabilities"' not in line
        ]
    a, b = bodies["isolated"], bodies["in_process"]
    assert a["capabilities"]["agent_process"] == "isolated"
    assert b["capabilities"]["agent_process"] == "in_process"
    assert a["run_id"] != b["run_id"]
    assert a["cells"] == b["cells"] and a["probe"] == b["probe"]
    assert a["contamination"] == b["contamination"]
    assert trails["isolated"] == trails["in_process"]
    differ = {k for k in a if a[k] != b[k]}
    assert differ == {
        "trajectory",  # its hash: run_start carries the config
        "run_id",
        "capabilities",
        "capability_line",
        "network",
        "limits",
        "binding",
        "config",
    }
    assert {k for k in a["config"] if a["config"][k] != b["config"][k]} == {"agent_process"}


# -- no state crosses cells -----------------------------------------------------------------

MEMORY: dict[str, Any] = {}


def _keyring(op: str) -> int:
    """The kernel's session and user keyrings (x86_64 system calls; 0 elsewhere)."""
    import ctypes
    import platform

    if platform.machine() != "x86_64":
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    found = 0
    for ring in (-3, -4, -5):  # session, user, user-session
        if op == "add":
            libc.syscall(248, b"user", b"main-picks", b"x", 1, ring)  # add_key
        else:
            found += max(0, libc.syscall(250, 10, ring, b"user", b"main-picks", 0))
    return found


def test_nothing_the_agent_keeps_reaches_the_next_cell(march_release: Path, tmp_path: Path) -> None:
    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        found = {
            "file": os.path.exists("/tmp/main-picks"),
            "shm": os.path.exists("/dev/shm/main-picks"),
            "global": "picks" in MEMORY,
            "environment": "MAIN_PICKS" in os.environ,
            "keyring": _keyring("search") > 0,
        }
        picks = [r["row_key"] for r in tools.pit_list()["rows"]]
        if tools.arm == "main":
            Path("/tmp/main-picks").write_text(json.dumps(picks))
            if os.path.isdir("/dev/shm"):
                Path("/dev/shm/main-picks").write_text("x")
            MEMORY["picks"] = picks
            os.environ["MAIN_PICKS"] = "1"
            _keyring("add")
        return {"picks": picks, "text": json.dumps(found)}

    body = run(from_callable(agent), config(march_release, tmp_path, probe=0)).body
    first_of_each_cell = {}
    for e in events(tmp_path / "trajectory.jsonl"):
        if e["event"] == "decision":
            first_of_each_cell.setdefault((e["arm"], e["clock"]), json.loads(e["text"]))
    assert len(first_of_each_cell) == 9
    assert all(not any(found.values()) for found in first_of_each_cell.values())
    # ...while within a cell the agent does keep its own state
    later = [json.loads(t) for t in decision_texts(tmp_path, "main")]
    keyring_tested = _keyring("search") == 0 and os.uname().machine == "x86_64"
    assert any(
        found["file"] and found["global"] and (found["keyring"] or not keyring_tested)
        for found in later
    )
    assert body["capabilities"]["cells_isolated"] is True


MARK_PORT, ABSTRACT_NAME, SHM_KEY = 47998, b"\0pit-main-picks", 0x5049_5400


_MARKS_SCRIPT = """
import ctypes, os, socket, sys, time
port, name, key = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3])
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(1)
client = socket.create_connection(("127.0.0.1", port))
served, _ = listener.accept()
client.close()  # the side that closes first keeps the connection in TIME_WAIT
served.close()
held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
held.bind(b"\\0" + name)
held.listen(1)
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget(key, 4096, 0o1666)  # IPC_CREAT, never removed
libc.sethostname(b"main-picks", 10)
os.makedirs("/dev/shm", exist_ok=True)
open("/dev/shm/main-picks", "w").close()
open("/tmp/main-picks", "w").close()
print("ready", flush=True)
time.sleep(3600)  # a process left behind, holding the sockets
"""


def _leave_marks() -> None:
    """Every kernel channel a cell could leave state in for a later cell or attempt, left
    by a child process (the in-process guard does not reach it) that stays behind."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _MARKS_SCRIPT,
            str(MARK_PORT),
            ABSTRACT_NAME[1:].decode(),
            str(SHM_KEY),
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"ready\n"
    MARKS.append(child)


def _marks_found() -> dict[str, bool]:
    import _socket
    import ctypes

    def tcp_states() -> list[str]:
        lines = []
        for name in ("tcp", "tcp6"):
            with contextlib.suppress(OSError):
                lines += Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        return lines

    def abstract() -> bool:
        probe = _socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.setblocking(False)  # a full backlog is an answer too, not a wait
        try:
            probe.connect(ABSTRACT_NAME)
            return True
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            probe.close()

    libc = ctypes.CDLL(None, use_errno=True)
    return {
        "tcp_state": bool(tcp_states()),
        "abstract_socket": abstract(),
        "sysv_shm": libc.shmget(SHM_KEY, 0, 0) >= 0,
        "hostname": socket.gethostname() == "main-picks",
        "dev_shm": os.path.exists("/dev/shm/main-picks"),
        "tmp": os.path.exists("/tmp/main-picks"),
    }


MARKS: list[Any] = []


def test_no_kernel_channel_carries_state_to_a_later_cell_or_attempt(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main/leaky cell leaves marks in every channel it can find and its first attempt
    is killed; its retry and all eight later cells must find none of them."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        found = _marks_found()
        if tools.arm == "main" and tools.clock == "leaky" and not MARKS:
            _leave_marks()
        if tools.pit_coverage().get("crash_now"):
            os._exit(9)  # the attempt ends; the child it left behind is its only trace
        return {"picks": [], "text": json.dumps(found)}

    original = Toolbox.pit_coverage
    told: list[str] = []

    def crash_the_first_cell_once(self: Toolbox) -> dict[str, Any]:
        result = original(self)
        # marks left a session ago are still held when the attempt ends
        first_cell = self.arm == "main" and self.clock == "leaky"
        if not told and first_cell and self.session_date != "2023-03-01":
            told.append(self.session_date)
            return {**result, "crash_now": True}
        return result

    monkeypatch.setattr(Toolbox, "pit_coverage", crash_the_first_cell_once)
    result = run(from_callable(agent), config(march_release, tmp_path, probe=0))
    assert told
    [entry] = result.body["attempts"]
    assert entry["cell"] == "main/leaky"
    first_of_each_attempt: dict[tuple[str, str], dict[str, bool]] = {}
    for e in events(tmp_path / "trajectory.jsonl"):
        if e["event"] == "decision":
            first_of_each_attempt.setdefault((e["arm"], e["clock"]), json.loads(e["text"]))
    assert len(first_of_each_attempt) == 9
    for cell, found in first_of_each_attempt.items():
        assert not any(found.values()), (cell, found)
    # the marks do hold within the attempt that left them
    later_main = [json.loads(t) for t in decision_texts(tmp_path, "main")[1:3]]
    assert any(f["tcp_state"] and f["abstract_socket"] and f["sysv_shm"] for f in later_main)
    assert result.body["capabilities"]["cells_isolated"] is True


def test_a_cell_cannot_see_or_reach_any_other_process(march_release: Path, tmp_path: Path) -> None:
    """The zygote keeps the next cell's process forked and waiting: no cell may list it,
    read it or write into its memory (that would carry main-arm picks to the next cell)."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import ctypes

        others = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != 1)
        reached = []
        for pid in others or range(2, 64):
            for name, flags in (("mem", os.O_RDWR), ("environ", os.O_RDONLY)):
                try:
                    os.close(os.open(f"/proc/{pid}/{name}", flags))
                    reached.append(f"{pid}/{name}")
                except OSError:
                    pass
        libc = ctypes.CDLL(None, use_errno=True)
        attached = [pid for pid in range(2, 64) if libc.ptrace(16, pid, 0, 0) == 0]
        mine = [p for p in os.listdir("/proc") if p.isdigit()]
        return {"picks": [], "text": json.dumps([others, reached, attached, mine])}

    run(from_callable(agent), config(march_release, tmp_path, probe=0, end="2023-03-01"))
    reports = [json.loads(t) for t in decision_texts(tmp_path)]
    assert len(reports) >= 9
    for others, reached, attached, mine in reports:
        assert (others, reached, attached) == ([], [], []), (others, reached, attached)
        assert mine == ["1"]  # a fresh /proc: the cell's own process alone


# -- limits, tested for effect ----------------------------------------------------------------


def test_memory_limit_ends_the_cell_as_the_agents_resource_limit(
    march_release: Path, tmp_path: Path
) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        hog = bytearray(1 << 30)  # twice the limit below
        return [str(len(hog))]

    settings = SandboxSettings(memory_bytes=512 << 20)
    body = run(
        from_callable(agent),
        config(march_release, tmp_path, probe=0, arms=("main",)),
        sandbox=settings,
    ).body
    assert {c["agent_fault"]["kind"] for c in body["cells"]} == {"resource_limit"}
    assert body["capabilities"]["memory_enforced"] is True
    assert body["capabilities"]["limits"]["memory_bytes"] == 512 << 20


def test_cpu_limit_ends_the_cell_as_the_agents_resource_limit(
    march_release: Path, tmp_path: Path
) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        while True:
            pass

    body = run(
        from_callable(agent),
        config(march_release, tmp_path, probe=0, arms=("main",), clocks=("pit",)),
        sandbox=SandboxSettings(cpu_seconds=1),
    ).body
    [cell] = body["cells"]
    assert cell["status"] == "agent_error"
    assert cell["agent_fault"]["kind"] == "resource_limit"
    assert "CPU time" in cell["agent_fault"]["message"]


def test_open_files_limit_holds(march_release: Path, tmp_path: Path) -> None:
    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        handles = []
        try:
            while len(handles) < 10_000:
                handles.append(open("/dev/null"))  # noqa: SIM115
        except OSError as exc:
            return {"picks": [], "text": f"{len(handles)} {exc.errno}"}
        return {"picks": [], "text": f"{len(handles)} none"}

    run(
        from_callable(agent),
        config(march_release, tmp_path, probe=0, arms=("main",), clocks=("pit",)),
        sandbox=SandboxSettings(open_files=64),
    )
    counts = {t.split()[1] for t in decision_texts(tmp_path)}
    assert counts == {"24"}  # EMFILE
    assert all(int(t.split()[0]) < 64 for t in decision_texts(tmp_path))


def test_capabilities_are_fields_and_one_line(march_release: Path, tmp_path: Path) -> None:
    body = run(stub(), config(march_release, tmp_path / "iso")).body
    caps = body["capabilities"]
    for key in LINE_FIELDS[1:]:
        assert caps[key] is True, key
    assert body["capability_line"].startswith("agent_process=isolated network_isolated=True")
    assert body["config"]["agent_process"] == "isolated"
    assert caps["uid"] == 65534
    assert not any(line.startswith("network: the guard patches") for line in body["limits"])

    fallback = run(stub(), config(march_release, tmp_path / "in", agent_process="in_process"))
    caps = fallback.body["capabilities"]
    assert caps["agent_process"] == "in_process" and caps["network_isolated"] is False
    assert any("harness's own process" in line for line in fallback.body["limits"])


def test_without_bubblewrap_auto_falls_back_and_isolated_refuses(
    march_release: Path, tmp_path: Path
) -> None:
    (tmp_path / "run.json").write_text(
        json.dumps(
            {
                "bundle_path": str(march_release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-02",
                "probe": 0,
            }
        )
    )
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # no bwrap on it
    pit = [sys.executable, "-m", "harness.cli", "run", "--config", str(tmp_path / "run.json")]
    done = subprocess.run(pit, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    assert receipt["body"]["capabilities"]["agent_process"] == "in_process"
    assert "not installed" in receipt["body"]["capabilities"]["isolation_unavailable"]

    refused = subprocess.run(
        [*pit, "--agent-process", "isolated"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert refused.returncode == 2 and "bubblewrap" in refused.stderr


def test_the_seeds_script_example_runs_isolated(march_release: Path, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(
        "from harness import Bundle, RunConfig, run\n"
        "from harness.agents.adapters.plain import from_callable\n"
        f"bundle = Bundle.load({str(march_release)!r}, forms=['8-K'], start='2023-03-01', end='2023-03-03')\n"
        "def my_agent(prompt, tools):\n"
        "    return [r['row_key'] for r in tools.pit_list(limit=20)['rows']]\n"
        "result = run(from_callable(my_agent), RunConfig(bundle_path=bundle.root, forms=('8-K',),\n"
        "    start='2023-03-01', end='2023-03-03', trajectory_path='t.jsonl', receipt_path='r.json'),\n"
        "    bundle)\n"
        "print(result.body['capability_line'], result.valid)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agent_process=isolated network_isolated=True")
    assert done.stdout.strip().endswith("True")


def test_isolated_without_a_sandbox_is_a_config_error(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.isolation.sandbox import outside

    monkeypatch.setattr(outside, "availability", lambda: (False, "bubblewrap is not installed"))
    with pytest.raises(ConfigError, match="bubblewrap"):
        run(stub(), config(march_release, tmp_path))
    assert not (tmp_path / "trajectory.jsonl").exists()


# -- trades no one could have made ------------------------------------------------------------


def test_acceptance_counts_match_a_hand_count(march_release: Path, tmp_path: Path) -> None:
    """Counted here from the rows with datetime alone, not with the harness's clocks."""
    from datetime import datetime, time
    from zoneinfo import ZoneInfo

    result = run(stub(), config(march_release, tmp_path, end="2023-03-17", probe=0))
    rows = {r["row_key"]: r for r in Bundle.load(march_release).rows("main")}
    stamped = [r for r in rows.values() if r.get("acceptance_at")]
    assert stamped

    def accepted(row: dict[str, Any]) -> datetime:
        return datetime.fromisoformat(row["acceptance_at"])

    def known(row: dict[str, Any], clock: str) -> datetime:
        utc = ZoneInfo("UTC")
        if clock == "leaky":
            return datetime.combine(date.fromisoformat(row["partition_date"]), time(0), utc)
        if clock == "dump":
            day = date.fromisoformat(row["published_at"][:10])
            return datetime.combine(day, time(23, 59, 59), utc)
        return accepted(row)

    window = [
        r
        for r in stamped
        if "2023-03-01" <= r["partition_date"] <= "2023-03-17" and r["form"] == "8-K"
    ]
    new_york = ZoneInfo("America/New_York")
    for cell in result.body["cells"]:
        clock = cell["clock"]
        by_hand = sum(1 for r in window if known(r, clock) < accepted(r))
        assert cell["knowable_before_acceptance"] == by_hand, cell
        entered = 0
        for trade in result.trades(cell["arm"], clock):
            row = rows[trade.row_key]
            if row.get("acceptance_at"):
                bell = datetime.combine(
                    date.fromisoformat(trade.entry_session), time(9, 30), new_york
                )
                entered += bell < accepted(row)
        assert cell["entered_before_acceptance"] == entered, cell
        if clock == "leaky":
            assert entered > 0 and by_hand > 0  # the leaky clock shows them
        else:
            assert entered == 0  # by construction
        if clock == "pit":
            assert by_hand == 0


def test_egress_in_a_failed_attempt_still_invalidates_the_run(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retry laundering: the first attempt dials out and then dies; its retry is clean.
    The attempt's egress is recorded in the ledger and the trajectory, and counts."""

    def agent(prompt: str, tools: Any) -> list[str]:
        told = tools.pit_coverage()
        if told.get("dial_now"):
            with contextlib.suppress(OSError):
                socket.create_connection(("example.com", 443), timeout=1)
        if told.get("crash_now"):
            os._exit(9)
        return []

    told = _crash_when_told(monkeypatch, times=1, dial_first=True)
    result = run(from_callable(agent), config(march_release, tmp_path, probe=0))
    assert told
    [entry] = result.body["attempts"]
    sites = [a for a in entry["egress_attempts"] if "call" in a]
    on_wire = [a for a in entry["egress_attempts"] if "protocol" in a]
    assert sites and all("example.com" in a["target"] for a in sites), entry
    # the look-up for example.com, on the cell's wire
    assert [(a["protocol"], a["address"], a["port"]) for a in on_wire] == [
        ("udp", "192.0.2.53", 53)
    ]
    assert result.body["valid"] is False
    # every egress attempt of the run was made in the attempt that failed
    assert result.body["network"]["egress_attempts"] == len(on_wire)
    rederived = rederive(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", release=march_release
    )
    assert rederived.ok, rederived.first_mismatch


def test_a_cell_whose_agent_process_exits_in_every_attempt_is_incomplete_not_our_failure(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 002: an agent process that exits mid-cell is retried from the cell's first
    step; when every attempt ends that way the cell is incomplete, worded as a fact, the
    run not rankable, and an honest receipt re-derives ok (cell_failed is read)."""

    def agent(prompt: str, tools: Any) -> list[str]:
        if tools.pit_coverage().get("crash_now"):
            os._exit(9)
        return []

    _crash_when_told(monkeypatch, times=3)
    result = run(from_callable(agent), config(march_release, tmp_path, probe=0))
    assert len(result.body["attempts"]) == 3
    statuses = {(c["arm"], c["clock"]): c["status"] for c in result.body["cells"]}
    assert statuses.pop(("main", "leaky")) == "incomplete"
    assert set(statuses.values()) == {"complete"}
    assert result.body["rankable"] is False
    [why] = result.body["not_rankable_because"]
    assert why.startswith("cell main/leaky: incomplete, the agent's process exited")
    assert "harness" not in why  # a fact about the agent's process, not our failure
    assert result.incomplete and not result.harness_failed
    [failed] = [e for e in events(tmp_path / "trajectory.jsonl") if e["event"] == "cell_failed"]
    assert failed["status"] == "incomplete"
    rederived = rederive(
        tmp_path / "receipt.json", trajectory=tmp_path / "trajectory.jsonl", release=march_release
    )
    assert rederived.ok, rederived.first_mismatch


CLOSES_ITS_PIPE = """
import os, socket, stat, time

def agent(prompt, tools):
    if "(main arm, leaky clock)" in prompt:
        for fd in range(3, 256):
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    socket.socket(fileno=fd).shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        time.sleep(3600)  # its pipe is closed and it lives on
    return []
"""


def test_an_agent_that_closes_its_pipe_and_lives_on_is_ended_and_the_cell_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], march_release: Path
) -> None:
    folder = tmp_path / "agentsrc"
    folder.mkdir()
    (folder / "pipe_closer.py").write_text(CLOSES_ITS_PIPE)
    sys.path.insert(0, str(folder))
    try:
        code, body, err = _cli_run(
            capsys, march_release, tmp_path / "out", "pipe_closer:agent", agent_process="isolated"
        )
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("pipe_closer", None)
    assert code == 4, err  # the agent's side of the line, not exit 3
    assert "incomplete, the agent's process exited" in err
    by_cell = {(c["arm"], c["clock"]): c["status"] for c in body["cells"]}
    assert by_cell[("main", "leaky")] == "incomplete"
    assert [a["cell"] for a in body["attempts"]] == ["main/leaky"] * 3
    assert all("closed its pipe" in a["failure"] for a in body["attempts"])


def test_a_cell_the_sandbox_fails_in_every_attempt_is_our_harness_error(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.isolation.sandbox import outside

    original = outside.IsolatedAgent.decide

    def broken(self: Any, task: Any, tools: Toolbox) -> Any:
        if (task.arm, task.clock) == ("shifted", "pit"):
            raise outside.RuntimeFailure("the sandbox's zygote is gone (test)")
        return original(self, task, tools)

    monkeypatch.setattr(outside.IsolatedAgent, "decide", broken)
    result = run(stub(), config(march_release, tmp_path, probe=0))
    by_cell = {(c["arm"], c["clock"]): c["status"] for c in result.body["cells"]}
    assert by_cell[("shifted", "pit")] == "harness_error"
    assert result.harness_failed and not result.incomplete
    [why] = result.body["not_rankable_because"]
    assert "a harness problem, not the agent's result" in why


# -- where the harness and the agent's folders lie --------------------------------------------


def test_an_agent_folder_holding_the_release_prices_and_outputs_shows_them_masked(
    tmp_path: Path,
) -> None:
    """An external agent's folder (``--agent-dir``) that also holds the release, the price
    file and the run's outputs: the agent runs, and sees each of them empty."""
    folder = tmp_path / "agent"
    folder.mkdir()
    release = build_release(folder / "release", end=date(2023, 3, 3), seed=3, rows=400)
    prices = folder / "prices.csv"
    prices.write_text("date,symbol,open,close\n2023-03-01,ZZZZ,1.0,1.0\n")
    (folder / "looker.py").write_text(
        "import json, os, sys\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "def seen(name):\n"
        "    path = os.path.join(HERE, name)\n"
        "    if not os.path.exists(path):\n"
        "        return 'absent'\n"
        "    if os.path.isdir(path):\n"
        "        return sorted(os.listdir(path))\n"
        "    try:\n"
        "        with open(path, 'rb') as handle:\n"
        "            return len(handle.read())\n"
        "    except OSError as exc:\n"
        "        return exc.strerror\n"
        "for line in sys.stdin:\n"
        "    text = json.dumps([sorted(os.listdir(HERE)), seen('release'), seen('prices.csv'),"
        " seen('out')])\n"
        "    sys.stdout.write(json.dumps({'type': 'decision', 'picks': [], 'text': text}) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )
    out = folder / "out"
    run_json = tmp_path / "run.json"
    run_json.write_text(
        json.dumps(
            {"bundle_path": str(release), "forms": ["8-K"], "start": "2023-03-01",
             "end": "2023-03-02", "arms": ["main"], "clocks": ["pit"], "probe": 0,
             "agent_process": "isolated",
             "prices": {"path": str(prices), "source": "SYNTHETIC"}}
        )
    )  # fmt: skip
    code = cli_main(["run", "--config", str(run_json), "--trajectory", str(out / "trajectory.jsonl"),
                     "--receipt", str(out / "receipt.json"), "--agent-cmd",
                     f"{sys.executable} {folder / 'looker.py'}", "--agent-dir", str(folder)])  # fmt: skip
    assert code == 0
    shown = [json.loads(t) for t in decision_texts(out)]
    assert shown and all(s[0] == ["looker.py", "out", "prices.csv", "release"] for s in shown)
    # the release and the outputs are empty folders; the price file shows nothing of itself
    assert all(s[1] == [] and s[3] == [] for s in shown), shown
    assert all(s[2] in (0, "Permission denied") for s in shown), shown


def test_a_harness_run_from_a_source_tree_on_pythonpath_starts_its_sandbox(
    march_release: Path, tmp_path: Path
) -> None:
    """Not installed, only on PYTHONPATH: the sandbox finds the harness where it lies."""
    tree = tmp_path / "src"
    tree.mkdir()
    repo = Path(__file__).resolve().parents[3]
    for package in ("harness", "pit_harness"):
        subprocess.run(["cp", "-r", str(repo / package), str(tree / package)], check=True)
    out = tmp_path / "out"
    run_json = tmp_path / "run.json"
    run_json.write_text(
        json.dumps(
            {"bundle_path": str(march_release), "forms": ["8-K"], "start": "2023-03-01",
             "end": "2023-03-02", "arms": ["main"], "clocks": ["pit"], "probe": 0,
             "agent_process": "isolated", "trajectory_path": str(out / "t.jsonl"),
             "receipt_path": str(out / "r.json")}
        )
    )  # fmt: skip
    script = (
        "import sys, harness\n"
        f"assert harness.__file__.startswith({str(tree)!r}), harness.__file__\n"
        "from harness.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "run", "--config", str(run_json)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    body = json.loads((out / "r.json").read_text())["body"]
    assert body["capabilities"]["agent_process"] == "isolated" and body["valid"] is True
