"""Pages that need alerts: team dashboards, the overview, alert groups and the `/` dispatch."""

from alerts.web import annotations  # noqa: F401 - registers the alerts' annotations of metric pages
