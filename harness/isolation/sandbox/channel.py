"""JSON lines over a Unix socket: the only path between the harness and its agent.

Each message is one JSON object on one line. A line longer than ``MAX_LINE`` is refused
(the sender is the agent's side, so an oversized line is the agent's fault). Used on
both sides of the sandbox, so it imports nothing but the standard library and msgspec,
whose decoder reads the served rows about twice as fast as ``json``.
"""

from __future__ import annotations

import json
import select
import socket
from typing import Any

import msgspec

MAX_LINE = 64 * 1024 * 1024
_CHUNK = 1 << 20


class ChannelClosed(Exception):
    """The other side went away (EOF or a broken pipe)."""


class ChannelTimeout(Exception):
    """Nothing arrived in time."""


class LineTooLong(Exception):
    """A message longer than MAX_LINE."""


class ProtocolError(Exception):
    """A line that is not a JSON object."""


def _decode(line: bytes) -> Any:
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError:
        # what msgspec refuses, json decides, so that both read the same language
        # (json also takes lone surrogates and NaN) and the error reads as json's
        return json.loads(line)


_decoder = msgspec.json.Decoder()


class Channel:
    def __init__(self, sock: socket.socket, max_line: int = MAX_LINE) -> None:
        self.sock = sock
        self.max_line = max_line
        self._buffer = bytearray()
        self._scanned = 0

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message, separators=(",", ":"), ensure_ascii=False))

    def send_text(self, text: str) -> None:
        """One message already serialised as a JSON object (no newline inside)."""
        try:
            self.sock.sendall(text.encode("utf-8", "surrogatepass") + b"\n")
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None

    def recv(self, timeout: float | None = None) -> dict[str, Any]:
        line = self.recv_line(timeout)
        try:
            value = _decode(line)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"not JSON: {str(exc)[:200]}") from None
        if not isinstance(value, dict):
            raise ProtocolError(f"a message must be a JSON object, got {type(value).__name__}")
        return value

    def recv_line(self, timeout: float | None = None) -> bytes:
        while True:
            cut = self._buffer.find(b"\n", self._scanned)
            if cut >= 0:
                line = bytes(self._buffer[:cut])
                del self._buffer[: cut + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > self.max_line:
                raise LineTooLong(f"a message longer than {self.max_line} bytes")
            if timeout is not None:
                ready, _, _ = select.select([self.sock], [], [], timeout)
                if not ready:
                    raise ChannelTimeout(f"no message within {timeout:g} s")
            try:
                chunk = self.sock.recv(_CHUNK)
            except OSError as exc:
                raise ChannelClosed(str(exc)) from None
            if not chunk:
                raise ChannelClosed("end of stream")
            self._buffer += chunk

    def close(self) -> None:
        self.sock.close()
