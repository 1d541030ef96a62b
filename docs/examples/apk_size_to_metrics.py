#!/usr/bin/env python3
"""Turn an app's size breakdown into a perfplatform native upload of `size.*` metrics.

Two inputs, standard library only (runs on any CI image with Python 3.11):

  --apk app-release.apk     read the APK (a zip) itself: every entry's compressed size, grouped by
                            what it is: dex code, resources by type, assets by folder, native
                            libraries by ABI (size.apk.dex.classes2, size.apk.res.drawable, ...),
                            plus size.apk.download (the file) and size.apk.install (uncompressed).
  --breakdown sizes.json    a nested JSON object of bytes, as a Gradle task or a link-map script
                            might write it: {"module": {"feature_map": {"code": 341000,
                            "assets": {"tiles": 203000}}}} -> size.module.feature_map.code, ...

Both may be given; the metrics are merged. The output is the body of POST /api/v1/uploads:

  python docs/examples/apk_size_to_metrics.py --apk app.apk --breakdown modules.json \\
      --app com.example.shop --platform android --branch main --build "$BUILD_ID" \\
      --commit "$GIT_SHA" > size-upload.json
  perfplatform upload size-upload.json --server "$PERF_SERVER" --token "$PERF_TOKEN"

Names keep to the platform's alphabet ([A-Za-z0-9._/:-]); a dot inside one segment (libfoo.so)
becomes "_" so that every dot is a level of the treemap.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

SAFE = re.compile(r"[^A-Za-z0-9_/:-]")


def segment(text: str) -> str:
    return SAFE.sub("_", text) or "_"


def apk_category(path: str, depth: int) -> tuple[str, ...]:
    """The treemap levels of one APK entry (below size.apk)."""
    parts = path.split("/")
    name = parts[-1]
    if len(parts) == 1 and name.endswith(".dex"):
        return ("dex", segment(name.removesuffix(".dex")))
    if parts[0] == "lib" and len(parts) >= 3:  # lib/<abi>/<library>.so
        return ("native", segment(parts[1]), segment(name.removesuffix(".so")))[:1 + depth]
    if parts[0] == "res" and len(parts) >= 2:  # res/<type>[-qualifiers]/<file>
        return ("res", segment(parts[1].split("-", 1)[0]))
    if parts[0] == "assets" and len(parts) >= 2:
        return ("assets", *(segment(p) for p in parts[1:-1][:depth])) if len(parts) > 2 else ("assets", "_root")
    if parts[0] == "META-INF":
        return ("meta_inf",)
    if name == "resources.arsc":
        return ("res", "table")
    return ("other",)


def from_apk(path: Path, depth: int) -> dict[str, int]:
    sizes: dict[str, int] = {}
    installed = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            installed += info.file_size
            key = ".".join(("size", "apk", "contents", *apk_category(info.filename, depth)))
            sizes[key] = sizes.get(key, 0) + info.compress_size
    sizes["size.apk.download"] = path.stat().st_size
    sizes["size.apk.install"] = installed
    return sizes


def from_breakdown(tree: dict, prefix: tuple[str, ...] = ("size",)) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, value in tree.items():
        name = (*prefix, segment(str(key)))
        if isinstance(value, dict):
            out.update(from_breakdown(value, name))
        elif isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            out[".".join(name)] = int(value)
        else:
            raise SystemExit(f"{'.'.join(name)}: expected bytes (a number >= 0) or an object, got {value!r}")
    return out


def upload_body(sizes: dict[str, int], args: argparse.Namespace) -> dict:
    build = {"id": args.build, "commit": args.commit,
             "timestamp": args.timestamp or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    body = {"app": args.app, "platform": args.platform, "branch": args.branch, "build": build,
            "metrics": [{"name": n, "kind": "size", "unit": "bytes", "value": v} for n, v in sorted(sizes.items())]}
    if args.device:
        body["device"] = args.device
    return body


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--apk", type=Path, help="the APK to measure")
    p.add_argument("--breakdown", type=Path, help="a nested JSON object of bytes")
    p.add_argument("--depth", type=int, default=2, help="folder levels kept below assets/ and lib/ (default 2)")
    for name in ("app", "platform", "branch", "build"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--commit", default="")
    p.add_argument("--timestamp", default="", help="ISO 8601; default now")
    p.add_argument("--device", default="")
    args = p.parse_args(argv)
    if not args.apk and not args.breakdown:
        p.error("give --apk, --breakdown or both")
    sizes: dict[str, int] = {}
    if args.apk:
        sizes.update(from_apk(args.apk, max(1, args.depth)))
    if args.breakdown:
        tree = json.loads(args.breakdown.read_text())
        if not isinstance(tree, dict):
            raise SystemExit(f"{args.breakdown}: expected a JSON object")
        sizes.update(from_breakdown(tree))
    json.dump(upload_body(sizes, args), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
