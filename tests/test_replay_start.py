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
