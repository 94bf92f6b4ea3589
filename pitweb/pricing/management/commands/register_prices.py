from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from pitweb.core.errors import SubmissionError
from pitweb.pricing.services import IndexGiven, reference_prices_register
from pitweb.releases.models import Release


class Command(BaseCommand):
    help = (
        "Register a price file as a release's next reference-price version (never edited) "
        "and queue a re-scoring of every proven run of the release."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release", help="the release's name or content digest")
        parser.add_argument("path", help="the price file (CSV)")
        parser.add_argument("--source", required=True, help="where the bars came from")
        parser.add_argument("--pulled-at", default="", help="when they were pulled")
        parser.add_argument("--reason", required=True, help="why (published in the changelog)")
        parser.add_argument("--staff", default="", help="the staff user registering them")
        parser.add_argument(
            "--index",
            metavar="FILE",
            help="a market index every run is measured against with these prices (a price "
            "file; with --index-symbol and --index-source)",
        )
        parser.add_argument("--index-symbol", default="", help="the index's symbol in FILE")
        parser.add_argument("--index-source", default="", help="where the index came from")
        parser.add_argument("--index-pulled-at", default="", help="when it was pulled")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["release"]
        release = (
            Release.objects.filter(content_digest=name).first()
            or Release.objects.filter(name=name).order_by("-registered_at").first()
        )
        if release is None:
            raise CommandError(f"no registered release {name!r}")
        staff = None
        if options["staff"]:
            staff = (
                get_user_model().objects.filter(username=options["staff"], is_staff=True).first()
            )
            if staff is None:
                raise CommandError(f"no staff user {options['staff']!r}")
        index = None
        if options["index"]:
            if not options["index_symbol"]:
                raise CommandError("--index needs --index-symbol")
            index = IndexGiven(
                options["index"],
                options["index_symbol"],
                options["index_source"],
                options["index_pulled_at"],
            )
        try:
            reference, created = reference_prices_register(
                release=release,
                path=options["path"],
                source=options["source"],
                pulled_at=options["pulled_at"],
                staff=staff,
                reason=options["reason"],
                index=index,
            )
        except SubmissionError as exc:
            raise CommandError(exc.message) from None
        verb = "registered" if created else "already registered as"
        self.stdout.write(
            f"{verb} {release.name} prices v{reference.version} {reference.file_sha256} "
            f"({reference.symbols} symbols, {reference.bars} bars, {reference.basis} basis)"
            + (
                f" with market index {reference.index_symbol} ({reference.index_levels} levels)"
                if reference.index_symbol
                else ""
            )
        )
