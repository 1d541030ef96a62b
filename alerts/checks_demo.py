"""The demo's pull-request builds (`seed_demo`): one clean, one regressing, one on a device the base lacks.

Each is uploaded through the same path as CI uploads (parse, complete, store, the "pr" hook), based on the
newest main build of the first demo app and platform, with values of that build re-measured on another
runner (runs scaled by one runner effect). Idempotent: builds already there are left alone.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import numpy as np
from django.utils import timezone

from metrics.formats import parse
from metrics.formats.complete import complete
from metrics.ingest import store_upload, upload_digest
from metrics.models import App, Build, Measurement, Scope, unpack_samples

PRS = (
    ("pr-demo-clean", "pr/101", None, {}),
    ("pr-demo-slower", "pr/102", None, {"startup.": 1.15, "size.apk": 1.01}),
    ("pr-demo-newdevice", "pr/103", "pixel-9-pro", {}),
)


def _metrics(base: Build, factors: dict[str, float], rng: np.random.Generator) -> list[dict]:
    out = []
    runner = float(np.exp(rng.normal(0, 0.004)))
    for m in Measurement.objects.filter(build=base).select_related("series__metric").order_by("series__metric__name"):
        metric = m.series.metric
        f = next((v for k, v in factors.items() if metric.name.startswith(k)), 1.0)
        row = {"name": metric.name, "kind": metric.kind, "unit": metric.unit, "lower_is_better": metric.lower_is_better}
        samples = unpack_samples(m.samples)
        if samples:
            row["samples"] = [round(x * runner * f, 4) for x in samples]
        elif m.total is not None:
            row["count"], row["total"] = int(round(m.count * f)), m.total
        else:
            row["value"] = round(m.value * f) if metric.kind == "size" else m.value * f
        out.append(row)
    return out


def seed_pull_requests(app_name: str, platform: str, stdout=None) -> int:
    app = App.objects.filter(name=app_name).first()
    if app is None:
        return 0
    base = Build.objects.filter(app=app, platform=platform, role=Scope.BRANCH,
                                branch=app.default_branch).order_by("-timestamp").first()
    device = Measurement.objects.filter(build=base).values_list("series__device", flat=True).first() if base else None
    if base is None:
        return 0
    made = 0
    for i, (bid, branch, other_device, factors) in enumerate(PRS):
        if Build.objects.filter(app=app, platform=platform, ext_id=bid).exists():
            continue
        rng = np.random.default_rng(i)
        body = {"app": app_name, "platform": platform, "branch": branch, "device": other_device or device or "",
                "build": {"id": bid, "commit": hashlib.sha1(bid.encode()).hexdigest()[:12],
                          "timestamp": (base.timestamp + timedelta(minutes=30)).isoformat(),
                          "base_commit": base.commit, "base_branch": base.branch},
                "metrics": _metrics(base, factors, rng)}
        raw = json.dumps(body).encode()
        up = complete(parse(json.loads(raw), "native"), {}, now=timezone.now())
        store_upload(app, up, fmt="native", digest=upload_digest(raw, "native", {}))
        made += 1
    if stdout is not None and made:
        stdout.write(f"  {app_name} {platform}: {made} pull-request builds with pre-merge checks "
                     f"(/checks/{app_name}/{platform}/pr-demo-slower/)")
    return made
