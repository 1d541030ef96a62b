"""ORM-built alert groups and channels, and local servers that record what notifications send."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

BASE_URL = "https://perf.example"
T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


@dataclass
class Scene:
    app: object
    previous_build: object
    build: object
    team: object
    group: object
    regression: object
    improvement: object
    withdrawn: object


def make_scene(*, team_name: str = "startup-perf") -> Scene:
    from alerts.models import Alert, AlertGroup, Team
    from metrics.models import App, Build, Metric, Series

    app = App.objects.create(name="com.example.shop")
    metrics = {
        "startup.cold.ttid": Metric.objects.create(app=app, name="startup.cold.ttid", kind="time", unit="ms"),
        "size.apk.download": Metric.objects.create(app=app, name="size.apk.download", kind="size", unit="bytes"),
        "crash.rate": Metric.objects.create(app=app, name="crash.rate", kind="rate", unit="ratio"),
    }
    series = {
        name: Series.objects.create(
            signature=Series.signature_of(app.name, "android", "main", "pixel-6", name),
            app=app, platform="android", branch="main", device="pixel-6", metric=metric,
        )
        for name, metric in metrics.items()
    }
    previous_build = Build.objects.create(
        app=app, platform="android", branch="main", ext_id="4710", commit="a1b2c3d", parent_commit="9f8e7d6",
        timestamp=T0, analysis="done",
    )
    build = Build.objects.create(
        app=app, platform="android", branch="main", ext_id="4711", commit="e4f5a6b", parent_commit="c0ffee1",
        timestamp=T0 + timedelta(minutes=30), analysis="done",
    )
    team = Team.objects.create(name=team_name)
    group = AlertGroup.objects.create(build=build, team=team)

    def alert(name, direction, before, after, detection="confirmed"):
        return Alert.objects.create(
            series=series[name], build=build, previous_build=previous_build, first_build=build,
            last_build=build, detected_build=build, group=group, team=team, direction=direction,
            rel_change=(after - before) / before, abs_change=after - before, before=before, after=after,
            p_value=0.0004, test="mann-whitney", sensitivity=0.02, detection=detection,
        )

    return Scene(
        app=app, previous_build=previous_build, build=build, team=team, group=group,
        regression=alert("startup.cold.ttid", "regression", 400.0, 480.0),
        improvement=alert("size.apk.download", "improvement", 31457280.0, 30408704.0),
        withdrawn=alert("crash.rate", "regression", 0.00012, 0.00019, detection="withdrawn"),
    )


def add_channel(team, kind: str, **config):
    from alerts.models import Channel

    key = config.get("url") or ",".join(sorted(config.get("to", []))) or kind
    return Channel.objects.create(team=team, kind=kind, key=key, config=config)


def make_retry_due(model, pk: int) -> None:
    """Move a planned retry's time (a Delivery's or CodeHostPost's `next_attempt`) into the past, as if its
    backoff had run out: an attempt made earlier sends nothing."""
    model.objects.filter(pk=pk, next_attempt__isnull=False).update(
        next_attempt=datetime.now(UTC) - timedelta(seconds=1))


def delivery_for(channel):
    """Plan the deliveries of the channel's team's group and return the one for `channel`."""
    from alerts.models import AlertGroup, Delivery
    from alerts.notify.service import plan_deliveries

    group = AlertGroup.objects.get(team=channel.team)
    plan_deliveries(group.pk)
    return Delivery.objects.get(group=group, channel=channel)


@pytest.fixture
def scene(db, settings):
    settings.PERF_BASE_URL = BASE_URL
    settings.PERF_NOTIFY_TIMEOUT_SECONDS = 2
    return make_scene()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


# --- A recording HTTP server on 127.0.0.1 ----------------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


class RecordingServer:
    """Answers each request with the next queued Reply (the last one repeats) and records it."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.replies: list[Reply] = [Reply()]
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with owner._lock:
                    owner.requests.append(Received("POST", self.path, dict(self.headers.items()), body))
                    reply = owner.replies.pop(0) if len(owner.replies) > 1 else owner.replies[0]
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, format, *args):  # noqa: A002 - quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def reply(self, *replies: Reply) -> None:
        self.replies = list(replies)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def http_server():
    server = RecordingServer()
    yield server
    server.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
