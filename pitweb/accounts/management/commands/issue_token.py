from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from pitweb.accounts.services import token_issue


class Command(BaseCommand):
    help = "Issue an API token for USER (created if --create is given); prints it once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--create", action="store_true", help="create the user if missing")
        parser.add_argument("--name", default="", help="what the token is for (shown in lists)")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        user = users.objects.filter(username=options["username"]).first()
        if user is None:
            if not options["create"]:
                raise CommandError(f"no user {options['username']!r} (pass --create to make one)")
            user = users.objects.create_user(options["username"])
        self.stdout.write(token_issue(user=user, name=options["name"]))
