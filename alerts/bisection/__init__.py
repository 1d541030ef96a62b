"""Automatic bisection and confirmation of alerts with runs requested from an app's CI (docs/API.md section 7).

* :mod:`.ranges` — the culprit range of an alert as commits (from ``Build.commits``).
* :mod:`.engine` — the state machine: start, answers, expiry, budgets, the notification hold.
* :mod:`.ci` — the signed ``runs.requested`` POST to the app's CI endpoint, every attempt recorded.
* :mod:`.demo` — the demo's bisected and not-reproduced alerts.

The statistics are pure, in :mod:`alerts.detection.bisect`.
"""
