"""Storing a validated upload: one transaction, idempotent, merge-by-series.

Semantics (also in README):
- A build is (app, platform, build id). Uploads for other devices or from other CI jobs of the same
  build merge into it; each upload replaces the values of the series it carries and leaves the others.
- An upload whose every value equals what is stored changes nothing and is reported as unchanged
  (the API answers 200); anything new or different is written and the build is marked for analysis.
- A rejected upload raises before anything is written; the whole write is one transaction.
"""

from __future__ import annotations

import hashlib
import statistics
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from metrics import hooks
from metrics.formats import FieldError, ParsedMetric, UploadInvalid
from metrics.formats.complete import CompleteUpload
from metrics.models import App, Build, Measurement, Metric, Series, UploadRecord, UploadToken, pack_samples


@dataclass(frozen=True)
class IngestResult:
    build: Build
    measurements: int
    changed: int
    build_created: bool
    build_changed: bool

    @property
    def stored_anything(self) -> bool:
        return self.build_created or self.build_changed or self.changed > 0


def summary_value(m: ParsedMetric) -> float:
    """The per-build number graphs show: the value, the median of the runs, or count/total."""
    if m.samples is not None:
        return float(statistics.median(m.samples))
    if m.count is not None and m.total:
        return m.count / m.total
    assert m.value is not None
    return float(m.value)


def upload_digest(raw_body: bytes, fmt: str, params: dict[str, str]) -> str:
    h = hashlib.sha256()
    h.update(fmt.encode())
    for key in sorted(params):
        h.update(f"\x1f{key}={params[key]}".encode())
    h.update(b"\x1e")
    h.update(raw_body)
    return h.hexdigest()


def store_upload(
    app: App,
    upload: CompleteUpload,
    *,
    fmt: str,
    digest: str,
    token: UploadToken | None = None,
    now: datetime | None = None,
) -> IngestResult:
    now = now or timezone.now()
    with transaction.atomic():
        build, build_created, build_changed = _lock_build(app, upload, now)
        metrics = _metrics_by_name(app, upload.metrics)
        series = _series_by_name(app, upload, metrics)
        changed = _write_measurements(build, upload.metrics, series)
        if build_changed and not build_created:
            Measurement.objects.filter(build=build).update(build_time=build.timestamp)
        if build_created or build_changed or changed:
            build.analysis = Build.Analysis.PENDING
            build.analysis_requested = now
            build.analysis_error = ""
            build.save()
            Series.objects.filter(pk__in=[s.pk for s in series.values()]).filter(
                Q(last_build_time__isnull=True) | Q(last_build_time__lt=build.timestamp)
            ).update(last_build_time=build.timestamp)
            UploadRecord.objects.create(
                build=build, token=token, format=fmt, digest=digest,
                measurements=len(upload.metrics), changed=changed,
            )
            build_pk = build.pk
            transaction.on_commit(lambda: hooks.build_committed(build_pk))
    return IngestResult(
        build=build, measurements=len(upload.metrics), changed=changed,
        build_created=build_created, build_changed=build_changed,
    )


def _lock_build(app: App, upload: CompleteUpload, now: datetime) -> tuple[Build, bool, bool]:
    """Fetch or create the build row and hold its lock, so concurrent CI retries serialise here."""
    key = {"app": app, "platform": upload.platform, "ext_id": upload.build_id}
    build = Build.objects.select_for_update().filter(**key).first()
    created = False
    if build is None:
        try:
            with transaction.atomic():
                build = Build.objects.create(
                    **key,
                    branch=upload.branch,
                    commit=upload.commit or "",
                    parent_commit=upload.parent_commit or "",
                    version=upload.version or "",
                    timestamp=upload.timestamp or now,
                    analysis_requested=now,
                )
            return build, True, False
        except IntegrityError:
            # Another request created it between our read and insert; take its row and lock.
            build = Build.objects.select_for_update().get(**key)
    if build.branch != upload.branch:
        raise UploadInvalid(
            [FieldError("branch", f"build {upload.build_id} is stored on branch {build.branch!r}, not {upload.branch!r}")]
        )
    changed = False
    for field in ("commit", "parent_commit", "version"):
        value = getattr(upload, field)
        if value and getattr(build, field) != value:
            setattr(build, field, value)
            changed = True
    if upload.timestamp is not None and build.timestamp != upload.timestamp:
        build.timestamp = upload.timestamp
        changed = True
    return build, created, changed


def _metrics_by_name(app: App, parsed: tuple[ParsedMetric, ...]) -> dict[str, Metric]:
    names = [m.name for m in parsed]
    existing = {m.name: m for m in Metric.objects.filter(app=app, name__in=names)}
    missing = [
        Metric(app=app, name=m.name, kind=m.kind, unit=m.unit, lower_is_better=m.lower_is_better)
        for m in parsed
        if m.name not in existing
    ]
    if missing:
        Metric.objects.bulk_create(missing, ignore_conflicts=True)
        existing = {m.name: m for m in Metric.objects.filter(app=app, name__in=names)}
    stale = []
    for m in parsed:
        row = existing[m.name]
        if (row.kind, row.unit, row.lower_is_better) != (m.kind, m.unit, m.lower_is_better):
            # The newest upload defines what a metric means (a unit fix in CI should take effect).
            row.kind, row.unit, row.lower_is_better = m.kind, m.unit, m.lower_is_better
            stale.append(row)
    if stale:
        Metric.objects.bulk_update(stale, ["kind", "unit", "lower_is_better"])
    return existing


def _series_by_name(app: App, upload: CompleteUpload, metrics: dict[str, Metric]) -> dict[str, Series]:
    sigs = {
        name: Series.signature_of(app.name, upload.platform, upload.branch, upload.device, name) for name in metrics
    }
    found = {s.signature: s for s in Series.objects.filter(signature__in=sigs.values())}
    missing = [
        Series(
            signature=sig, app=app, platform=upload.platform, branch=upload.branch,
            device=upload.device, metric=metrics[name],
        )
        for name, sig in sigs.items()
        if sig not in found
    ]
    if missing:
        Series.objects.bulk_create(missing, ignore_conflicts=True)
        found = {s.signature: s for s in Series.objects.filter(signature__in=sigs.values())}
    return {name: found[sig] for name, sig in sigs.items()}


def _measurement_fields(m: ParsedMetric) -> dict[str, object]:
    samples = pack_samples(m.samples) if m.samples is not None else None
    return {
        "value": summary_value(m),
        "samples": samples,
        "n_samples": len(m.samples) if m.samples is not None else 0,
        "count": m.count,
        "total": m.total,
    }


def _write_measurements(build: Build, parsed: tuple[ParsedMetric, ...], series: dict[str, Series]) -> int:
    existing = {
        row["series_id"]: row
        for row in Measurement.objects.filter(build=build, series__in=[s.pk for s in series.values()]).values(
            "id", "series_id", "value", "samples", "n_samples", "count", "total"
        )
    }
    new: list[Measurement] = []
    changed: list[Measurement] = []
    for m in parsed:
        s = series[m.name]
        fields = _measurement_fields(m)
        old = existing.get(s.pk)
        if old is None:
            new.append(Measurement(series=s, build=build, build_time=build.timestamp, **fields))
            continue
        old_samples = bytes(old["samples"]) if old["samples"] is not None else None
        if (old["value"], old_samples, old["n_samples"], old["count"], old["total"]) != (
            fields["value"], fields["samples"], fields["n_samples"], fields["count"], fields["total"]
        ):
            changed.append(Measurement(pk=old["id"], series=s, build=build, build_time=build.timestamp, **fields))
    if new:
        Measurement.objects.bulk_create(new, batch_size=500)
    if changed:
        Measurement.objects.bulk_update(
            changed, ["value", "samples", "n_samples", "count", "total", "build_time"], batch_size=500
        )
    return len(new) + len(changed)
