"""Failed sign-ins counted per account and per client address in the shared cache
(Redis, or the database's table: every server process counts together). When either count reaches its limit,
sign-in for that account (from anywhere) or from that address (to any account) is
refused, without the password being checked, until the count's window ends.

Counts only expire: a successful sign-in clears none (an attacker who holds one account
cannot wipe their address's count by signing into it, and the owner's sign-in elsewhere
does not reopen an account under attack). A name no account has is counted like any
other, so the limit tells nobody which names exist.

Each count is a fixed window opened by its first failure: ``add`` opens it (the count
and the window's end expire together), ``incr`` is atomic in Redis and in the database
cache (pitweb.cache.SharedDatabaseCache), so two processes counting at once lose no
failure. When Redis cannot be reached, each process counts on its own (pitweb.cache): a
limit then holds per process, never not at all.

Password-reset requests (each may send a mail) are counted per address the same way,
under the address limit.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

KEY = "signin-failures"


@dataclass(frozen=True)
class Refusal:
    """Sign-in is refused for ``scope`` (account or address) until ``until``."""

    scope: str
    until: float

    @property
    def message(self) -> str:
        when = datetime.fromtimestamp(self.until, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        minutes = max(1, round((self.until - time.time()) / 60))
        whose = "for this account" if self.scope == "account" else "from your address"
        return (
            f"Too many failed sign-ins {whose}. Try again after {when} UTC (in about "
            f"{minutes} minute{'s' if minutes != 1 else ''})"
            + (
                ". Forgotten your password? Reset it meanwhile; sign-in opens at that time."
                if self.scope == "account"
                else "."
            )
        )


def client_address(request: HttpRequest) -> str:
    """The client's address: the connection's, or with PITWEB_PROXY_HOPS proxies in front,
    the one the outermost of them saw (entries a client wrote itself are ignored)."""
    hops = settings.PITWEB_PROXY_HOPS
    header = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    forwarded = [a.strip() for a in header.split(",") if a.strip()]
    if hops > 0 and len(forwarded) >= hops:
        return forwarded[-hops]
    return str(request.META.get("REMOTE_ADDR", ""))


def _keys(username: str, address: str) -> dict[str, tuple[str, int]]:
    """The cache key and limit of each count. Names are compared as Django's sign-in
    does not (case-folded): ``Alice`` and ``alice`` share a count."""
    account = hashlib.sha256(username.strip().casefold().encode()).hexdigest()
    return {
        "account": (f"{KEY}:account:{account}", settings.PITWEB_SIGNIN_ACCOUNT_LIMIT),
        "address": (f"{KEY}:address:{address}", settings.PITWEB_SIGNIN_ADDRESS_LIMIT),
    }


def signin_refusal(*, username: str, address: str) -> Refusal | None:
    """Whether a sign-in as ``username`` from ``address`` is refused now, and until when."""
    keys = _keys(username, address)
    found = cache.get_many(
        [key for key, _ in keys.values()] + [f"{k}:until" for k, _ in keys.values()]
    )
    for scope, (key, limit) in keys.items():
        if int(found.get(key) or 0) >= limit:
            until = found.get(f"{key}:until") or time.time() + settings.PITWEB_SIGNIN_WINDOW_SECONDS
            return Refusal(scope=scope, until=float(until))
    return None


def signin_failure_record(*, username: str, address: str) -> Refusal | None:
    """Count one failed sign-in against the account and the address; the refusal that
    holds from now on, if this failure reached a limit."""
    for key, _ in _keys(username, address).values():
        _count(key)
    return signin_refusal(username=username, address=address)


def _count(key: str) -> None:
    """One more in ``key``'s window, opening a window if none is open."""
    window = settings.PITWEB_SIGNIN_WINDOW_SECONDS
    # the window's end first: a count never outlives the time it names
    cache.add(f"{key}:until", time.time() + window, timeout=window)
    cache.add(key, 0, timeout=window)
    try:
        cache.incr(key)
    except ValueError:  # the window ended between the two calls: a new one opens
        cache.set(key, 1, timeout=window)


def _counted(key: str, limit: int) -> Refusal | None:
    found = cache.get_many([key, f"{key}:until"])
    if int(found.get(key) or 0) < limit:
        return None
    until = found.get(f"{key}:until") or time.time() + settings.PITWEB_SIGNIN_WINDOW_SECONDS
    return Refusal(scope="address", until=float(until))


def reset_request_record(*, address: str) -> Refusal | None:
    """Count one password-reset request from ``address`` (each may send a mail), and
    refuse it past the address's limit: the form cannot be used to flood mailboxes."""
    key = f"{KEY}:reset:{address}"
    refused = _counted(key, settings.PITWEB_SIGNIN_ADDRESS_LIMIT)
    if refused is None:
        _count(key)
    return refused
