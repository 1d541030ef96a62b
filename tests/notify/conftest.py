from tests.notify.fixtures import _no_proxy, http_server, scene  # noqa: F401 - fixtures
