"""Pages that need alerts: team dashboards, the overview, alert groups and the `/` dispatch."""
