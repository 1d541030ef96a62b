"""The one seam between ingestion and analysis.

`metrics` must not import `alerts`; instead `alerts` registers a handler here at start-up
(AlertsConfig.ready). Ingestion calls `build_committed` after the upload's transaction commits.
The build row already says "analysis pending", so a handler that fails (broker down) loses nothing:
the periodic sweep finds the build again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

BuildHandler = Callable[[int], None]
_handler: BuildHandler | None = None


def register_build_committed(handler: BuildHandler) -> None:
    global _handler
    _handler = handler


def build_committed(build_pk: int) -> None:
    if _handler is None:
        log.warning("no analysis handler registered; build %s stays pending", build_pk)
        return
    try:
        _handler(build_pk)
    except Exception:
        # The build is committed as pending; the sweep will queue it. Never fail the upload here.
        log.exception("could not hand build %s to analysis; the sweep will retry", build_pk)
