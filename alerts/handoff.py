"""The hand-off port between domain code and the task queue.

Domain modules (analysis, dispatch, notifications, pre-merge checks, code-host posts, bisection) decide
*what* work is due and call `publish(kind, pk)`; how that reaches a worker is `alerts.tasks`'s business:
it installs the Celery publisher when the app loads. So no domain module imports Celery or the tasks
module (import-linter checks it), there is no import cycle, and tests swap the publisher through
`use_publisher` instead of patching Celery internals.

Every kind has a durable outbox row (pending build, pending check, pending delivery, unsent run request);
a publish that raises leaves that row for the periodic sweep, so callers only decide whether to log it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

ANALYSIS = "analysis"              # Build pk: analyse a committed branch build
CHECK = "check"                    # Build pk: compute a pull-request build's check
CODE_HOST_POST = "code_host_post"  # CodeHostPost pk: post a check's status and comment
DELIVERY = "delivery"              # Delivery pk: send one notification
RUN_REQUEST = "run_request"        # RunRequest pk: POST it to the app's CI
REQUESTED_BUILD = "requested_build"  # Build pk: apply CI's answer to its bisection
KINDS = frozenset({ANALYSIS, CHECK, CODE_HOST_POST, DELIVERY, RUN_REQUEST, REQUESTED_BUILD})

Publisher = Callable[[str, int], None]

_publisher: Publisher | None = None


def install(publisher: Publisher) -> None:
    """Set the process's publisher (alerts.tasks does this on import)."""
    global _publisher
    _publisher = publisher


def publish(kind: str, pk: int) -> None:
    """Hand one unit of work to the queue. Raises what the publisher raises (a broker outage, say)."""
    if kind not in KINDS:
        raise ValueError(f"unknown hand-off kind {kind!r}; one of {sorted(KINDS)}")
    if _publisher is None:
        raise RuntimeError("no task publisher installed: import alerts.tasks (AlertsConfig.ready does)")
    _publisher(kind, pk)


@contextmanager
def use_publisher(publisher: Publisher) -> Iterator[None]:
    """Publish through `publisher` inside the block, then restore the previous one."""
    global _publisher
    before = _publisher
    _publisher = publisher
    try:
        yield
    finally:
        _publisher = before
