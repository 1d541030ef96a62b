"""The analysis hand-off: every committed build is queued, and a failed hand-off is found by the sweep."""

from __future__ import annotations

import pytest

from alerts import dispatch, handoff
from metrics import hooks
from metrics.models import Build
from tests.factories import native_body

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_hands_a_committed_build_to_the_analysis_queue(upload, handoffs):
    handoffs.held.add(handoff.ANALYSIS)
    assert upload(native_body()).status_code == 201
    build = Build.objects.get()
    assert handoffs.of(handoff.ANALYSIS) == [build.pk]
    assert build.analysis_queued is not None


def test_it_does_not_queue_an_unchanged_resend(upload, handoffs):
    handoffs.held.add(handoff.ANALYSIS)
    upload(native_body())
    upload(native_body())
    assert len(handoffs.of(handoff.ANALYSIS)) == 1


def test_it_still_stores_the_upload_when_the_broker_is_down_and_the_sweep_queues_it_later(upload, handoffs):
    handoffs.failing.add(handoff.ANALYSIS)
    r = upload(native_body())
    assert r.status_code == 201
    build = Build.objects.get()
    assert build.analysis == Build.Analysis.PENDING
    assert build.analysis_queued is None
    assert dispatch.pending_builds(min_age_seconds=3600) == [build.pk]

    handoffs.failing.clear()
    handoffs.held.add(handoff.ANALYSIS)
    assert dispatch.sweep(min_age_seconds=3600) == 1
    assert handoffs.of(handoff.ANALYSIS) == [build.pk]
    # Just queued: not swept again until it is stale.
    assert dispatch.pending_builds(min_age_seconds=3600) == []
    assert dispatch.pending_builds(min_age_seconds=0) == [build.pk]


def test_it_leaves_finished_builds_alone(upload, handoffs):
    handoffs.held.add(handoff.ANALYSIS)
    upload(native_body())
    Build.objects.update(analysis=Build.Analysis.DONE)
    assert dispatch.pending_builds(min_age_seconds=0) == []


def test_it_publishes_every_hand_off_kind_through_its_own_task():
    from alerts import tasks

    assert set(tasks._TASK_OF) == handoff.KINDS
    assert len({t.name for t in tasks._TASK_OF.values()}) == len(handoff.KINDS)


def test_it_refuses_an_unknown_hand_off_kind():
    with pytest.raises(ValueError, match="unknown hand-off kind"):
        handoff.publish("analyse", 1)


def test_it_registers_the_analysis_hook_for_branch_builds():
    assert hooks._handlers["branch"] is dispatch.branch_build_committed  # queues analysis, wakes waiting checks


def test_it_routes_each_task_to_exactly_one_queue():
    """Each queue has its own exchange and routing key, so a routed task lands in one queue only."""
    from django.conf import settings

    from perfplatform.celery import app

    queues = {q.name: q for q in app.conf.task_queues}
    assert set(queues) == {r["queue"] for r in settings.CELERY_TASK_ROUTES.values()}
    keys = [(q.exchange.name, q.routing_key) for q in queues.values()]
    assert len(set(keys)) == len(keys)
    for task, route in settings.CELERY_TASK_ROUTES.items():
        assert app.amqp.router.route({}, task)["queue"].name == route["queue"]
