"""The `perfplatform` command: `upload` and `check` (standard library only) and `detect`."""

from __future__ import annotations

import argparse
import sys

from perfplatform import check_client, upload_client


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="perfplatform", description="perfplatform command line")
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("upload", help="upload CI output files to a perfplatform server")
    up.add_argument("files", nargs="+", metavar="FILE")
    up.add_argument("--server", help="server URL (default: $PERF_SERVER)")
    up.add_argument("--token", help="upload token (default: $PERF_TOKEN)")
    up.add_argument("--format", choices=["native", "macrobenchmark", "perfherder", "google-benchmark", "bmf"],
                    help="body format (default: detected by the server)")
    for name in upload_client.QUERY_FIELDS:
        up.add_argument(f"--{name.replace('_', '-')}", dest=name, help=f"build field '{name}' for formats that lack it")
    up.add_argument("--retries", type=int, default=5, help="retries when the server is unreachable or answers 5xx/429")
    up.add_argument("--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles)")
    up.add_argument("--timeout", type=float, default=30.0, help="seconds per request")

    chk = sub.add_parser("check", help="a pull-request build's pre-merge check: Markdown summary and exit code")
    chk.add_argument("--app", required=True)
    chk.add_argument("--platform", required=True)
    chk.add_argument("--build", required=True, help="the pull-request build's id")
    chk.add_argument("--server", help="server URL (default: $PERF_SERVER)")
    chk.add_argument("--token", help="token (default: $PERF_TOKEN)")
    chk.add_argument("--wait", type=float, default=0.0, help="seconds to wait while the check is pending")
    chk.add_argument("--fail-on", choices=["regression", "never"], default="regression",
                     help="exit 3 on a failed check (default) or never")
    chk.add_argument("--markdown", metavar="FILE", help="also append the Markdown summary to FILE")
    chk.add_argument("--retries", type=int, default=5, help="retries when the server is unreachable or answers 5xx/429")
    chk.add_argument("--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles)")
    chk.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    chk.add_argument("--poll", type=float, default=2.0, help="seconds between reads while pending")

    det = sub.add_parser("detect", help="run the platform's detector over a series JSONL file")
    det.add_argument("series", metavar="SERIES.jsonl")
    det.add_argument("--online", action="store_true", help="feed builds one at a time, as uploads arrive")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "upload":
        return upload_client.run(args)
    if args.command == "check":
        return check_client.run(args)
    # Imported here so that `upload` keeps to the standard library.
    from perfplatform.detect_cmd import run as detect_run

    return detect_run(args.series, online=args.online, out=sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
