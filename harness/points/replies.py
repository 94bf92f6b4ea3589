"""What is kept of a provider's reply: text that can be stored, a model id that is a
string, and nothing that makes the record unwritable. A reply that breaks these is
treated as a failed call (retried, then a harness error), never stored as it came."""

from __future__ import annotations

import math
import re
import threading
from typing import Any

SURROGATE = re.compile("[\ud800-\udfff]")


# an endpoint on this machine (the demo model, a model served locally) may need no key; the
# client needs a string all the same
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
NO_KEY = "no-key-on-loopback"


class ReplyError(ValueError):
    """The provider's reply is not one a record can hold."""


def clean_text(value: Any, what: str) -> str:
    """``value`` as storable text: a string, its lone surrogates (which no UTF-8 file can
    hold) replaced by U+FFFD; anything else is refused."""
    if not isinstance(value, str):
        raise ReplyError(f"{what} is {type(value).__name__}, not text")
    return SURROGATE.sub("\ufffd", value)


def model_id(value: Any) -> str | None:
    """The model id the provider says it ran, if it gave a string."""
    return clean_text(value, "model")[:200] if isinstance(value, str) else None


def count(value: Any) -> int | None:
    """A token count the provider reported, if it is a whole number in range."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**12:
        return None
    return value


def money(value: Any) -> float | None:
    """A cost the provider reported, if it is a finite, non-negative number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or value > 10**9:
        return None
    return float(value)


class ChatClient:
    """One OpenAI-compatible client per run, made on first use and shared by the run's
    threads (the client is thread-safe). It never retries: retries are the caller's,
    counted and bounded."""

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        self.base_url, self._api_key, self.timeout = base_url, api_key, timeout
        self._made: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._made is None:
                from openai import OpenAI

                self._made = OpenAI(
                    base_url=self.base_url,
                    api_key=self._api_key,
                    timeout=self.timeout,
                    max_retries=0,
                )
            return self._made
