"""A refined culprit never drops a person's triage, and never lands an alert on a build it cannot see."""

from __future__ import annotations

import dataclasses

import pytest

from alerts import lifecycle
from alerts.models import Alert
from metrics.history import recent_points


def context(world, name="startup.cold.ttid", offset=0):
    s = world.series[name]
    pts = recent_points([s.pk], limit=1000)[s.pk]
    return lifecycle.SeriesContext(s, pts, world.teams["startup-perf"].pk, offset=offset), pts


def test_it_keeps_the_note_of_a_withdrawn_alert_the_refined_culprit_lands_on(world):
    withdrawn = world.alerts["older"]  # withdrawn, at builds[20]
    Alert.objects.filter(pk=withdrawn.pk).update(note="flaky runner, see INFRA-12", status="invalid")
    ctx, pts = context(world)
    index_of = {p.build_id: i for i, p in enumerate(pts)}
    moving = world.alerts["startup"]  # at builds[30]
    cp = dataclasses.replace(lifecycle.as_change_point(moving, index_of), index=20, first_index=19, last_index=21)
    saved = lifecycle.save_change_point(cp, ctx, decided_build_id=None, existing=moving)
    assert saved.pk == moving.pk and saved.build_id == world.builds[20].pk
    assert "flaky runner, see INFRA-12" in saved.note
    assert saved.status == "invalid"
    assert not Alert.objects.filter(pk=withdrawn.pk).exists()


def test_it_never_clamps_an_index_outside_the_window_to_the_edge_build(world):
    ctx, pts = context(world, offset=100)  # the window holds series positions 100..139
    assert ctx.build_at(100) == pts[0].build_id
    assert ctx.build_at(99) is None and ctx.build_at(100 + len(pts)) is None
    moving = world.alerts["startup"]
    index_of = {p.build_id: 100 + i for i, p in enumerate(pts)}
    cp = lifecycle.as_change_point(moving, index_of)
    with pytest.raises(ValueError, match="outside the loaded window"):
        lifecycle.save_change_point(dataclasses.replace(cp, index=5), ctx, decided_build_id=None, existing=moving)
    saved = lifecycle.save_change_point(dataclasses.replace(cp, first_index=90), ctx, decided_build_id=None,
                                        existing=moving)
    assert saved.first_build_id is None  # unknown, not the window's first build


def test_an_alert_raised_anew_where_a_withdrawn_one_sits_is_detected_by_the_new_build(world):
    # The detector reviews a raised alert from the build that raised it (its confirmation hold, and no refine onto
    # a build after it); the worker resumes from the stored row, so that row must say the new build.
    withdrawn = world.alerts["older"]  # withdrawn, at builds[20]
    Alert.objects.filter(pk=withdrawn.pk).update(note="flaky runner, see INFRA-12", detected_build=world.builds[22])
    ctx, pts = context(world)
    index_of = {p.build_id: i for i, p in enumerate(pts)}
    cp = dataclasses.replace(lifecycle.as_change_point(Alert.objects.get(pk=withdrawn.pk), index_of), withdrawn=False)
    saved = lifecycle.save_change_point(cp, ctx, decided_build_id=world.builds[26].pk, raised=True)
    assert saved.pk == withdrawn.pk and saved.detection == Alert.Detection.OPEN
    assert saved.detected_build_id == world.builds[26].pk
    assert lifecycle.as_change_point(saved, index_of).detected_at == 26
    assert "flaky runner, see INFRA-12" in saved.note


def test_a_drift_that_began_before_the_loaded_builds_starts_at_its_first_merged_shifts_culprit(world):
    # The detector puts an online drift's start on its first culprit (``drift.drift_start``). When that build is
    # older than the worker loaded, the drift is stored without a first build, and the first alert merged into it
    # (the run's head) says where it began: a shift head's culprit, not its plausible range's start.
    ctx, pts = context(world)
    index_of = {p.build_id: i for i, p in enumerate(pts)}
    head = world.alerts["startup"]  # a shift at builds[30]
    Alert.objects.filter(pk=head.pk).update(first_build=world.builds[28])
    head.refresh_from_db()
    drift_cp = dataclasses.replace(lifecycle.as_change_point(head, index_of), index=36, first_index=36, last_index=36,
                                   shape="drift", window_builds=7, slope_per_build=1.0)
    drift = lifecycle.save_change_point(drift_cp, ctx, decided_build_id=None, raised=True)
    Alert.objects.filter(pk=drift.pk).update(first_build=None)
    drift.refresh_from_db()
    lifecycle.merge_into(lifecycle.as_change_point(head, index_of), ctx, drift, decided_build_id=None)
    drift.refresh_from_db()
    head.refresh_from_db()
    assert drift.first_build_id == world.builds[30].pk
    assert head.merged_into_id == drift.pk and head.detection == Alert.Detection.WITHDRAWN
