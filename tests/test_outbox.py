"""The analysis hand-off: every committed build is queued, and a failed hand-off is found by the sweep."""

from __future__ import annotations

import pytest
from kombu.exceptions import OperationalError as BrokerDown

from alerts import dispatch, tasks
from metrics import hooks
from metrics.models import Build
from tests.factories import native_body

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_hands_a_committed_build_to_the_analysis_queue(upload, monkeypatch):
    published = []
    monkeypatch.setattr(tasks.analyse_build, "apply_async", lambda args: published.append(args))
    assert upload(native_body()).status_code == 201
    build = Build.objects.get()
    assert published == [[build.pk]]
    assert build.analysis_queued is not None


def test_it_does_not_queue_an_unchanged_resend(upload, monkeypatch):
    published = []
    monkeypatch.setattr(tasks.analyse_build, "apply_async", lambda args: published.append(args))
    upload(native_body())
    upload(native_body())
    assert len(published) == 1


def test_it_still_stores_the_upload_when_the_broker_is_down_and_the_sweep_queues_it_later(upload, monkeypatch):
    def broker_down(args):
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.analyse_build, "apply_async", broker_down)
    r = upload(native_body())
    assert r.status_code == 201
    build = Build.objects.get()
    assert build.analysis == Build.Analysis.PENDING
    assert build.analysis_queued is None
    assert dispatch.pending_builds(min_age_seconds=3600) == [build.pk]

    published = []
    monkeypatch.setattr(tasks.analyse_build, "apply_async", lambda args: published.append(args))
    assert dispatch.sweep(min_age_seconds=3600) == 1
    assert published == [[build.pk]]
    # Just queued: not swept again until it is stale.
    assert dispatch.pending_builds(min_age_seconds=3600) == []
    assert dispatch.pending_builds(min_age_seconds=0) == [build.pk]


def test_it_leaves_finished_builds_alone(upload, monkeypatch):
    monkeypatch.setattr(tasks.analyse_build, "apply_async", lambda args: None)
    upload(native_body())
    Build.objects.update(analysis=Build.Analysis.DONE)
    assert dispatch.pending_builds(min_age_seconds=0) == []


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
