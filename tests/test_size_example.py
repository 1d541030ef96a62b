"""docs/examples/apk_size_to_metrics.py: an APK and a module breakdown become an upload the API accepts."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from metrics.formats.registry import parse
from metrics.treemap import build_tree

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "examples" / "apk_size_to_metrics.py"


def test_it_turns_an_apk_and_a_breakdown_into_a_native_upload(tmp_path):
    apk = tmp_path / "app.apk"
    with zipfile.ZipFile(apk, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("classes.dex", b"d" * 5000)
        zf.writestr("classes2.dex", b"e" * 3000)
        zf.writestr("lib/arm64-v8a/libmaps.so", bytes(range(256)) * 20)
        zf.writestr("res/drawable-xhdpi/a.png", b"p" * 800)
        zf.writestr("res/drawable/b.png", b"q" * 700)
        zf.writestr("assets/tiles/z1/t.bin", b"t" * 900)
        zf.writestr("resources.arsc", b"r" * 100)
    breakdown = tmp_path / "modules.json"
    breakdown.write_text(json.dumps({"module": {"feature_map": {"code": 341000, "assets": {"tiles": 203000}}}}))
    out = subprocess.run([sys.executable, str(SCRIPT), "--apk", str(apk), "--breakdown", str(breakdown),
                          "--app", "com.example.maps", "--platform", "android", "--branch", "main", "--build", "77",
                          "--commit", "abc123", "--timestamp", "2026-12-01T10:00:00Z"],
                         capture_output=True, text=True, check=True)
    body = json.loads(out.stdout)
    parsed = parse(body, "native")  # the platform's own parser accepts it
    sizes = {m.name: m.value for m in parsed.metrics}
    assert {"size.apk.contents.dex.classes", "size.apk.contents.dex.classes2", "size.apk.contents.res.drawable",
            "size.apk.contents.native.arm64-v8a.libmaps", "size.apk.contents.assets.tiles.z1",
            "size.apk.download", "size.apk.install", "size.module.feature_map.code",
            "size.module.feature_map.assets.tiles"} <= set(sizes)
    with zipfile.ZipFile(apk) as zf:
        drawables = sum(i.compress_size for i in zf.infolist() if i.filename.startswith("res/drawable"))
    assert sizes["size.apk.contents.res.drawable"] == drawables  # both densities in one node
    assert sizes["size.apk.install"] == 5000 + 3000 + 5120 + 800 + 700 + 900 + 100
    contents = build_tree(sizes, {}, root="size.apk.contents")
    assert contents.value < sizes["size.apk.download"]  # compressed entries fit in the file


def test_it_refuses_a_breakdown_that_is_not_bytes(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"module": {"x": "big"}}))
    r = subprocess.run([sys.executable, str(SCRIPT), "--breakdown", str(bad), "--app", "a", "--platform", "p",
                        "--branch", "b", "--build", "1"], capture_output=True, text=True)
    assert r.returncode != 0 and "size.module.x: expected bytes" in r.stderr
