from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts import premerge
        from alerts.dispatch import queue_analysis, queue_requested_build
        from metrics import hooks

        def branch_committed(build_pk: int) -> None:
            try:
                # Cheap (one indexed query): checks waiting for this build as their merge-base.
                premerge.wake_waiting(build_pk)
            except Exception:  # the sweep settles waiting checks anyway; analysis must still be queued
                import logging

                logging.getLogger(__name__).exception("could not wake checks waiting for build %s", build_pk)
            queue_analysis(build_pk)

        hooks.register_build_committed(branch_committed)
        hooks.register_build_committed(premerge.request_check, role="pr")
        hooks.register_build_committed(queue_requested_build, role="requested")
