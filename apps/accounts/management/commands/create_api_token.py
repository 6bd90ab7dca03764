"""create_api_token <username> [--name NAME]: print a new API token's secret, once."""

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import User
from apps.accounts.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print its secret (it is stored hashed, shown once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label to recognise the token by.")

    def handle(self, *args, username: str, name: str, **options):
        try:
            user = User.objects.get(username=username)
        except User.DoesNotExist:
            raise CommandError(f"no user named '{username}'") from None
        if not user.is_active:
            raise CommandError(f"user '{username}' is disabled")
        token, secret = api_token_create(user=user, name=name)
        self.stderr.write(
            f"Token {token.prefix}… created for {username}. Use it as "
            "'Authorization: Token <secret>'; it is not shown again:"
        )
        self.stdout.write(secret)
