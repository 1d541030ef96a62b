from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts import premerge, tasks  # noqa: F401  (tasks installs the queue publisher)
        from alerts.dispatch import branch_build_committed, queue_requested_build
        from metrics import hooks

        hooks.register_build_committed(branch_build_committed)
        hooks.register_build_committed(premerge.request_check, role="pr")
        from alerts.budget_checks import budget_rows

        premerge.register_extra_rows(budget_rows)
        hooks.register_build_committed(queue_requested_build, role="requested")
