"""Growing a release from EDGAR, one business day at a time (off unless
PITWEB_EDGAR_BASE_URL is set; settings.py says what the rest of PITWEB_EDGAR_* mean)."""

from __future__ import annotations

import logging
from datetime import date, timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from harness.release.fetch import FetchError, fetch_days, grow_from_inbox
from harness.release.keys import secret_file
from pitweb.artifacts import job_folder, release_copy
from pitweb.releases.models import Release
from pitweb.releases.services import release_register

log = logging.getLogger(__name__)
# at most this many days are fetched in one go (a line left behind for months catches
# up over several runs rather than in one long task)
MAX_DAYS = 31


def _days_after(end: date, today: date) -> list[date]:
    """The weekdays after ``end`` up to yesterday (a federal holiday among them is a
    day EDGAR has no index for: fetched once, recorded, passed)."""
    days: list[date] = []
    day = end + timedelta(days=1)
    while day < today and len(days) < MAX_DAYS:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=3000,
    time_limit=3060,
    # EDGAR out of reach is worth trying again; bad data is not (it raises, and the
    # next day's run meets it again)
    autoretry_for=(FetchError,),
    retry_backoff=60,
    max_retries=5,
)
def fetch_next_day(today: str | None = None) -> str | None:
    """Fetch the business days after the newest version of the release line
    PITWEB_EDGAR_RELEASE up to yesterday (``today``: an ISO date, default the server's),
    build the next version from them and register it; return its content digest, or
    None when there is nothing to do (off, no first version, no new filing).

    Idempotent: what is in the inbox is never fetched again, the version built from the
    same inbox has the same bytes, and registering a digest twice stores it once; run
    again, the newest version already covers the days, so nothing new is registered.
    """
    if not settings.PITWEB_EDGAR_BASE_URL:
        return None
    newest = (
        Release.objects.filter(name=settings.PITWEB_EDGAR_RELEASE)
        .order_by("-window_end", "-version")
        .first()
    )
    if newest is None:
        log.warning(
            "EDGAR fetch: no release named %r is registered; register its first version",
            settings.PITWEB_EDGAR_RELEASE,
        )
        return None
    day = date.fromisoformat(today) if today else timezone.localdate()
    days = _days_after(newest.window_end, day)
    if not days:
        return None
    inbox = settings.PITWEB_EDGAR_INBOX
    fetch_days(
        settings.PITWEB_EDGAR_BASE_URL,
        user_agent=settings.PITWEB_EDGAR_USER_AGENT,
        inbox=inbox,
        days=days,
        max_per_second=settings.PITWEB_EDGAR_RATE,
        forms=set(settings.PITWEB_EDGAR_FORMS),
    )
    parent = release_copy(newest)
    with job_folder("edgar-grow", newest.digest_hex[:12]) as work:
        secret = secret_file(settings.PITWEB_EDGAR_SECRET_FILE, work, create=False)
        manifest = grow_from_inbox(parent, inbox, work / "next", row_key_secret=secret)
        if manifest is None:
            log.info("EDGAR fetch: no new filing after %s", newest.window_end)
            return None
        release, created = release_register(path=work / "next")
    log.info(
        "EDGAR fetch: %s version %d of %s (%s)",
        "registered" if created else "already had",
        release.version,
        release.name,
        release.content_digest,
    )
    return release.content_digest
