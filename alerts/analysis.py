"""Per-build analysis: the history of every series a build touched, the online detector, the alerts.

One transaction per build. The touched series rows are locked first (in primary-key order), so two
workers analysing builds of the same series take turns and never interleave their decisions. The
detector is resumed from the stored window and the stored alerts, then stepped through the new
build; if the build arrived out of order (older than builds already analysed) every later build of
the series is stepped again, from before any alert those builds had refined, confirmed or withdrawn
(`replay_start`), and alerts the replayed builds had raised that the replay does not raise again are
withdrawn.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from alerts import budget_alerts, lifecycle
from alerts.detection import DEFAULT, DetectorConfig, OnlineDetector, Point
from alerts.detection.model import ChangePoint, default_abs_floor, many_points
from alerts.detection.online import NOISE_EVERY
from alerts.models import Alert, MetricOverride
from alerts.ownership import Owners, metric_overrides
from metrics.history import HistoryPoint, recent_points
from metrics.models import Build, Measurement, Scope, Series

log = logging.getLogger(__name__)

# Points loaded beyond the detector's window by default: builds after an out-of-order upload that are stepped
# again without a second load (`_enough_history` loads more when a late build or a replay start sits further back).
REPLAY_MAX = 32


def base_config() -> DetectorConfig:
    return DEFAULT.with_overrides(
        target_false_alarms_per_1000_builds=settings.PERF_TARGET_FALSE_ALARMS_PER_1000_BUILDS or None
    )


def to_point(p: HistoryPoint, kind: str) -> Point:
    return Point(*_point_fields(p, kind))


def to_points(pts: list[HistoryPoint], kind: str) -> list[Point]:
    """``[to_point(p, kind) for p in pts]``, checked in bulk (`many_points`)."""
    return many_points([_point_fields(p, kind) for p in pts])


def _point_fields(p: HistoryPoint, kind: str) -> tuple[float, np.ndarray | None, int | None, int | None]:
    if kind == "rate" and p.total is not None:
        return p.value, None, p.count, p.total
    if p.packed_samples:
        return p.value, p.sample_array(), None, None
    return p.value, None, None, None


def analyse_build_if_pending(build_pk: int) -> str:
    """The task's entry: a build another analysis already took along in its batch is done."""
    state = Build.objects.filter(pk=build_pk).values_list("analysis", flat=True).first()
    if state == Build.Analysis.DONE:
        return state
    return analyse_build(build_pk)


def analyse_build(build_pk: int) -> str:
    """Analyse one build; returns the build's analysis state. Safe to run again (idempotent)."""
    try:
        with transaction.atomic():
            state = _analyse(build_pk)
    except Exception as exc:
        from django.db import InterfaceError, OperationalError

        if isinstance(exc, OperationalError | InterfaceError):
            raise  # transient: the task retries with backoff
        log.exception("analysis of build %s failed", build_pk)
        Build.objects.filter(pk=build_pk).update(
            analysis=Build.Analysis.FAILED, analysis_error=f"{type(exc).__name__}: {exc}"[:2000],
            analysis_finished=timezone.now(),
        )
        return Build.Analysis.FAILED
    return state


def _analyse(build_pk: int) -> str:
    # NO KEY UPDATE locks: they serialise analyses of the same build and series without blocking
    # the foreign-key checks of concurrent uploads that reference those rows.
    build = Build.objects.select_for_update(no_key=True, of=("self",)).select_related("app").filter(pk=build_pk).first()
    if build is None:
        return "missing"
    if build.role != Scope.BRANCH:
        return "skipped"  # pull-request and requested builds never enter branch analysis
    series_ids = list(Measurement.objects.filter(build=build).values_list("series_id", flat=True))
    series = list(
        Series.objects.select_for_update(no_key=True, of=("self",)).filter(pk__in=series_ids)
        .select_related("metric").order_by("pk")
    )
    config = base_config()
    # The detector's window before the build, plus builds to replay after it; more for late builds.
    history = recent_points([s.pk for s in series], limit=config.window + REPLAY_MAX, with_samples=True)
    batch = _backlog(build, {p.build_id for pts in history.values() for p in pts}, series_ids)
    todo = batch | {build.pk}
    keep, limit = config.window + NOISE_EVERY, config.window + REPLAY_MAX
    history = _enough_history(history, dict.fromkeys(history, todo), keep=keep, limit=limit)
    stored = _stored_alerts(series_ids, history)
    starts = _replay_starts(history, stored, todo, keep=keep, limit=limit)
    offsets = _series_offsets(series, history, todo)
    owners = Owners()
    overrides = list(MetricOverride.objects.order_by("position"))
    touched_groups: set[int] = set()
    for s in series:
        pts = history.get(s.pk, [])
        metric = s.metric
        cfg = config.with_overrides(abs_floor=default_abs_floor(metric.kind, metric.unit)).with_overrides(
            **metric_overrides(build.app.name, s.platform, metric.name, overrides))
        ctx = lifecycle.SeriesContext(s, pts, owners.team_id(build.app.name, s.platform, metric.name),
                                      offset=offsets[s.pk])
        pos = starts.get(s.pk)
        if pos is not None:
            touched_groups |= replay_series(ctx, stored[s.pk], pos, metric.kind, metric.lower_is_better, cfg)
    lifecycle.mark_recoveries(series_ids)
    touched_groups |= budget_alerts.raise_for_builds(list(Build.objects.filter(pk__in=todo).select_related("app")))
    lifecycle.refresh_groups(sorted(touched_groups))
    build_times = {p.build_id: p.build_time for pts in history.values() for p in pts}
    newest = max(build_times.values(), default=build.timestamp)
    # Kept here rather than in the upload: the series rows are already locked, and uploads to one
    # branch would otherwise all queue on the same 150 rows.
    Series.objects.filter(pk__in=series_ids).filter(
        Q(last_build_time__isnull=True) | Q(last_build_time__lt=newest)
    ).update(last_build_time=newest)
    if settings.PERF_FAULT_ANALYSIS_SLEEP_SECONDS:  # fault injection: a window to kill the worker in
        time.sleep(settings.PERF_FAULT_ANALYSIS_SLEEP_SECONDS)
    now = timezone.now()
    if batch:
        Build.objects.filter(pk__in=batch).update(analysis=Build.Analysis.DONE, analysis_finished=now,
                                                  analysis_error="")
    build.analysis = Build.Analysis.DONE
    build.analysis_finished = now
    build.analysis_attempts += 1
    build.analysis_error = ""
    build.save(update_fields=["analysis", "analysis_finished", "analysis_attempts", "analysis_error", "updated"])
    latest = max(todo, key=lambda pk: build_times.get(pk, build.timestamp))
    transaction.on_commit(lambda: _after_commit(latest))
    return Build.Analysis.DONE


def _enough_history(history: dict[int, list[HistoryPoint]], todo: dict[int, set[int]], *, keep: int,
                    limit: int) -> dict[int, list[HistoryPoint]]:
    """Extend the loaded points of each series in `todo` until `keep` of them precede the first of its builds
    there (where its replay starts).

    Resuming needs the `window + NOISE_EVERY` points before the first replayed build (the detector's
    whole state, docs/DETECTION.md "Resuming"); a build that arrives late, or a backlog after an outage,
    can sit further back than the default load reaches. A series with fewer points than asked for is
    already loaded whole.
    """
    def short(sid: int, pts: list[HistoryPoint], asked: int) -> bool:
        pos = next((i for i, p in enumerate(pts) if p.build_id in todo[sid]), None)
        return len(pts) >= asked and (pos is None or pos < keep)

    # a series loaded further already (an earlier call) is asked for more than that, never reloaded shorter
    asked = {sid: max(limit, len(history.get(sid, []))) for sid in todo}
    need = [sid for sid in todo if short(sid, history.get(sid, []), asked[sid])]
    while need:
        limit = 2 * max(asked[sid] for sid in need)
        more = recent_points(need, limit=limit, with_samples=True)
        history.update(more)
        asked.update(dict.fromkeys(need, limit))
        need = [sid for sid in need if short(sid, more.get(sid, []), limit)]
    return history


def _stored_alerts(series_ids: list[int], history: dict[int, list[HistoryPoint]]) -> dict[int, list[Alert]]:
    """The alerts of `series_ids` whose culprit is among their loaded points."""
    window_builds = {p.build_id for sid in series_ids for p in history.get(sid, [])}
    stored: dict[int, list[Alert]] = defaultdict(list)
    for a in Alert.objects.filter(series_id__in=series_ids, build_id__in=window_builds):
        stored[a.series_id].append(a)
    return stored


def replay_start(pts: list[HistoryPoint], alerts: list[Alert], todo: set[int]) -> int | None:
    """The window index a series' replay starts at: its first build in `todo`, moved back to the detection
    build of every alert raised before it and decided at or after it (None: nothing of it to analyse).

    The detector resumes from the alerts as stored. Builds analysed after a build that arrives late may have
    refined, confirmed or withdrawn an alert raised before it; resuming from that state would let them decide
    the replay of the build they followed. Replaying from where such an alert was raised resumes from every
    alert as it stood then (repeated, as an earlier start can reach other such alerts), so the late build is
    analysed as if it had arrived in order. Alerts without a decision build (stored before it was recorded, or
    withdrawn by a replay that did not raise them again) never move it.
    """
    start = next((i for i, p in enumerate(pts) if p.build_id in todo), None)
    if start is None:
        return None
    later = {p.build_id for p in pts[start:]}
    if not any(a.decided_build_id in later for a in alerts):
        return start  # nothing decided from the start on (every in-order build): no move
    index_of = {p.build_id: i for i, p in enumerate(pts)}
    spans = [(index_of[a.detected_build_id], index_of[a.decided_build_id]) for a in alerts
             if a.detected_build_id in index_of and a.decided_build_id in index_of]
    moved = True
    while moved:
        moved = False
        for raised, decided in spans:
            if raised < start <= decided:
                start, moved = raised, True
    return start


def _replay_starts(history: dict[int, list[HistoryPoint]], stored: dict[int, list[Alert]], todo: set[int], *,
                   keep: int, limit: int) -> dict[int, int | None]:
    """`replay_start` of every loaded series, loading more points (and their alerts) where a start moved back
    leaves fewer than `keep` points before it. Updates `history` and `stored` in place."""
    whole: set[int] = set()  # series a load found no more points of
    while True:
        starts = {sid: replay_start(pts, stored[sid], todo) for sid, pts in history.items()}
        moved = {sid: {history[sid][st].build_id} for sid, st in starts.items()
                 if st is not None and st < keep and history[sid][st].build_id not in todo and sid not in whole}
        if not moved:
            return starts
        loaded = {sid: len(history[sid]) for sid in moved}
        _enough_history(history, moved, keep=keep, limit=limit)
        grown = [sid for sid in moved if len(history.get(sid, [])) > loaded[sid]]
        whole.update(sid for sid in moved if sid not in grown)
        if not grown:
            return starts
        stored.update(_stored_alerts(grown, history))


def _backlog(build: Build, window_builds: set[int], series_ids: list[int]) -> set[int]:
    """Other pending builds in the window that this analysis can take along (a backlog after an
    outage, or uploads faster than one worker): those no other worker holds and whose every series is
    locked here. Their own tasks then find them done and return at once."""
    candidates = set(
        Build.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
        .filter(pk__in=window_builds - {build.pk}, analysis=Build.Analysis.PENDING)
        .values_list("pk", flat=True)
    )
    if candidates:
        candidates -= set(
            Measurement.objects.filter(build_id__in=candidates).exclude(series_id__in=series_ids)
            .values_list("build_id", flat=True)
        )
    return candidates


def _series_offsets(series: list[Series], history: dict[int, list[HistoryPoint]], todo: set[int]) -> dict[int, int]:
    """Each series' position of the first loaded point, so the resumed detector indexes the series as
    a detector streaming it from the first build would.

    The count is kept on the series row (`n_points` up to `last_point_build`), advanced by the points
    loaded after that mark; it is recounted when the mark left the window or a build arrived before it.
    """
    offsets: dict[int, int] = {}
    recount: list[int] = []
    for s in series:
        pts = history.get(s.pk, [])
        mark = next((i for i, p in enumerate(pts) if p.build_id == s.last_point_build), None)
        first_new = next((i for i, p in enumerate(pts) if p.build_id in todo), len(pts))
        if mark is None or first_new <= mark:
            recount.append(s.pk)
            continue
        offsets[s.pk] = s.n_points + (len(pts) - 1 - mark) - len(pts)
    if recount:
        counts = dict(
            Measurement.objects.filter(series_id__in=recount).values("series_id").annotate(n=Count("id"))
            .values_list("series_id", "n")
        )
        for sid in recount:
            offsets[sid] = counts.get(sid, 0) - len(history.get(sid, []))
    moved = []
    for s in series:
        pts = history.get(s.pk, [])
        if pts:
            total = offsets[s.pk] + len(pts)
            if (s.n_points, s.last_point_build) != (total, pts[-1].build_id):
                s.n_points, s.last_point_build = total, pts[-1].build_id
                moved.append(s)
    if moved:
        _save_counters(moved)
    return offsets


def _save_counters(moved: list[Series]) -> None:
    """One UPDATE for every moved counter. On PostgreSQL an UPDATE ... FROM (VALUES ...): Django's
    bulk_update compiles a CASE branch per row and field, which costs more than the update itself."""
    if connection.vendor != "postgresql":
        Series.objects.bulk_update(moved, ["n_points", "last_point_build"], batch_size=500)
        return
    table = Series._meta.db_table
    rows = ", ".join(["(%s::bigint, %s::integer, %s::bigint)"] * len(moved))
    params = [v for s in moved for v in (s.pk, s.n_points, s.last_point_build)]
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {table} AS t SET n_points = v.n, last_point_build = v.b FROM (VALUES {rows}) AS v(id, n, b) "
            "WHERE t.id = v.id",
            params,
        )


def replay_series(ctx: lifecycle.SeriesContext, alerts: list[Alert], pos: int, kind: str, lower_is_better: bool,
                  cfg: DetectorConfig) -> set[int]:
    """Resume the detector before window index `pos` and step it through the rest of the window.

    The detector works in series positions (`ctx.offset` + window index), as a detector that streamed
    the whole series would. Returns the ids of the alert groups it touched.
    """
    pts, offset = ctx.points, ctx.offset
    index_of = {p.build_id: offset + i for i, p in enumerate(pts)}
    first_replayed = offset + pos
    decided_before = [a for a in alerts if index_of.get(a.detected_build_id, -1) < first_replayed]
    replayed = [a for a in alerts if index_of.get(a.detected_build_id, -1) >= first_replayed]
    prior = [cp for a in decided_before if (cp := lifecycle.as_change_point(a, index_of)) is not None]
    # Resuming reads the last window + NOISE_EVERY builds before `pos`: the points before those are not built.
    lo = max(0, pos - (cfg.window + NOISE_EVERY))
    points = to_points(pts[lo:], kind)
    det = OnlineDetector.resume(points[:pos - lo], prior, start_index=offset + lo, kind=kind,
                                lower_is_better=lower_is_better, config=cfg)
    open_alert = None
    if det.open is not None:
        open_alert = next((a for a in decided_before if index_of.get(a.build_id) == det.open.index
                           and a.detection == Alert.Detection.OPEN), None)
    groups: set[int] = set()
    kept: set[int] = set()
    confirmed: Alert | None = None  # the alert of the latest "confirmed" event: a drift merges into it
    for point in points[pos - lo:]:
        for event in det.step(point):
            cp = event.change_point
            if event.type == "merged":
                if confirmed is not None and (left := lifecycle.merge_into(
                        cp, ctx, confirmed, decided_build_id=ctx.build_at(event.at))) is not None:
                    groups.add(left)
                continue
            if event.type == "raised":
                replay_hit = _replayed_alert_for(cp, ctx.build_at(event.at), ctx, replayed, kept, index_of,
                                                 cfg.refine_radius)
                alert = lifecycle.save_change_point(cp, ctx, decided_build_id=ctx.build_at(event.at), raised=True,
                                                    existing=replay_hit)
                open_alert = alert
            else:
                alert = lifecycle.save_change_point(cp, ctx, decided_build_id=ctx.build_at(event.at),
                                                    existing=open_alert)
                open_alert = None if event.type in ("confirmed", "withdrawn") else alert
                if event.type == "confirmed":
                    confirmed = alert
            kept.add(alert.pk)
            groups.add(alert.group_id)
    for a in replayed:
        if a.pk in kept:
            continue
        # Raised on a history that lacked the late build, never in build order: withdrawn (someone may have been
        # notified), and no decision span left to move a later replay's start (`replay_start`).
        if a.detection != Alert.Detection.WITHDRAWN:
            Alert.objects.filter(pk=a.pk).update(detection=Alert.Detection.WITHDRAWN, decided_build=None)
            groups.add(a.group_id)
        elif a.decided_build_id is not None:
            Alert.objects.filter(pk=a.pk).update(decided_build=None)
    return groups


def _replayed_alert_for(cp: ChangePoint, raised_build: int | None, ctx: lifecycle.SeriesContext,
                        replayed: list[Alert], kept: set[int], index_of: dict[int, int], radius: int) -> Alert | None:
    """The stored alert a change point raised again on replay (on build `raised_build`) continues, among those in
    the same direction this replay has not taken yet: the one at the same culprit, else the one raised on the same
    build, else the nearest by culprit at most `radius` builds away (the detector's refine radius), else the
    nearest by the build that raised it, at most `radius` builds away.

    A late build can move a culprit (e.g. from 72 to 75): the alert raised on the incomplete history is the
    same finding, so it moves with its triage and note, as a refined culprit does; withdrawing it and
    raising another would leave a record that streaming the series in build order never makes. The stored
    culprit is where the review left the alert, which can be further from where it is raised than the radius
    (raised at 31, reviewed to 24), and a late build's evidence can raise it a build or two sooner: the build
    that raised it says it is the same finding then. Further away on both, it is another finding: its note must
    not be carried to a change it was not written about.
    """
    culprit = ctx.build_at(cp.index)
    exact = next((a for a in replayed if a.build_id == culprit), None)
    if exact is not None:
        return exact
    free = [a for a in replayed if a.pk not in kept and a.direction == cp.direction and a.build_id in index_of]
    raised_at = index_of.get(raised_build)
    raise_gap = {a.pk: abs(index_of[a.detected_build_id] - raised_at) for a in free
                 if raised_at is not None and a.detected_build_id in index_of}
    culprit_gap = {a.pk: abs(index_of[a.build_id] - cp.index) for a in free}
    for gap, reach in ((raise_gap, 0), (culprit_gap, radius), (raise_gap, radius)):
        near = [a for a in free if gap.get(a.pk, reach + 1) <= reach]
        if near:
            return min(near, key=lambda a: gap[a.pk])
    return None


def _after_commit(build_pk: int) -> None:
    from alerts import notifications

    __import__("metrics.dashcache").dashcache.bump("dashboards")  # dashboards recompute (never raises)
    try:
        from alerts.bisection import engine

        app_id = Build.objects.filter(pk=build_pk).values_list("app_id", flat=True).first()
        engine.start_pending(app_id=app_id)  # before notifying: a bisection holds its group
    except Exception:
        log.exception("could not start bisections after build %s; the sweep will", build_pk)
    try:
        notifications.notify_due_groups(build_pk)
    except Exception:
        log.exception("could not queue notifications after build %s; the sweep will", build_pk)
