"""Where the worker's replay of a series starts, and the history it loads for it (no database: plain rows)."""

from __future__ import annotations

from types import SimpleNamespace

from alerts import analysis
from alerts.analysis import _enough_history, replay_start


def points(n: int, first: int = 0) -> list[SimpleNamespace]:
    """Window points of builds ``first .. first + n - 1`` (build id = series position)."""
    return [SimpleNamespace(build_id=b) for b in range(first, first + n)]


def alert(detected: int | None, decided: int | None) -> SimpleNamespace:
    return SimpleNamespace(detected_build_id=detected, decided_build_id=decided)


def test_it_replays_an_in_order_build_alone():
    pts = points(100)
    assert replay_start(pts, [alert(60, 80), alert(90, 98)], {99}) == 99


def test_it_starts_where_an_alert_later_builds_decided_was_raised():
    # Raised on 70, confirmed on 85: build 75 arriving late must see it as it stood on 74 (open), so the replay
    # starts on 70 and raises it again.
    assert replay_start(points(100), [alert(70, 85)], {75}) == 70


def test_it_follows_a_chain_of_such_alerts_back():
    # Starting on 70 reaches an alert raised on 55 and withdrawn on 72, which reaches one raised on 40.
    alerts = [alert(70, 85), alert(55, 72), alert(40, 58), alert(10, 30)]
    assert replay_start(points(100), alerts, {75}) == 40


def test_alerts_decided_before_the_late_build_or_raised_after_it_never_move_it():
    alerts = [alert(50, 74), alert(76, 90), alert(80, 80)]
    assert replay_start(points(100), alerts, {75}) == 75


def test_alerts_without_a_decision_build_or_outside_the_window_never_move_it():
    # decided_build is NULL on rows stored before it was recorded and on those a replay withdrew without raising
    # them again; a detection build before the loaded window cannot be replayed from
    alerts = [alert(70, None), alert(None, 90), alert(3, 90)]
    assert replay_start(points(90, first=10), alerts, {75}) == 65


def test_a_backlog_starts_at_its_first_build():
    assert replay_start(points(100), [alert(70, 85)], {95, 80, 97}) == 70
    assert replay_start(points(100), [], {95, 80, 97}) == 80
    assert replay_start(points(100), [], {1000}) is None  # nothing of the series to analyse


def test_loading_more_history_for_a_moved_start_never_reloads_a_series_shorter(monkeypatch):
    # A series already loaded to 512 points whose replay start moved to position 40 (< keep 112): the next load
    # asks for more than 512, not for the default 128 again.
    full = points(2000)
    asked = []

    def fake_recent_points(ids, *, limit, with_samples):
        asked.append(limit)
        return {sid: full[-limit:] for sid in ids}

    monkeypatch.setattr(analysis, "recent_points", fake_recent_points)
    history = {1: full[-512:], 2: points(50)}  # series 2 is loaded whole
    start_build = history[1][40].build_id
    out = _enough_history(history, {1: {start_build}, 2: {10}}, keep=112, limit=128)
    assert asked == [1024]
    pos = next(i for i, p in enumerate(out[1]) if p.build_id == start_build)
    assert pos >= 112 and out[1][-1].build_id == 1999
    assert len(out[2]) == 50


def test_a_moved_start_loads_more_history_and_the_alerts_on_it_once_per_series(monkeypatch):
    # Series 1 (2000 builds, 128 loaded): build 1990 arrives late; an alert raised on 1950 and confirmed on 1995
    # moves the start to 1950, 56 points into the window, so more history is loaded (and its alerts) until 112
    # precede it. Series 2 is already loaded whole (200 builds, by an earlier load) with the same kind of alert:
    # one load finds nothing more of it, and it is not asked for again while series 1 is.
    full = {1: points(2000), 2: points(200, first=5000)}
    loads = []

    def fake_recent_points(ids, *, limit, with_samples):
        loads.append((sorted(ids), limit))
        return {sid: full[sid][-limit:] for sid in ids}

    def fake_stored(series_ids, history):
        return {sid: list(alerts[sid]) for sid in series_ids}

    monkeypatch.setattr(analysis, "recent_points", fake_recent_points)
    monkeypatch.setattr(analysis, "_stored_alerts", fake_stored)
    alerts = {1: [alert(1950, 1995)], 2: [alert(5010, 5050)]}
    history = {1: full[1][-128:], 2: full[2]}
    stored = fake_stored([1, 2], history)
    starts = analysis._replay_starts(history, stored, {1990, 5040}, keep=112, limit=128)
    assert history[1][starts[1]].build_id == 1950 and starts[1] >= 112
    assert history[2][starts[2]].build_id == 5010
    assert loads == [([1, 2], 400)]
