from django.core.management.base import BaseCommand, CommandError

from metrics.formats.base import KINDS
from metrics.models import Metric


class Command(BaseCommand):
    help = ("Change a stored metric's kind or unit on purpose. Uploads that disagree with the stored kind or "
            "unit are refused (409); this is the deliberate way to redefine a metric's history.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("app")
        parser.add_argument("metric")
        parser.add_argument("--kind", choices=KINDS)
        parser.add_argument("--unit")
        parser.add_argument("--force", action="store_true", help="required: the whole history is reinterpreted")

    def handle(self, *args, app: str, metric: str, kind: str | None, unit: str | None, force: bool, **options) -> None:
        if kind is None and unit is None:
            raise CommandError("give --kind and/or --unit")
        row = Metric.objects.filter(app__name=app, name=metric).first()
        if row is None:
            raise CommandError(f"no metric {metric!r} in app {app!r}")
        if unit is not None and len(unit) > 50:
            raise CommandError("--unit must be at most 50 characters")
        changes = {k: v for k, v in (("kind", kind), ("unit", unit)) if v is not None and getattr(row, k) != v}
        if not changes:
            self.stdout.write("nothing to change")
            return
        what = ", ".join(f"{k} {getattr(row, k)!r} -> {v!r}" for k, v in changes.items())
        points = sum(s.n_points for s in row.series.all())
        if not force:
            raise CommandError(f"{metric}: {what} reinterprets {row.series.count()} series; rerun with --force")
        Metric.objects.filter(pk=row.pk).update(**changes)
        self.stdout.write(f"{metric}: {what} ({row.series.count()} series, about {points} points)")
