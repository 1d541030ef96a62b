"""Notifications of alert groups to a team's channels (webhook, Slack, email).

`payload` builds what is sent, `transports` knows how to reach each kind of channel, and `service`
plans one Delivery per channel and records every attempt. The Celery task lives in `alerts.tasks`.
"""
