from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts.dispatch import queue_analysis, queue_requested_build
        from metrics import hooks

        hooks.register_build_committed(queue_analysis)
        hooks.register_build_committed(queue_requested_build, role="requested")
