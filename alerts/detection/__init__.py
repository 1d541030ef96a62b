"""Change-point detection engine: pure numpy/scipy, no Django, Celery or I/O.

Modules, one job each:

* :mod:`.model` — ``Point``, ``DetectorConfig``, ``ChangePoint``, ``Event``.
* :mod:`.statistics` — per-kind statistics: robust noise (between-build variance, AR(1)), rate dispersion,
  the two-segment tests and the calibrated critical values.
* :mod:`.scan` — search strategy: locating the most likely culprit in a segment (cumulative-sum GLR scan).
* :mod:`.evaluate` — the pure decisions (scan for a new shift, review an open alert) shared by both modes.
* :mod:`.online` — ``OnlineDetector`` (streaming, resumable) and ``detect_online``.
* :mod:`.hindsight` — ``detect_hindsight``.
* :mod:`.sensitivity` — ``sensitivity``: smallest detectable shift within N builds.
"""

from .hindsight import detect_hindsight
from .model import DEFAULT, KINDS, ChangePoint, DetectorConfig, Event, Point
from .online import OnlineDetector, detect_online
from .sensitivity import sensitivity

__all__ = [
    "DEFAULT",
    "KINDS",
    "ChangePoint",
    "DetectorConfig",
    "Event",
    "OnlineDetector",
    "Point",
    "detect_hindsight",
    "detect_online",
    "sensitivity",
]
