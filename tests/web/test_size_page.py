"""The size breakdown page: a treemap of the build's size.* metrics with owners, changes and links."""

from __future__ import annotations

import re

import pytest

from metrics.models import Build, Measurement, Metric, Series
from tests.web.conftest import SHIFT_AT, login

PARTS = {"size.module.map.code": (400_000, 400_000), "size.module.map.assets.tiles": (300_000, 360_000),
         "size.module.map.assets.fonts": (100_000, 100_000), "size.module.feed": (500_000, 450_000),
         "size.dex.methods": (61_000, 61_500)}


@pytest.fixture
def sized(world):
    from alerts.models import OwnerRule, Team

    maps = Team.objects.create(name="maps")
    OwnerRule.objects.create(position=10, metric="size.module.map.*", team=maps)
    prev, culprit = world.builds[SHIFT_AT - 1], world.builds[SHIFT_AT]
    for name, (before, after) in PARTS.items():
        m = Metric.objects.create(app=world.app, name=name, kind="size", unit="count" if "methods" in name else "bytes")
        s = Series.objects.create(signature=Series.signature_of(world.app.name, "android", "main", "pixel-6", name),
                                  app=world.app, platform="android", branch="main", device="pixel-6", metric=m)
        for b, v in ((prev, before), (culprit, after)):
            Measurement.objects.create(series=s, build=b, build_time=b.timestamp, value=float(v))
    return world


def nodes(html: str) -> dict[str, str]:
    """data-size-node -> data-owner."""
    return dict(re.findall(r'data-size-node="([^"]+)" data-owner="([^"]+)"', html))


def test_it_nests_every_byte_metric_with_its_owner(client, sized):
    login(client, sized.member)
    r = client.get(f"/builds/com.example.shop/android/b{SHIFT_AT}/size/")
    assert r.status_code == 200
    html = r.content.decode()
    found = nodes(html)
    assert found == {
        "size.apk": "app-size", "size.apk.download": "app-size", "size.module": "several teams",
        "size.module.map": "maps", "size.module.map.code": "maps", "size.module.map.assets": "maps",
        "size.module.map.assets.tiles": "maps", "size.module.map.assets.fonts": "maps", "size.module.feed": "app-size",
    }
    assert r.context["against"].ext_id == f"b{SHIFT_AT - 1}"
    # Biggest changes first: tiles +60 kB, feed −50 kB, then the apk's +1 kB.
    names = [row["name"] for row in r.context["changes"]]
    assert names[:3] == ["size.module.map.assets.tiles", "size.module.feed", "size.apk.download"]
    assert "size.dex.methods: 61500 count" in html  # other units listed, not drawn


def test_it_colours_by_the_build_chosen_to_compare_against(client, sized):
    login(client, sized.member)
    same = client.get(f"/builds/com.example.shop/android/b{SHIFT_AT}/size/?against=b{SHIFT_AT}").context
    assert same["changes"] == []
    assert same["against"] is not None
    unknown = client.get(f"/builds/com.example.shop/android/b{SHIFT_AT}/size/?against=nope")
    assert "no build 'nope'" in unknown.context["error"] and 'role="alert"' in unknown.content.decode() and unknown.context["against"].ext_id == f"b{SHIFT_AT - 1}"
    tiles = next(n for n in client.get(f"/builds/com.example.shop/android/b{SHIFT_AT}/size/").context["nodes"]
                 if n["name"] == "size.module.map.assets.tiles")
    assert tiles["change"] == "+20.00%" and "hsl(4 " in tiles["style"]


def test_it_compares_a_pull_request_build_with_its_base(client, sized):
    base = sized.builds[SHIFT_AT - 5]
    Build.objects.create(app=sized.app, platform="android", branch="pr/7", ext_id="pr-7", commit="f" * 40,
                              timestamp=sized.builds[-1].timestamp, role="pr", base_commit=base.commit,
                              base_branch="main")
    login(client, sized.member)
    assert client.get("/builds/com.example.shop/android/pr-7/size/").context["against"].pk == base.pk


def test_it_is_linked_from_the_build_page_and_size_alerts(client, sized):
    login(client, sized.member)
    size_url = f"/builds/com.example.shop/android/b{SHIFT_AT}/size/"
    assert size_url in client.get(f"/builds/com.example.shop/android/b{SHIFT_AT}/").content.decode()
    assert size_url in client.get(f"/alerts/{sized.groups['size'].pk}/").content.decode()
    login(client, sized.staff)
    assert size_url in client.get("/teams/app-size/").content.decode()
