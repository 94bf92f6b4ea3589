from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from pitweb.accounts.services import invitation_create
from pitweb.core.errors import SubmissionError


class Command(BaseCommand):
    help = (
        "Make a one-time sign-up link as staff user STAFF and print it (shown once: the site "
        "keeps only its digest). It creates one account, within --days days."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("staff", help="the staff user the invitation is made by")
        parser.add_argument("--note", default="", help="who it is for (shown to staff only)")
        parser.add_argument(
            "--days",
            type=int,
            default=settings.PITWEB_INVITATION_DAYS,
            help="how long the link stays usable (default: PITWEB_INVITATION_DAYS)",
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="the site's address, for the link"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        staff = get_user_model().objects.filter(username=options["staff"]).first()
        if staff is None or not staff.is_staff:
            raise CommandError(f"no staff user {options['staff']!r}")
        try:
            key = invitation_create(staff=staff, note=options["note"], days=options["days"])
        except SubmissionError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(options["url"].rstrip("/") + reverse("signup-invited", args=[key]))
