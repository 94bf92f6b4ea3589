from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from pitweb.core.errors import SubmissionError
from pitweb.pricing.services import rate_card_register


class Command(BaseCommand):
    help = (
        "Register a rate card (pit-harness.rate-card.v1: nanodollars per token, per model and "
        "kind) as the next version every run's measured model usage is priced with."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the rate card (JSON, at most 64 KiB)")
        parser.add_argument("--reason", required=True, help="why (published in the changelog)")
        parser.add_argument("--staff", default="", help="the staff user registering it")

    def handle(self, *args: Any, **options: Any) -> None:
        staff = None
        if options["staff"]:
            staff = (
                get_user_model().objects.filter(username=options["staff"], is_staff=True).first()
            )
            if staff is None:
                raise CommandError(f"no staff user {options['staff']!r}")
        try:
            card, created = rate_card_register(
                path=options["path"], staff=staff, reason=options["reason"]
            )
        except SubmissionError as exc:
            raise CommandError(exc.message) from None
        verb = "registered" if created else "already registered as"
        self.stdout.write(
            f"{verb} rate card v{card.version} {card.sha256} ({card.models_priced} models)"
        )
