"""Notification URLs may not reach the server's own or internal addresses unless allowed (SSRF)."""

import pytest

from alerts.notify.destinations import check_destination
from alerts.notify.transports.base import PermanentError, post


@pytest.fixture(autouse=True)
def _production_default(settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = False
    settings.PERF_WEBHOOK_ALLOWED_HOSTS = []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "10.1.2.3", "192.168.0.10", "172.16.5.5",
                                  "169.254.169.254", "::1", "0.0.0.0", "::ffff:127.0.0.1"])
def test_it_refuses_internal_destinations(host):
    with pytest.raises(PermanentError, match="internal address"):
        check_destination(host, 443)


def test_it_refuses_before_connecting():
    with pytest.raises(PermanentError, match="PERF_WEBHOOK_ALLOW_PRIVATE"):
        post("http://127.0.0.1:9/hook", b"{}", {})


def test_it_allows_public_addresses():
    check_destination("93.184.216.34", 443)
    check_destination("2606:4700::1111", 443)


def test_it_allows_configured_hosts_and_private_networks(settings):
    settings.PERF_WEBHOOK_ALLOWED_HOSTS = ["localhost"]
    check_destination("localhost", 80)
    with pytest.raises(PermanentError):
        check_destination("10.0.0.1", 80)
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    check_destination("10.0.0.1", 80)
