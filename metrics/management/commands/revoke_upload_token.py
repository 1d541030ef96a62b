from django.core.management.base import BaseCommand, CommandError

from metrics.models import UploadToken


class Command(BaseCommand):
    help = "Revoke an upload token (it then gets 401). Give the token itself, or --id from list_upload_tokens."

    def add_arguments(self, parser) -> None:
        parser.add_argument("token", nargs="?", help="the raw token, as create_upload_token printed it")
        parser.add_argument("--id", type=int, help="the token's id (list_upload_tokens), for a token nobody kept")

    def handle(self, *args, token: str | None, id: int | None, **options) -> None:
        if (token is None) == (id is None):
            raise CommandError("give exactly one of TOKEN or --id")
        qs = UploadToken.objects.filter(pk=id) if id is not None else UploadToken.objects.filter(
            digest=UploadToken.digest_of(token.strip()))
        row = qs.select_related("app").first()
        if row is None:
            raise CommandError("no such token (nothing changed)")
        if row.revoked:
            self.stdout.write(f"token {row.pk} ({row.hint}…) of {row.app.name} was already revoked")
            return
        UploadToken.objects.filter(pk=row.pk).update(revoked=True)
        self.stdout.write(f"revoked token {row.pk} ({row.hint}…) of {row.app.name}")
