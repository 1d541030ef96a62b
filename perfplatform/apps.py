from django.apps import AppConfig


class PerfplatformConfig(AppConfig):
    name = "perfplatform"
    verbose_name = "perfplatform"

    def ready(self) -> None:
        # The Celery app is loaded here rather than in perfplatform/__init__.py so that the
        # `perfplatform upload` CLI, which lives in this package, imports only the standard library.
        from perfplatform import celery  # noqa: F401
