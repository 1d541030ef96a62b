import re

from django.core.management.base import BaseCommand, CommandError

from metrics.models import App, UploadToken

APP_RE = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


class Command(BaseCommand):
    help = "Create an upload token for APP (the app is created if missing); the token is the last line."

    def add_arguments(self, parser) -> None:
        parser.add_argument("app")
        parser.add_argument("--label", default="", help="a note to tell tokens apart")

    def handle(self, *args, app: str, label: str, **options) -> None:
        if not APP_RE.match(app):
            raise CommandError("APP must match [A-Za-z0-9._-]{1,100}")
        app_row, created = App.objects.get_or_create(name=app)
        _, raw = UploadToken.issue(app_row, label=label)
        if created:
            self.stderr.write(f"created app {app}")
        self.stderr.write("store this token now; only its hash is kept:")
        self.stdout.write(raw)
