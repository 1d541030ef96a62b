"""The one seam between ingestion and what follows it (analysis, pre-merge checks, bisection).

`metrics` must not import `alerts`; instead `alerts` registers a handler per build role here at
start-up (AlertsConfig.ready): "branch" builds go to the post-merge analysis, "pr" builds to their
pre-merge check, "requested" builds to the bisection/confirmation that asked for them. Ingestion calls
`build_committed` after the upload's transaction commits. The build row is already committed as
pending, so a handler that fails (broker down) loses nothing: the periodic sweeps find the build again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

BuildHandler = Callable[[int], None]
_handlers: dict[str, BuildHandler] = {}


def register_build_committed(handler: BuildHandler, role: str = "branch") -> None:
    _handlers[role] = handler


def build_committed(build_pk: int, role: str = "branch") -> None:
    handler = _handlers.get(role)
    if handler is None:
        log.warning("no handler registered for %s builds; build %s stays pending", role, build_pk)
        return
    try:
        handler(build_pk)
    except Exception:
        # The build is committed as pending; the sweep will queue it. Never fail the upload here.
        log.exception("could not hand %s build %s on; the sweep will retry", role, build_pk)
