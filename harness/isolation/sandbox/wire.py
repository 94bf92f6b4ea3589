"""A cell's wire: every packet the agent sends off loopback, counted where it cannot reach.

The cell's outer process (the parent of the agent's PID namespace, beyond its reach)
makes a TUN device the cell's only interface besides loopback, routes every IPv4 and
IPv6 destination to it and keeps the device's descriptor to itself: the agent's
processes close their copy before any agent code runs, and without capabilities they
can neither attach to the device nor change an address or a route. What the agent sends
to any address that is not the cell's own therefore arrives here, whatever made it (the
socket module, a raw ``_socket``, ctypes, ``curl`` in a subprocess).

Each packet that opens a flow is an attempt: a TCP SYN, a UDP datagram, an ICMP echo
request, or a packet of any other protocol. It is reported to the harness (protocol,
address, port, time) first and refused second (a TCP reset, an ICMP port unreachable), so
an agent whose connection was refused has been recorded before it can act on the
refusal. Packets the kernel sends by itself (IPv6 neighbour discovery and multicast
listener reports from link-local addresses, IGMP) are not the agent's and are not
counted. Nothing is ever forwarded.

Standard library only: the outer process runs inside the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import ipaddress
import json
import os
import select
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

DEVICE = "pit0"
ADDRESS_V4 = "10.254.0.1"
ADDRESS_V6 = "fd00:7069:7400::1"
# A cell process records this many attempts one by one; past it, it counts them only.
MAX_RECORDED = 1000
_TUNSETIFF, _IFF_TUN, _IFF_NO_PI, _IFF_UP = 0x400454CA, 0x0001, 0x1000, 0x1
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _SIOCSIFADDR, _SIOCADDRT = 0x8913, 0x8914, 0x8916, 0x890B
_RTF_UP = 0x1
_TCP, _UDP, _ICMP, _IGMP, _ICMPV6 = 6, 17, 1, 2, 58
_TCP_SYN, _TCP_RST, _TCP_ACK = 0x02, 0x04, 0x10
_ICMP_ECHO, _ICMPV6_ECHO = 8, 128
_PROTOCOLS = {_TCP: "tcp", _UDP: "udp", _ICMP: "icmp", _ICMPV6: "icmpv6"}


# -- the device ------------------------------------------------------------------------


class _Sockaddr(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("data", ctypes.c_char * 14)]


class _Route(ctypes.Structure):
    """``struct rtentry`` (linux/route.h)."""

    _fields_ = [
        ("pad1", ctypes.c_ulong),
        ("dst", _Sockaddr),
        ("gateway", _Sockaddr),
        ("genmask", _Sockaddr),
        ("flags", ctypes.c_ushort),
        ("pad2", ctypes.c_short),
        ("pad3", ctypes.c_ulong),
        ("pad4", ctypes.c_void_p),
        ("metric", ctypes.c_short),
        ("dev", ctypes.c_char_p),
        ("mtu", ctypes.c_ulong),
        ("window", ctypes.c_ulong),
        ("irtt", ctypes.c_ushort),
    ]


def open_wire() -> int:
    """Make the cell's TUN device, give it the cell's addresses and every route, and
    return its descriptor. Needs CAP_NET_ADMIN over the cell's network namespace (the
    outer process has it in the cell's own user namespace) and ``/dev/net/tun``."""
    name = DEVICE.encode()
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH22x", name, _IFF_TUN | _IFF_NO_PI))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            address = socket.inet_aton(ADDRESS_V4)
            fcntl.ioctl(
                sock, _SIOCSIFADDR, struct.pack("16sHH4s16x", name, socket.AF_INET, 0, address)
            )
            flags = struct.unpack(
                "16sH22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, struct.pack("16sH22x", name, 0))
            )[1]
            fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", name, flags | _IFF_UP))
            device = ctypes.create_string_buffer(name)
            route = _Route(flags=_RTF_UP, dev=ctypes.cast(device, ctypes.c_char_p))
            route.dst.family = route.genmask.family = socket.AF_INET
            fcntl.ioctl(sock, _SIOCADDRT, route)  # 0.0.0.0/0 through the device
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
            # a prefix of length 0 routes ::/0 through the device as well
            address = socket.inet_pton(socket.AF_INET6, ADDRESS_V6)
            index = socket.if_nametoindex(DEVICE)
            fcntl.ioctl(sock, _SIOCSIFADDR, struct.pack("16sIi", address, 0, index))
    except BaseException:
        os.close(fd)
        raise
    return fd


# -- packets ---------------------------------------------------------------------------


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ipv4(src: bytes, dst: bytes, protocol: int, payload: bytes) -> bytes:
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, protocol, 0, src, dst
    )
    return header[:10] + struct.pack("!H", _checksum(header)) + header[12:] + payload


def _ipv6(src: bytes, dst: bytes, protocol: int, payload: bytes) -> bytes:
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), protocol, 64, src, dst) + payload


def _pseudo(version: int, src: bytes, dst: bytes, protocol: int, length: int) -> bytes:
    if version == 4:
        return src + dst + struct.pack("!BBH", 0, protocol, length)
    return src + dst + struct.pack("!I3xB", length, protocol)


def _with_checksum(segment: bytes, at: int, pseudo: bytes) -> bytes:
    value = _checksum(pseudo + segment)
    return segment[:at] + struct.pack("!H", value) + segment[at + 2 :]


def _reset(version: int, src: bytes, dst: bytes, segment: bytes, data_length: int) -> bytes:
    """A reset answering a SYN in ``segment`` (sent from ``src`` to ``dst``)."""
    sport, dport, seq = struct.unpack("!HHI", segment[:8])
    ack = (seq + 1 + data_length) & 0xFFFFFFFF
    reply = struct.pack("!HHIIBBHHH", dport, sport, 0, ack, 5 << 4, _TCP_RST | _TCP_ACK, 0, 0, 0)
    reply = _with_checksum(reply, 16, _pseudo(version, dst, src, _TCP, len(reply)))
    return _ipv4(dst, src, _TCP, reply) if version == 4 else _ipv6(dst, src, _TCP, reply)


def _unreachable(version: int, src: bytes, dst: bytes, packet: bytes) -> bytes:
    """An ICMP (or ICMPv6) port unreachable quoting ``packet``."""
    if version == 4:
        message = struct.pack("!BBHI", 3, 3, 0, 0) + packet[:548]
        message = message[:2] + struct.pack("!H", _checksum(message)) + message[4:]
        return _ipv4(dst, src, _ICMP, message)
    message = struct.pack("!BBHI", 1, 4, 0, 0) + packet[:1184]
    message = _with_checksum(message, 2, _pseudo(6, dst, src, _ICMPV6, len(message)))
    return _ipv6(dst, src, _ICMPV6, message)


def _kernel_own(version: int, protocol: int, src: bytes, dst: bytes, payload: bytes) -> bool:
    """Packets the kernel sends by itself on an interface that comes up: not the agent's."""
    if version == 4:
        return protocol == _IGMP
    source = ipaddress.IPv6Address(src)
    if source.is_link_local or source.is_unspecified:
        return True
    return protocol == _ICMPV6 and payload[:1] != bytes([_ICMPV6_ECHO])


Flow = tuple[Any, ...]


def inspect(packet: bytes) -> tuple[dict[str, Any] | None, bytes | None, Flow]:
    """The attempt ``packet`` makes (None if it opens no flow or is the kernel's own),
    the packet that refuses it (None where nothing answers), and the flow it belongs to:
    one attempt is one flow (a connection's SYN, the datagrams of one socket to one
    address, as a name look-up's two queries are), however many packets it sends."""
    if not packet:
        return None, None, ()
    version = packet[0] >> 4
    if version == 4 and len(packet) >= 20:
        header = (packet[0] & 0x0F) * 4
        protocol, src, dst = packet[9], packet[12:16], packet[16:20]
        family = socket.AF_INET
    elif version == 6 and len(packet) >= 40:
        header, protocol, src, dst = 40, packet[6], packet[8:24], packet[24:40]
        family = socket.AF_INET6
    else:
        return None, None, ()
    payload = packet[header:]
    if _kernel_own(version, protocol, src, dst, payload):
        return None, None, ()
    address = socket.inet_ntop(family, dst)
    name = _PROTOCOLS.get(protocol, f"ip-{protocol}")
    if protocol in (_TCP, _UDP) and len(payload) >= 8:
        sport, port = struct.unpack("!HH", payload[:4])
        flow = (protocol, src, sport, dst, port)
        if protocol == _UDP:
            return _attempt(name, address, port), _unreachable(version, src, dst, packet), flow
        flags = payload[13] if len(payload) >= 20 else 0
        if not flags & _TCP_SYN or flags & _TCP_ACK:
            return None, None, ()  # no flow is ever open, so only a SYN opens one
        data = len(payload) - (payload[12] >> 4) * 4
        return _attempt(name, address, port), _reset(version, src, dst, payload, max(data, 0)), flow
    if protocol in (_ICMP, _ICMPV6):
        if payload[:1] not in (bytes([_ICMP_ECHO]), bytes([_ICMPV6_ECHO])):
            return None, None, ()
        return _attempt(name, address, None), None, (protocol, dst, payload[4:6])
    return _attempt(name, address, None), None, (protocol, dst)


def _attempt(protocol: str, address: str, port: int | None) -> dict[str, Any]:
    at = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"
    return {"protocol": protocol, "address": address, "port": port, "at": stamp}


# -- the outer process's side ------------------------------------------------------------


def serve(tun: int, report: socket.socket, stop: int) -> None:
    """Read the device until ``stop`` is readable (the cell has ended), reporting each
    attempt before refusing it; then read what is left and report the count."""
    flows: set[Flow] = set()
    while True:
        ready, _, _ = select.select([tun, stop], [], [])
        if tun in ready:
            _take(tun, report, flows)
        elif stop in ready:
            break
    os.set_blocking(tun, False)
    while True:
        try:
            _take(tun, report, flows)
        except BlockingIOError:
            break
    send_line(report, {"end": True, "seen": len(flows)})


def _take(tun: int, report: socket.socket, flows: set[Flow]) -> None:
    attempt, refusal, flow = inspect(os.read(tun, 65536))
    if attempt is not None and flow not in flows:
        flows.add(flow)
        if len(flows) <= MAX_RECORDED:
            send_line(report, attempt)
    if refusal is not None:
        with contextlib.suppress(OSError):  # the agent's side is gone; it is recorded all the same
            os.write(tun, refusal)


def send_line(report: socket.socket, line: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the harness has gone: nothing is left to report to
        report.sendall(json.dumps(line, separators=(",", ":")).encode() + b"\n")


# -- the harness's side --------------------------------------------------------------------


@dataclass(frozen=True)
class WireAttempt:
    """An attempt the cell's wire saw: what it tried to reach, and when (UTC)."""

    protocol: str
    address: str
    port: int | None
    at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "address": self.address,
            "port": self.port,
            "at": self.at,
        }

    def target(self) -> str:
        if self.port is None:
            return self.address
        return (
            f"[{self.address}]:{self.port}"
            if ":" in self.address
            else f"{self.address}:{self.port}"
        )


class WireReport:
    """The harness's end of one cell process's wire report (JSON lines from its outer
    process, which alone writes to it): whether the cell has a wire, then each attempt,
    then the count at the cell's end."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""
        self._closed = False  # the outer process has closed its end (the cell has ended)
        self._recorded = 0
        self._first: dict[str, Any] | None = None
        self.why = ""

    def start(self, timeout: float) -> bool:
        """Whether the cell's wire is held, from the report's first line."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer and not self._closed:
            if not self._read(max(deadline - time.monotonic(), 0.0)):
                break
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            first = json.loads(line) if line else {}
        except ValueError:
            first = {}
        self._first = first if isinstance(first, dict) else {}
        self.why = str(self._first.get("why", "the cell sent no wire report"))
        return self._first.get("wire") is True

    def take(self, *, until_end: float | None = None) -> list[WireAttempt]:
        """The attempts reported so far and not yet taken; with ``until_end`` (seconds),
        first wait that long at most for the cell's end, and take everything."""
        if until_end is None:
            while not self._closed and self._read(0.0):
                pass
        else:
            deadline = time.monotonic() + until_end
            while not self._closed and self._read(max(deadline - time.monotonic(), 0.0)):
                pass
        *complete, self._buffer = self._buffer.split(b"\n")
        taken = []
        for raw in complete:
            attempt = self._attempt(raw)
            if attempt is not None:
                taken.append(attempt)
        return taken

    def close(self) -> None:
        self._sock.close()

    def _read(self, wait: float) -> bool:
        """Read what arrives within ``wait`` seconds; False if nothing did."""
        if not select.select([self._sock], [], [], wait)[0]:
            return False
        try:
            chunk = self._sock.recv(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self._closed = True
            return False
        self._buffer += chunk
        return True

    def _attempt(self, raw: bytes) -> WireAttempt | None:
        try:
            line = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(line, dict):
            return None
        if line.get("end"):
            unrecorded = int(line.get("seen", 0)) - self._recorded
            if unrecorded > 0:  # past MAX_RECORDED: counted, not recorded one by one
                return WireAttempt("unrecorded", f"{unrecorded} more attempts", None, "")
            return None
        self._recorded += 1
        port = line.get("port")
        return WireAttempt(
            str(line.get("protocol", "")),
            str(line.get("address", "")),
            port if isinstance(port, int) else None,
            str(line.get("at", "")),
        )
