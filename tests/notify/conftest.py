import pytest

from tests.notify.fixtures import _no_proxy, http_server, scene  # noqa: F401 - fixtures


@pytest.fixture(autouse=True)
def _allow_local_receivers(settings):
    """These tests' receivers listen on 127.0.0.1, which production refuses by default."""
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
