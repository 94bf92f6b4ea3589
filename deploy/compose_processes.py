"""docker-compose.yml started as processes, where no container engine runs.

Each service (each replica, with ``--scale``) gets a machine of its own: a network
namespace on one bridge (as compose's default network), a host name, and a mount
namespace with private /tmp and the image's own folders, so no two services see each
other's files except through the volumes the file names. Every service name resolves to
its machine's address (``/etc/hosts`` inside each). What the file says is what runs: each
service's command (or its image's), its environment (the image's ``ENV``, then
``env_file``, then ``environment``), its volumes (named volumes are folders under the state
directory, shared by the services that mount them; bind mounts are bound, read-only where
marked), ``depends_on`` with its conditions, each healthcheck run inside its service,
``ports`` published on the loopback, and ``restart``.

What stands in for each image (``IMAGES``): the checkout and its virtual environment for
the site's image (built from the Dockerfile: its ``ENV``, ``WORKDIR`` and folders), and
this machine's PostgreSQL, Redis and nginx for theirs, started as their images' entry
points start them. What is not reproduced: the images' exact versions (this machine's
packages), the site's image user (services run as root, PostgreSQL, Redis and nginx as
their own users), ``cpu_shares`` (approximated by ``nice``) and ``security_opt`` (no
seccomp or AppArmor profile is applied here, so there is nothing to lift).

    python deploy/compose_processes.py up --env-file .env [--scale worker=2] [--state DIR]
    python deploy/compose_processes.py exec --state DIR SERVICE COMMAND...
    python deploy/compose_processes.py cp --state DIR PATH SERVICE:PATH

``up`` prints ``compose: ready`` once every service is started (and healthy where it has
a healthcheck), then runs until interrupted, and removes every namespace on the way out.
It needs root, iproute2 and util-linux (``unshare``, ``nsenter``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
BRIDGE = "pwcompose0"
SUBNET = "10.232.0"
SYSTEM = {Path(p) for p in ("/", "/etc", "/usr", "/var", "/bin", "/lib", "/sbin", "/root")}
POSTGRES_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), Path("/usr/bin"))


@dataclass(frozen=True)
class Image:
    """What stands in for an image here: its environment, working folder, the folders
    that are its own (a private tmpfs each), the command it runs when the service names
    none, a preparation run before the command, and the user it runs as."""

    env: dict[str, str]
    workdir: str
    own: tuple[str, ...]
    command: tuple[str, ...] = ()
    prepare: str = ""
    user: str = ""


def _dockerfile() -> tuple[dict[str, str], str, tuple[str, ...]]:
    """The site's image as its Dockerfile builds it: ENV, WORKDIR and the folders made."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    workdir, folders = "/", list[str]()
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "ENV":
            env.update(item.partition("=")[::2] for item in shlex.split(rest) if "=" in item)
        elif word == "WORKDIR":
            workdir = rest.strip()
        elif word == "RUN" and "mkdir -p" in rest:
            made = rest.split("mkdir -p", 1)[1].split("&&")[0].split()
            folders += made
    return env, workdir, tuple(folders)


def _site_image() -> Image:
    env, workdir, folders = _dockerfile()
    venv = REPO / ".venv" / "bin"
    return Image(
        env={**env, "PATH": f"{venv}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
             "HOME": "/srv/pitweb", "PYTHONPATH": str(REPO)},
        workdir=str(REPO) if workdir == "/app" else workdir,  # the checkout is what it copies
        own=("/srv",),
        prepare="mkdir -p " + " ".join(folders),
    )  # fmt: skip


# PostgreSQL's image: a cluster made on first start from POSTGRES_USER, _PASSWORD and _DB,
# reachable from the other services with a password, as its entry point makes it
_POSTGRES_INIT = """
export PGDATA=/var/lib/postgresql/data
mkdir -p "$PGDATA" && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\\n' "$POSTGRES_PASSWORD" > /tmp/pwfile && chown postgres /tmp/pwfile
  setpriv --reuid=postgres --regid=postgres --init-groups initdb -D "$PGDATA" \\
    -U "$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm /tmp/pwfile
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "${POSTGRES_DB:=$POSTGRES_USER}" != postgres ]; then
    echo "CREATE DATABASE \\"$POSTGRES_DB\\"" | setpriv --reuid=postgres --regid=postgres \\
      --init-groups postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
"""

IMAGES: dict[str, Image] = {
    "postgres": Image(
        env={
            "PATH": f"{POSTGRES_BIN}:/usr/bin:/bin:/usr/sbin:/sbin",
            "PGDATA": "/var/lib/postgresql/data",
        },
        workdir="/",
        own=("/var/lib/postgresql", "/var/run/postgresql"),
        command=("postgres",),
        prepare=_POSTGRES_INIT,
        user="postgres",
    ),
    # Redis's image turns protected mode off, so other services reach it
    "redis": Image(
        env={"PATH": "/usr/bin:/bin"},
        workdir="/data",
        own=("/data",),
        command=("redis-server",),
        prepare="chown redis /data",
        user="redis",
    ),
    # nginx's image: its configuration is conf.d alone; logs and pid file of its own
    "nginx": Image(
        env={"PATH": "/usr/sbin:/usr/bin:/bin"},
        workdir="/",
        own=(
            "/etc/nginx/conf.d",
            "/etc/nginx/sites-enabled",
            "/var/log/nginx",
            "/var/lib/nginx",
            "/run",
        ),
        command=("nginx", "-g", "daemon off;"),
    ),
}


def image_of(service: dict[str, Any]) -> Image:
    if "build" in service:
        return _site_image()
    name = str(service.get("image", "")).split(":")[0].split("/")[-1]
    if name not in IMAGES:
        raise SystemExit(f"compose: no stand-in for the image {service.get('image')!r} here")
    return IMAGES[name]


def _env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _unescape(text: str) -> str:
    """Compose's ``$$``: a literal ``$`` for the shell inside the service."""
    return text.replace("$$", "$")


@dataclass
class Replica:
    service: str
    number: int
    spec: dict[str, Any]
    image: Image
    address: str
    index: int
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.service}-{self.number}"

    @property
    def netns(self) -> str:
        return f"pwc-{self.index}"

    def command(self) -> list[str]:
        given = self.spec.get("command")
        if given is None:
            args = list(self.image.command)
        elif isinstance(given, str):
            args = shlex.split(given)
        else:
            args = [str(a) for a in given]
        args = [_unescape(a) for a in args]
        if self.image is IMAGES["redis"] and "--protected-mode" not in args:
            args += ["--protected-mode", "no"]
        return args


class Compose:
    def __init__(self, file: Path, env_file: Path, state: Path, scale: dict[str, int]) -> None:
        self.file, self.state = file.resolve(), state.resolve()
        self.spec = yaml.safe_load(file.read_text())
        self.env_file = env_file
        self.replicas: list[Replica] = []
        index = 10
        for service, spec in self.spec["services"].items():
            for number in range(1, scale.get(service, 1) + 1):
                image = image_of(spec)
                replica = Replica(service, number, spec, image, f"{SUBNET}.{index}", index)
                replica.env = self._environment(replica)
                self.replicas.append(replica)
                index += 1
        self.stopping = threading.Event()

    def _environment(self, replica: Replica) -> dict[str, str]:
        spec = replica.spec
        env = {"LANG": "C.UTF-8", **replica.image.env}
        files = spec.get("env_file", [])
        for name in [files] if isinstance(files, str) else files:
            path = Path(name)
            env.update(_env_file(self.env_file if path.name == ".env" else self.file.parent / path))
        given = spec.get("environment", {})
        if isinstance(given, list):
            given = dict(item.split("=", 1) for item in given)
        env.update({k: str(v) for k, v in given.items()})
        env["HOSTNAME"] = replica.name
        return env

    # -- the network ------------------------------------------------------------------

    def network_up(self) -> None:
        self.network_down()
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for r in self.replicas:
            _ip("netns", "add", r.netns)
            _ip("link", "add", f"pwc{r.index}h", "type", "veth", "peer", "name", "eth0",
                "netns", r.netns)  # fmt: skip
            _ip("link", "set", f"pwc{r.index}h", "master", BRIDGE)
            _ip("link", "set", f"pwc{r.index}h", "up")
            _ip("-n", r.netns, "addr", "add", f"{r.address}/24", "dev", "eth0")
            _ip("-n", r.netns, "link", "set", "eth0", "up")
            _ip("-n", r.netns, "link", "set", "lo", "up")
        hosts = ["127.0.0.1 localhost"]
        for service in self.spec["services"]:
            first = next(r for r in self.replicas if r.service == service)
            hosts.append(f"{first.address} {service}")
        hosts += [f"{r.address} {r.name}" for r in self.replicas]
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "hosts").write_text("\n".join(hosts) + "\n")

    def network_down(self) -> None:
        for r in self.replicas:
            subprocess.run(["ip", "netns", "del", r.netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True, check=False)

    # -- the services -----------------------------------------------------------------

    def _volumes(self, replica: Replica) -> list[str]:
        """Shell lines binding the replica's volumes at their targets."""
        lines = []
        for volume in replica.spec.get("volumes", []):
            parts = volume.split(":")
            source, target = parts[0], parts[1]
            readonly = len(parts) > 2 and "ro" in parts[2].split(",")
            if source.startswith((".", "/")):
                path = (self.file.parent / source).resolve()
            else:  # a named volume: a folder of the state directory
                path = self.state / "volumes" / source
                path.mkdir(parents=True, exist_ok=True)
            make = f'mkdir -p "{target}"' if path.is_dir() else (
                f'mkdir -p "$(dirname "{target}")" && touch "{target}"'
            )  # fmt: skip
            lines.append(f'{make} && mount --bind "/mnt/host{path}" "{target}"')
            if readonly:
                lines.append(f'mount -o remount,bind,ro "{target}"')
        return lines

    def _private(self, replica: Replica) -> list[str]:
        """The folders made private to the replica (a tmpfs each): /tmp, the image's own,
        and where a volume's target does not exist here, the folder that would hold it,
        so nothing is made on this machine's own disk."""
        own = ["/tmp", "/var/tmp", *replica.image.own]
        for volume in replica.spec.get("volumes", []):
            target = Path(volume.split(":")[1])
            if any(target.is_relative_to(d) for d in own) or target.exists():
                continue
            holder = target.parent
            while not holder.exists():
                holder = holder.parent
            if holder in SYSTEM:
                raise SystemExit(
                    f"compose: {replica.service}'s volume at {target} would hide {holder}"
                )
            own.append(str(holder))
        return own

    def _script(self, replica: Replica) -> str:
        own = " ".join(f'"{d}"' for d in self._private(replica))
        lines = [
            "set -e",
            f"hostname {replica.name}",
            "mount --make-rprivate /",
            # the checkout stays at its path (it may lie under /tmp), as the image holds it
            # this machine's files, kept in reach while the private folders cover them:
            # the checkout, the hosts file and the volumes are bound from here, then it goes
            "mount -t tmpfs tmpfs /mnt && mkdir /mnt/host && mount --rbind / /mnt/host",
            f'for d in {own}; do mkdir -p "$d" && mount -t tmpfs tmpfs "$d"; done',
            f'mkdir -p "{REPO}" && mount --rbind "/mnt/host{REPO}" "{REPO}"',
            f'mount --bind "/mnt/host{self.state.resolve() / "hosts"}" /etc/hosts',
            *self._volumes(replica),
            "umount -l /mnt",
            replica.image.prepare,
            f'cd "{replica.image.workdir}"',
        ]
        niceness = _nice(replica.spec.get("cpu_shares"))
        run = 'exec "$@"'
        if replica.image.user:
            run = (f"exec setpriv --reuid={replica.image.user} --regid={replica.image.user} "
                   '--init-groups "$@"')  # fmt: skip
        if niceness:
            run = run.replace("exec ", f"exec nice -n {niceness} ", 1)
        return "\n".join([*lines, run])

    def start(self, replica: Replica) -> None:
        log = open(self.state / f"{replica.name}.log", "ab")  # noqa: SIM115 - owned by the process
        replica.process = subprocess.Popen(
            ["ip", "netns", "exec", replica.netns, "unshare", "--mount", "--uts",
             "--propagation", "private", "--", "sh", "-c", self._script(replica), "sh",
             *replica.command()],
            env=replica.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self._write_pids()

    def _write_pids(self) -> None:
        pids = {
            r.name: {"pid": r.process.pid, "env": r.env, "workdir": r.image.workdir}
            for r in self.replicas
            if r.process is not None
        }
        (self.state / "pids.json").write_text(json.dumps(pids))

    def healthy(self, replica: Replica) -> bool:
        check = replica.spec.get("healthcheck")
        if not check or replica.process is None or replica.process.poll() is not None:
            return replica.process is not None and replica.process.poll() is None
        test = check["test"]
        if isinstance(test, str):
            args = ["sh", "-c", _unescape(test)]
        elif test[0] == "CMD-SHELL":
            args = ["sh", "-c", _unescape(test[1])]
        else:
            args = [_unescape(a) for a in test[1:]]
        done = subprocess.run(
            _enter(replica.process.pid, replica.image.workdir) + args, env=replica.env,
            capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        return done.returncode == 0

    def wait_ready(self, replica: Replica, condition: str, deadline: float) -> None:
        while time.monotonic() < deadline:
            if replica.process is not None and replica.process.poll() is not None:
                raise SystemExit(f"compose: {replica.name} exited ({self._tail(replica)})")
            if condition == "service_started" or self.healthy(replica):
                return
            time.sleep(_seconds(replica.spec.get("healthcheck", {}).get("interval", "1s")) / 5)
        raise SystemExit(f"compose: {replica.name} is not healthy ({self._tail(replica)})")

    def _tail(self, replica: Replica) -> str:
        return (self.state / f"{replica.name}.log").read_text(errors="replace")[-2000:]

    def order(self) -> list[str]:
        """Services in an order where each comes after those it depends on."""
        done: list[str] = []

        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in done:
                return
            if name in path:
                raise SystemExit(f"compose: a dependency cycle through {name}")
            for dep in self.spec["services"][name].get("depends_on", {}):
                visit(dep, (*path, name))
            done.append(name)

        for name in self.spec["services"]:
            visit(name, ())
        return done

    def up(self, timeout: float, publish: dict[int, int]) -> None:
        deadline = time.monotonic() + timeout
        self.network_up()
        for service in self.order():
            depends = self.spec["services"][service].get("depends_on", {})
            if isinstance(depends, list):
                depends = {name: {"condition": "service_started"} for name in depends}
            for dep, how in depends.items():
                for r in self._of(dep):
                    self.wait_ready(r, how.get("condition", "service_started"), deadline)
            for r in self._of(service):
                self.start(r)
        for r in self.replicas:
            self.wait_ready(r, "service_healthy", deadline)
        self.forwarder = Forwarder()
        for r in self.replicas:
            for port in r.spec.get("ports", []):
                outside, _, inside = str(port).rpartition(":")
                self.forwarder.forward(publish.get(int(outside), int(outside)),
                                       (r.address, int(inside)))  # fmt: skip
        self.forwarder.start()
        print("compose: ready", flush=True)

    def _of(self, service: str) -> list[Replica]:
        return [r for r in self.replicas if r.service == service]

    def watch(self) -> None:
        """Until stopped: a replica that exits is started again where its ``restart``
        says so (``unless-stopped``, ``always``, ``on-failure`` on a non-zero exit)."""
        while not self.stopping.wait(1):
            for r in self.replicas:
                code = r.process.poll() if r.process is not None else None
                if code is None:
                    continue
                policy = str(r.spec.get("restart", "no"))
                if policy in ("always", "unless-stopped") or (
                    policy.startswith("on-failure") and code != 0
                ):
                    r.restarts += 1
                    print(f"compose: {r.name} exited {code}; restarted", flush=True)
                    self.start(r)

    def down(self) -> None:
        self.stopping.set()
        for r in reversed(self.replicas):
            if r.process is not None and r.process.poll() is None:
                with suppress(ProcessLookupError):
                    os.killpg(r.process.pid, signal.SIGTERM)
        for r in self.replicas:
            if r.process is not None:
                try:
                    r.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(r.process.pid, signal.SIGKILL)
                    r.process.wait(timeout=20)
        if hasattr(self, "forwarder"):
            self.forwarder.stop()
        self.network_down()


def _nice(shares: Any) -> int:
    """cpu_shares as a niceness: each step of nice is about 1.25x of weight."""
    if not shares:
        return 0
    ratio = 1024 / int(shares)
    steps = 0
    while ratio > 1.12:
        ratio /= 1.25
        steps += 1
    return min(steps, 19)


def _seconds(text: Any) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", str(text))
    if not match:
        return 1.0
    value = float(match.group(1))
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[match.group(2) or "s"]


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"compose: ip {' '.join(args)}: {done.stderr.strip()}")


def _enter(pid: int, workdir: str) -> list[str]:
    """A command inside a running replica: its network, mounts and host name."""
    return ["nsenter", "-t", str(pid), "-n", "-m", "-u", f"--wd={workdir}", "--"]


class Forwarder:
    """Published ports: TCP from an address of this machine (the loopback unless said) to
    a replica's address; a context manager too."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def forward(self, port: int, to: tuple[str, int], at: str = "127.0.0.1") -> None:
        listener = socket.create_server((at, port))
        listener.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ, ("accept", to))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()

    def __enter__(self) -> Forwarder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.2):
                kind, other = key.data
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if kind == "accept":
                    with suppress(BlockingIOError):
                        client, _ = sock.accept()
                        try:
                            server = socket.create_connection(other, timeout=10)
                        except OSError:
                            client.close()
                            continue
                        for s in (client, server):
                            s.setblocking(False)
                        self._selector.register(client, selectors.EVENT_READ, ("pump", server))
                        self._selector.register(server, selectors.EVENT_READ, ("pump", client))
                else:
                    self._pump(sock, other)

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            data = source.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            with suppress(OSError):
                target.setblocking(True)
                target.sendall(data)
                target.setblocking(False)
                return
        for s in (source, target):
            with suppress(KeyError, ValueError):
                self._selector.unregister(s)
            s.close()


def _running(state: Path, service: str) -> dict[str, Any]:
    pids = json.loads((state / "pids.json").read_text())
    name = service if service in pids else f"{service}-1"
    if name not in pids:
        raise SystemExit(f"compose: no running service {service!r} ({', '.join(pids)})")
    return dict(pids[name])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=REPO / "docker-compose.yml")
    parser.add_argument("--state", type=Path, default=REPO / "var" / "compose",
                        help="volumes, logs and the running replicas' ids")  # fmt: skip
    sub = parser.add_subparsers(dest="what", required=True)
    up = sub.add_parser("up", help="start every service and run until interrupted")
    up.add_argument("--env-file", type=Path, default=REPO / ".env")
    up.add_argument("--scale", action="append", default=[], metavar="SERVICE=N")
    up.add_argument("--publish", action="append", default=[], metavar="PORT=HOSTPORT",
                    help="publish a port the file names at another loopback port")  # fmt: skip
    up.add_argument("--timeout", type=float, default=600, help="seconds for every service")
    run = sub.add_parser("exec", help="run a command inside a running service")
    run.add_argument("service")
    run.add_argument("command", nargs=argparse.REMAINDER)
    copy = sub.add_parser("cp", help="copy a file or folder into a running service")
    copy.add_argument("source", type=Path)
    copy.add_argument("target", metavar="SERVICE:PATH")
    args = parser.parse_args(argv)
    if args.what == "exec":
        running = _running(args.state, args.service)
        command = _enter(running["pid"], running["workdir"]) + args.command
        return subprocess.run(command, env=running["env"], check=False).returncode
    if args.what == "cp":
        service, _, path = args.target.partition(":")
        running = _running(args.state, service)
        source = args.source.resolve()
        tar = subprocess.Popen(["tar", "-C", str(source.parent), "-cf", "-", source.name],
                               stdout=subprocess.PIPE)  # fmt: skip
        unpack = [
            *_enter(running["pid"], "/"),
            "sh",
            "-c",
            f'mkdir -p "{path}" && tar -C "{path}" -xf -',
        ]
        done = subprocess.run(unpack, stdin=tar.stdout, check=False)
        return done.returncode or tar.wait()
    if os.geteuid() != 0 or shutil.which("nsenter") is None:
        raise SystemExit("compose: needs root, iproute2 and util-linux (unshare, nsenter)")
    scale = {k: int(v) for k, v in (item.split("=", 1) for item in args.scale)}
    publish = {int(k): int(v) for k, v in (item.split("=", 1) for item in args.publish)}
    compose = Compose(args.file, args.env_file, args.state, scale)
    signal.signal(signal.SIGTERM, lambda *_: compose.stopping.set())
    try:
        compose.up(args.timeout, publish)
        compose.watch()
    except KeyboardInterrupt:
        pass
    finally:
        compose.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
