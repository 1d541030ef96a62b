"""The Celery application: `celery -A perfplatform worker|beat` finds `app` here."""

import os

from celery import Celery
from celery.signals import worker_process_init
from kombu import Exchange, Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfplatform.settings")

app = Celery("perfplatform")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Consume every queue named in CELERY_TASK_ROUTES (settings), so a worker started without -Q serves all.
# Each queue gets its own direct exchange and routing key; a bare Queue(name) would bind every queue
# to the default exchange and key, and a task would be delivered to all of them.
app.conf.task_queues = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in sorted({route["queue"] for route in app.conf.task_routes.values()})
)
app.autodiscover_tasks()


@worker_process_init.connect
def _freeze_startup_heap(**_: object) -> None:
    # Each prefork child, once Django and the tasks are loaded: perfplatform.heap says why.
    from perfplatform.heap import freeze_startup_heap

    freeze_startup_heap()
