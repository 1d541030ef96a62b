"""What the alert group page shows of bisection: per alert, the commits in range and a timeline of
every request and its outcome (template `alerts/_bisection.html`)."""

from __future__ import annotations

import math

from alerts.bisection.ranges import culprit_range
from alerts.detection.bisect import Observation, Reference, classify
from alerts.models import Alert, Bisection, RunRequest
from alerts.web.format import num, short

OUTCOME_TEXT = {
    "bisected": "culprit commit found", "confirmed": "re-runs reproduced the shift",
    "not_reproduced": "re-runs did not reproduce the shift: withdrawn, not notified",
    "none": "nothing to narrow", "expired": "CI did not answer in time; sent with its range",
    "failed": "a request failed; sent with its range", "budget": "the app's daily request budget ran out",
    "gave_up": "no clear answer within the request limit", "no_ci": "the app has no CI endpoint any more",
}


def _when(at) -> str:
    """A datetime or an ISO string as `YYYY-MM-DD HH:MM:SS` (UTC), for the timeline."""
    if at is None:
        return ""
    text = at if isinstance(at, str) else at.isoformat()
    return text[:19].replace("T", " ")


def _unit(ref: Reference, level: float) -> float | None:
    if not math.isfinite(level):
        return None
    return math.exp(level) if ref.log else level


def _alert_block(alert: Alert, b: Bisection | None, requests: list[RunRequest]) -> dict | None:
    commits = b.commits if b is not None else culprit_range(alert)
    if not commits:
        return None
    unit = alert.series.metric.unit
    ref = Reference(**b.reference) if b is not None else None
    by_index: dict[int, list[Observation]] = {}
    for r in requests:
        if r.state == RunRequest.State.ANSWERED:
            by_index.setdefault(r.index, []).append(
                Observation(values=tuple((r.observation or {}).get("values") or ()), runs=r.runs,
                            count=(r.observation or {}).get("count"), total=(r.observation or {}).get("total"),
                            reason=r.reason))
    verdicts = {i: classify(obs, ref, force=True) for i, obs in by_index.items()} if ref is not None else {}
    lo, hi = (b.lo, b.hi) if b is not None else (0, len(commits) - 1)
    rows = []
    for i, c in enumerate(commits):
        v = verdicts.get(i)
        rows.append({
            "index": i, "commit": c, "short": short(c), "previous": i == 0,
            "in_range": lo < i <= hi, "culprit": bool(alert.culprit_commit) and c == alert.culprit_commit,
            "side": v.side if v is not None else "", "level": num(_unit(ref, v.level), unit) if v is not None else "",
        })
    timeline = []
    if b is not None:
        timeline.append({"at": b.started, "what": f"bisection started over {len(commits) - 1} commits"
                         + (" (thin evidence: confirmation required)" if b.thin else "")})
    for r in requests:
        timeline.append({"at": r.created, "what": f"requested {r.runs} run{'s' if r.runs != 1 else ''} of "
                         f"{short(r.commit)} ({r.reason}), request {r.public_id}"})
        for a in r.attempt_log:
            timeline.append({"at": a.get("at"), "what": f"sent to CI: {'accepted' if a.get('ok') else 'failed'}"
                             + (f" (HTTP {a['status']})" if a.get("status") else "")
                             + (f": {a['error']}" if a.get("error") else "")})
        if r.answered:
            v = verdicts.get(r.index)
            what = (f"answered by build {r.answer.ext_id if r.answer else r.build_ext_id}"
                    + (f": {short(r.commit)} looks {v.side} ({num(_unit(ref, v.level), unit)})" if v else ""))
            if r.state == RunRequest.State.FAILED:
                what = f"answer rejected: {r.error or r.outcome}"
            timeline.append({"at": r.answered, "what": what})
        elif r.state in (RunRequest.State.EXPIRED, RunRequest.State.FAILED):
            timeline.append({"at": None, "what": f"request {r.public_id} {r.state}: {r.error or r.outcome}"})
    if b is not None and b.finished:
        timeline.append({"at": b.finished, "what": OUTCOME_TEXT.get(b.outcome, b.outcome)
                         + (f" ({b.detail})" if b.detail else "")})
    for e in timeline:
        e["at"] = _when(e["at"])
    return {"alert": alert, "commits": rows, "timeline": timeline, "bisection": b,
            "n_commits": len(commits) - 1}


def bisection_blocks(alerts: list[Alert]) -> list[dict]:
    """One block per alert of the group whose culprit range is known (as commits)."""
    ids = [a.pk for a in alerts]
    bisections = {b.alert_id: b for b in Bisection.objects.filter(alert_id__in=ids)}
    requests: dict[int, list[RunRequest]] = {}
    for r in RunRequest.objects.filter(alert_id__in=ids).exclude(outcome="superseded").select_related("answer").order_by("pk"):
        requests.setdefault(r.alert_id, []).append(r)
    blocks = []
    for a in alerts:
        block = _alert_block(a, bisections.get(a.pk), requests.get(a.pk, []))
        if block is not None:
            blocks.append(block)
    return blocks
