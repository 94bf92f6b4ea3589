"""The cell's wire: egress counted outside the agent's reach.

Every packet an agent sends off loopback goes to a device the cell's outer process holds;
each attempt is reported to the harness before it is refused. The guard inside the agent's
process only adds call sites, so an agent that erases the guard's record, or reaches around
it, is counted all the same. And nothing of ours that an agent can read differs between a
run and its re-execution.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents.external import command_agent
from harness.cli import main
from harness.isolation.sandbox import wire
from harness.receipt.build import write_receipt
from harness.runs.reexecute import REPRODUCED, reexecute
from tests.support.sandbox import require_sandbox, sandbox_config

OUTSIDE = "198.51.100.7"  # TEST-NET-2: only a route out could reach it


def _sum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def _syn_v4(src: str, dst: str, sport: int, dport: int, seq: int) -> bytes:
    segment = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x02, 64240, 0, 0)
    header = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        40,
        1,
        0x4000,
        64,
        6,
        0,
        socket.inet_aton(src),
        socket.inet_aton(dst),
    )
    return header + segment


def _udp_v4(src: str, dst: str, dport: int) -> bytes:
    segment = struct.pack("!HHHH", 40000, dport, 12, 0) + b"abcd"
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 32, 1, 0, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst)
    )
    return header + segment


def _v6(src: str, dst: str, protocol: int, payload: bytes) -> bytes:
    return (
        struct.pack(
            "!IHBB16s16s",
            6 << 28,
            len(payload),
            protocol,
            64,
            socket.inet_pton(socket.AF_INET6, src),
            socket.inet_pton(socket.AF_INET6, dst),
        )
        + payload
    )


# -- the packets -----------------------------------------------------------------------------


def test_a_syn_is_an_attempt_answered_by_a_reset_with_valid_checksums() -> None:
    attempt, refusal, _ = wire.inspect(_syn_v4("10.254.0.1", OUTSIDE, 40001, 443, 1000))
    assert attempt is not None and refusal is not None
    assert (attempt["protocol"], attempt["address"], attempt["port"]) == ("tcp", OUTSIDE, 443)
    assert attempt["at"].endswith("Z")
    header, segment = refusal[:20], refusal[20:]
    assert _sum(header) == 0xFFFF  # the IPv4 header checksum holds
    assert (header[9], socket.inet_ntoa(header[12:16]), socket.inet_ntoa(header[16:20])) == (
        6,
        OUTSIDE,
        "10.254.0.1",
    )
    pseudo = header[12:20] + struct.pack("!BBH", 0, 6, len(segment))
    assert _sum(pseudo + segment) == 0xFFFF  # and the TCP checksum
    sport, dport, _, ack, _, flags = struct.unpack("!HHIIBB", segment[:14])
    assert (sport, dport, ack) == (443, 40001, 1001)
    assert flags == 0x14  # RST | ACK: the connection is refused at once


def test_a_datagram_is_an_attempt_answered_by_port_unreachable() -> None:
    packet = _udp_v4("10.254.0.1", "192.0.2.53", 53)
    attempt, refusal, _ = wire.inspect(packet)
    assert attempt is not None and refusal is not None
    assert (attempt["protocol"], attempt["address"], attempt["port"]) == ("udp", "192.0.2.53", 53)
    message = refusal[20:]
    assert refusal[9] == 1 and message[:2] == b"\x03\x03"  # ICMP port unreachable
    assert _sum(message) == 0xFFFF
    assert message[8:] == packet  # quoting what it refuses, so the socket learns of it


def test_an_ipv6_syn_is_refused_with_a_valid_reset() -> None:
    segment = struct.pack("!HHIIBBHHH", 40002, 80, 7, 0, 5 << 4, 0x02, 64240, 0, 0)
    attempt, refusal, _ = wire.inspect(_v6("fd00:7069:7400::1", "2001:db8::1", 6, segment))
    assert attempt is not None and refusal is not None
    assert (attempt["protocol"], attempt["address"], attempt["port"]) == ("tcp", "2001:db8::1", 80)
    src, dst, reply = refusal[8:24], refusal[24:40], refusal[40:]
    pseudo = src + dst + struct.pack("!I3xB", len(reply), 6)
    assert _sum(pseudo + reply) == 0xFFFF
    assert struct.unpack("!HHII", reply[:12])[1:] == (40002, 0, 8)


def test_one_flow_is_one_attempt_however_many_packets_it_sends() -> None:
    query = _udp_v4("10.254.0.1", "192.0.2.53", 53)
    retry = _syn_v4("10.254.0.1", OUTSIDE, 40001, 443, 1000)
    again = _syn_v4("10.254.0.1", OUTSIDE, 40002, 443, 1000)
    flows = [wire.inspect(p)[2] for p in (query, query, retry, retry, again)]
    assert flows[0] == flows[1] and flows[2] == flows[3]  # a look-up's queries, a resent SYN
    assert len(set(flows)) == 3  # a new connection is a new attempt


def test_what_the_kernel_sends_by_itself_and_segments_of_no_new_flow_are_not_counted() -> None:
    solicitation = _v6("fe80::1", "ff02::2", 58, bytes([133, 0, 0, 0]) + bytes(4))
    assert wire.inspect(solicitation)[:2] == (None, None)
    ack = bytearray(_syn_v4("10.254.0.1", OUTSIDE, 40001, 443, 1))
    ack[33] = 0x10  # an ACK alone: no flow is ever open, so it opens none
    assert wire.inspect(bytes(ack))[:2] == (None, None)
    assert wire.inspect(b"")[:2] == (None, None)
    echo = _v6("fd00:7069:7400::1", "2001:db8::1", 58, bytes([128, 0, 0, 0]) + bytes(4))
    attempt, refusal, _ = wire.inspect(echo)
    assert attempt is not None and attempt["protocol"] == "icmpv6" and refusal is None


# -- a run -----------------------------------------------------------------------------------


@pytest.fixture()
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module of agents that reach out and then try to hide it."""
    (tmp_path / "reachers.py").write_text(
        textwrap.dedent(
            f"""
            import gc, subprocess, sys, urllib.request

            def _erase():
                from harness.isolation.guard import NetworkGuard
                for thing in gc.get_objects():
                    if isinstance(thing, NetworkGuard):
                        thing.attempts.clear()

            def eraser(prompt, tools):
                try:
                    urllib.request.urlopen("http://{OUTSIDE}/", timeout=3)
                except Exception:
                    pass
                _erase()
                return [r["row_key"] for r in tools.pit_list(limit=1)["rows"]]

            def around(prompt, tools):
                code = (
                    "import _socket, socket\\n"
                    "s = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)\\n"
                    "s.settimeout(3)\\n"
                    "try:\\n"
                    "    s.connect(('{OUTSIDE}', 8443))\\n"
                    "except OSError as exc:\\n"
                    "    print(exc.errno)\\n"
                )
                done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                return {{"picks": [], "text": done.stdout.strip()}}
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _events(path: str, kind: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [e for e in events if e["event"] == kind]


def test_an_agent_that_erases_the_guards_record_is_counted_on_the_wire(
    march_release: Path, tmp_path: Path, agents: Path
) -> None:
    require_sandbox()
    config = sandbox_config(
        march_release, tmp_path / "out", probe=0, arms=("main",), clocks=("pit",)
    )
    body = run("reachers:eraser", config).body
    network = body["network"]
    sessions = body["cells"][0]["sessions"]
    assert network["counted"] == "wire" and network["guard"] == "network-namespace+wire"
    assert network["guard_sites"] == 0  # the agent's own record is gone
    assert network["egress_attempts"] == sessions == len(network["wire"])
    assert {(w["protocol"], w["address"], w["port"], w["cell"]) for w in network["wire"]} == {
        ("tcp", OUTSIDE, 80, "main/pit")
    }
    assert body["valid"] is False and network["clean"] is False
    assert body["invalidated_by"][0] == f"network_egress: tcp {OUTSIDE}:80 on the wire in main/pit"
    assert "removed" in network["difference"]
    # each attempt is in the trajectory with its time, and the receipt verifies
    seen = _events(config.trajectory_path, "wire_attempt")
    assert len(seen) == sessions and all(e["at"].endswith("Z") for e in seen)
    code = main(["verify", config.receipt_path, "--trajectory", config.trajectory_path,
                 "--bundle", str(march_release)])  # fmt: skip
    assert code == 0


def test_a_receipt_that_drops_a_wire_attempt_fails_rederivation(
    march_release: Path, tmp_path: Path, agents: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_sandbox()
    config = sandbox_config(
        march_release, tmp_path / "out", probe=0, arms=("main",), clocks=("pit",)
    )
    run("reachers:eraser", config)
    receipt = json.loads(Path(config.receipt_path).read_text())
    body = receipt["body"]
    body["network"]["wire"] = body["network"]["wire"][1:]
    write_receipt(config.receipt_path, body)  # every hash consistent again
    code = main(["verify", config.receipt_path, "--trajectory", config.trajectory_path,
                 "--bundle", str(march_release)])  # fmt: skip
    assert code != 0
    assert "network egress_attempts" in capsys.readouterr().out


def test_a_subprocess_reaching_around_the_guard_is_counted_and_refused_at_once(
    march_release: Path, tmp_path: Path, agents: Path
) -> None:
    require_sandbox()
    config = sandbox_config(
        march_release, tmp_path / "out", probe=0, arms=("main",), clocks=("pit",), end="2023-03-01"
    )
    body = run("reachers:around", config).body
    texts = [e["text"] for e in _events(config.trajectory_path, "decision")]
    assert texts and set(texts) == {"111"}  # ECONNREFUSED: a reset, not a wait for a timeout
    assert [(w["protocol"], w["address"], w["port"]) for w in body["network"]["wire"]] == [
        ("tcp", OUTSIDE, 8443)
    ] * len(texts)
    assert body["network"]["guard_sites"] == 0 and body["valid"] is False


def test_under_abort_the_first_attempt_on_the_wire_ends_the_run(
    march_release: Path, tmp_path: Path, agents: Path
) -> None:
    require_sandbox()
    config = sandbox_config(march_release, tmp_path / "out", probe=0, network_policy="abort")
    body = run("reachers:eraser", config).body
    assert body["valid"] is False
    assert body["aborted"] == f"network egress on the wire: tcp {OUTSIDE}:80"
    assert body["cells"][0]["status"] == "aborted"
    assert all(c["status"] == "not_run" for c in body["cells"][1:])


def test_an_honest_run_sees_nothing_on_the_wire(march_release: Path, tmp_path: Path) -> None:
    require_sandbox()
    config = sandbox_config(march_release, tmp_path / "out")
    body = run("stub", config).body
    network = body["network"]
    assert body["valid"] is True and network["clean"] is True
    assert network["counted"] == "wire"
    assert (network["egress_attempts"], network["wire"], network["guard_sites"]) == (0, [], 0)
    assert network["difference"] is None
    assert body["capabilities"]["network_isolated"] is True


# -- nothing of ours varies between executions --------------------------------------------

FACTS = """
import hashlib, json, os, resource, socket, sys

def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError as exc:
        return "unreadable: %s" % exc.errno

def _listing(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError as exc:
        return "unlistable: %s" % exc.errno

STATUS = ("Name", "Umask", "Pid", "PPid", "TracerPid", "Uid", "Gid", "Groups", "NStgid", "NSpid",
          "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")

def facts():
    status = [line for line in _read("/proc/self/status").splitlines()
              if line.split(":")[0] in STATUS]
    limits = {name: resource.getrlimit(getattr(resource, name))
              for name in dir(resource) if name.startswith("RLIMIT_")}
    return {
        "cwd": os.getcwd(), "cwd_listing": _listing("."), "uname": list(os.uname()),
        "hostname": socket.gethostname(), "environ": dict(os.environ),
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
        "limits": limits, "mounts": _read("/proc/self/mounts"), "status": status,
        "cgroup": _read("/proc/self/cgroup"), "cmdline": _read("/proc/self/cmdline"),
        "environ_file": _read("/proc/self/environ"), "root": _listing("/"),
        "tmp": _listing("/tmp"), "etc": _listing("/etc"), "dev": _listing("/dev"),
        "resolv": _read("/etc/resolv.conf"), "hosts": _read("/etc/hosts"),
        "interfaces": sorted(name for _, name in socket.if_nameindex()),
        "executable": sys.executable, "path": sys.path, "umask": os.umask(0o022),
    }

def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()

def digest():
    return _digest(facts())

def shown():
    found = facts()
    return {"cwd": found["cwd"], "hostname": found["hostname"], "resolv": found["resolv"],
            "each": {name: _digest(value)[:12] for name, value in found.items()}}
"""


def test_an_agent_that_reads_every_fact_of_its_cell_re_executes_clean(
    march_release: Path, tmp_path: Path
) -> None:
    """The agent turns what it can read of its cell (working folder, host name, user,
    environment, limits, mounts, /proc/self) into a pick no row has: refused, recorded, and
    compared on re-execution, where any fact of ours that differed would diverge."""
    require_sandbox()
    agent = tmp_path / "facts.py"
    agent.write_text(
        FACTS
        + textwrap.dedent(
            """
            for line in sys.stdin:
                task = json.loads(line)
                sys.stdout.write(json.dumps({"type": "decision", "picks": ["r-" + digest()[:16]],
                                             "text": json.dumps(shown())}) + "\\n")
                sys.stdout.flush()
            """
        )
    )
    spec = command_agent([sys.executable, str(agent)])
    config = sandbox_config(march_release, tmp_path / "out", probe=0, arms=("main", "shifted"))
    body = run(spec, config).body
    decisions = _events(config.trajectory_path, "decision")
    rejected = {json.dumps(d["rejected"]) for d in decisions}
    each = [json.loads(d["text"])["each"] for d in decisions]
    differing = sorted(name for name in each[0] if len({e[name] for e in each}) > 1)
    assert len(rejected) == 1 and not differing, f"facts that differ between cells: {differing}"
    shown = json.loads(decisions[0]["text"])
    assert shown["cwd"] == "/tmp/agent" and shown["hostname"] == "pit-sandbox"
    assert shown["resolv"].startswith("nameserver 192.0.2.53")
    assert body["valid"] is True
    again = reexecute(
        config.receipt_path, trajectory=config.trajectory_path, bundle=march_release, agent=spec
    )
    assert again.result == REPRODUCED, again
