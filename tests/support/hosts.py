"""Machines of the test's own on one machine: each a network namespace reached over a veth
pair, whose processes run with a host name of their own in a mount namespace of their own with private /tmp and var
folders (a tmpfs each), so they see none of each other's files nor the test's.

The checkout stays visible at its path (it is the image every machine runs), bound back
over the private /tmp where it lies under /tmp. The services on the test's loopback
(PostgreSQL, Redis, the object store, a model server) are forwarded to one address of the
test's side (``SERVICES``), which each machine reaches through its link, as a network
would carry them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deploy import compose_processes

REPO = Path(__file__).resolve().parents[2]
VAR = "/tmp/pitweb-var"  # each machine's var folder: on its private /tmp
SUBNET = "10.231"
# where every machine finds the shared services: an address of the test's side, routed to
# from each machine through its link (the forwarder listens there)
SERVICES = f"{SUBNET}.0.1"


def unavailable() -> str | None:
    """Why machines of the test's own cannot be made here, or None."""
    if os.geteuid() != 0:
        return "network and mount namespaces need root"
    for tool in ("ip", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(
        ["ip", "netns", "add", "pitweb-probe"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        return f"ip netns add failed: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", "pitweb-probe"], check=False)
    return None


@dataclass(frozen=True)
class Host:
    name: str
    index: int

    @property
    def netns(self) -> str:
        return f"pitweb-{self.name}"

    @property
    def address(self) -> str:
        """The machine's own address, as the test reaches it."""
        return f"{SUBNET}.{self.index}.2"

    @property
    def gateway(self) -> str:
        """The test's side of the link."""
        return f"{SUBNET}.{self.index}.1"

    def start(self, args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        """``args`` run on this machine, in a process group of its own."""
        script = (
            f"set -e; hostname {self.name}; mount --make-rprivate /; mount -t tmpfs tmpfs /mnt; mkdir /mnt/code;"
            f' mount --rbind "{REPO}" /mnt/code; mount -t tmpfs tmpfs /tmp;'
            " mount -t tmpfs tmpfs /var/tmp;"
            f' mkdir -p "{REPO}" {VAR}; mount --rbind /mnt/code "{REPO}";'
            f' if [ -d "{REPO}/var" ]; then mount -t tmpfs tmpfs "{REPO}/var"; fi;'
            f' cd "{REPO}"; exec "$@"'
        )
        handle = open(log, "wb")  # noqa: SIM115 - owned by the process
        return subprocess.Popen(
            ["ip", "netns", "exec", self.netns, "unshare", "--mount", "--uts", "--propagation",
             "private", "--", "sh", "-c", script, "sh", *args],
            env={**env, "PITWEB_VAR_DIR": VAR, "TMPDIR": "/tmp"},
            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextmanager
def machines(*names: str) -> Iterator[list[Host]]:
    """One machine per name, linked to the test's side; removed on the way out."""
    made: list[Host] = []
    subprocess.run(["ip", "addr", "del", f"{SERVICES}/32", "dev", "lo"], check=False,
                   capture_output=True)  # fmt: skip
    _ip("addr", "add", f"{SERVICES}/32", "dev", "lo")
    try:
        for index, name in enumerate(names, start=1):
            host = Host(name, index)
            subprocess.run(["ip", "netns", "del", host.netns], check=False, capture_output=True)
            subprocess.run(["ip", "link", "del", f"pw{index}h"], check=False, capture_output=True)
            _ip("netns", "add", host.netns)
            made.append(host)
            _ip("link", "add", f"pw{index}h", "type", "veth", "peer", "name", f"pw{index}c",
                "netns", host.netns)  # fmt: skip
            _ip("addr", "add", f"{host.gateway}/30", "dev", f"pw{index}h")
            _ip("link", "set", f"pw{index}h", "up")
            _ip("-n", host.netns, "addr", "add", f"{host.address}/30", "dev", f"pw{index}c")
            _ip("-n", host.netns, "link", "set", f"pw{index}c", "up")
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", host.netns, "route", "add", "default", "via", host.gateway)
        yield made
    finally:
        subprocess.run(["ip", "addr", "del", f"{SERVICES}/32", "dev", "lo"], check=False,
                       capture_output=True)  # fmt: skip
        for host in made:
            subprocess.run(["ip", "netns", "del", host.netns], check=False, capture_output=True)
            subprocess.run(
                ["ip", "link", "del", f"pw{host.index}h"], check=False, capture_output=True
            )


class Forwarder(compose_processes.Forwarder):
    """TCP from ``SERVICES`` to a service on the test's loopback: what the machines share,
    and nothing else (the compose script's published ports, at another address)."""

    def forward(self, port: int, to: tuple[str, int], at: str = SERVICES) -> None:
        super().forward(port, to, at)
