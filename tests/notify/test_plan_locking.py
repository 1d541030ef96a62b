"""Planning a group's deliveries and analysing the next build at once, on PostgreSQL's row locks: planning
takes the group's series and alerts before the group, in the order analysis takes them, so neither waits for
the other in a cycle (it took the group first and deadlocked with two worker processes)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from alerts.models import Alert, AlertGroup, Delivery
from alerts.notify.service import plan_deliveries
from metrics.models import Series
from tests.notify.fixtures import add_channel, make_scene

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("not __import__('django.db').db.connection.vendor == 'postgresql'",
                       reason="row locks: SQLite locks the whole database, so no cycle can form there"),
]


def test_it_plans_a_group_while_the_next_builds_analysis_holds_its_alert(settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    scene = make_scene()
    add_channel(scene.team, "webhook", url="http://127.0.0.1:9/hook", secret="s")
    alert = scene.regression
    holding, errors = threading.Event(), []

    def analysis() -> None:  # what `alerts.analysis._analyse` does: series, then the alert, then the group
        try:
            with transaction.atomic():
                list(Series.objects.select_for_update(no_key=True).filter(pk=alert.series_id).values_list("pk"))
                Alert.objects.filter(pk=alert.pk).update(after=490.0, rel_change=0.225)
                holding.set()
                time.sleep(1.5)  # planning starts meanwhile; PostgreSQL's deadlock_timeout is 1 s
                AlertGroup.objects.filter(pk=scene.group.pk).update(status="untriaged")
        except Exception as exc:  # noqa: BLE001 - the assertion below reports it
            errors.append(exc)
        finally:
            connection.close()

    worker = threading.Thread(target=analysis)
    worker.start()
    assert holding.wait(10)
    try:
        planned = plan_deliveries(scene.group.pk)
    except Exception as exc:  # noqa: BLE001
        errors.append(exc)
        planned = []
    worker.join(30)
    assert errors == []
    assert len(planned) == 1 and Delivery.objects.filter(group=scene.group).count() == 1
    got = Alert.objects.get(pk=alert.pk)
    # Planning waited for the analysis: it remembers the change as the analysis left it.
    assert got.after == 490.0 and got.sent_change == pytest.approx(0.225)
