from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from alerts.config_loader import ConfigError, apply_config, parse_config


class Command(BaseCommand):
    help = "Apply a YAML config file: teams, channels, owners, metric overrides, apps, budgets (idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="path to the YAML file")
        parser.add_argument("--check", action="store_true", help="only validate the file; change nothing")

    def handle(self, *args, file: str, check: bool = False, **options) -> None:
        path = Path(file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from None
        try:
            if check:
                parse_config(text)
            else:
                summary = apply_config(text)
        except ConfigError as exc:
            raise CommandError(f"{file} is not valid:\n{exc}") from None
        if check:
            self.stdout.write(f"{file} is valid (nothing applied)")
            return
        self.stdout.write(
            f"applied {file}: {summary.teams} teams, {summary.channels} channels, "
            f"{summary.owners} owner rules, {summary.overrides} metric overrides, "
            f"{summary.apps} apps, {summary.budgets} budgets"
        )
        if summary.channels_archived:
            self.stdout.write(f"archived {summary.channels_archived} channels no longer listed (history kept)")
        if summary.users_created:
            self.stdout.write("created users without passwords: " + ", ".join(summary.users_created))
