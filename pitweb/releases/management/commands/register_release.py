from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.release.store import ReleaseError
from pitweb.releases.services import release_register


class Command(BaseCommand):
    help = "Check a release folder against its manifest and keep it on the server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            release, created = release_register(path=options["path"])
        except ReleaseError as exc:
            raise CommandError(str(exc)) from None
        verb = "registered" if created else "already registered"
        parent = f"parent {release.parent.content_digest}" if release.parent else "no parent"
        self.stdout.write(
            f"{verb} version {release.version} of {release.name} ({parent}) "
            f"{release.content_digest}"
        )
