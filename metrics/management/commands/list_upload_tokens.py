from django.core.management.base import BaseCommand

from metrics.models import UploadToken


class Command(BaseCommand):
    help = "List upload tokens: id, app, hint, label, created, last use, revoked. Never the secret."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--app", help="only this app's tokens")

    def handle(self, *args, app: str | None, **options) -> None:
        qs = UploadToken.objects.select_related("app").order_by("app__name", "created")
        if app:
            qs = qs.filter(app__name=app)
        self.stdout.write("id\tapp\thint\tlabel\tcreated\tlast_used\trevoked")
        for t in qs:
            last = t.last_used.isoformat(timespec="seconds") if t.last_used else "never"
            self.stdout.write(f"{t.pk}\t{t.app.name}\t{t.hint}…\t{t.label}\t{t.created.isoformat(timespec='seconds')}"
                              f"\t{last}\t{'yes' if t.revoked else 'no'}")
