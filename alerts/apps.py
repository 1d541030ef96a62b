from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts import premerge
        from alerts.dispatch import branch_build_committed, queue_requested_build
        from metrics import hooks

        hooks.register_build_committed(branch_build_committed)
        hooks.register_build_committed(premerge.request_check, role="pr")
        hooks.register_build_committed(queue_requested_build, role="requested")
