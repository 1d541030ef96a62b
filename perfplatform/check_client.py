"""`perfplatform check`: read a pull-request build's pre-merge check and turn it into an exit code.

Standard library only. Exit codes (CONTRACT section 6): 0 pass, inconclusive or no_baseline (or fail with
`--fail-on never`); 3 fail; 2 bad input or an unknown build; 1 the server could not be reached after retries,
or the check is still pending after `--wait` seconds. The Markdown summary is printed, appended to
`$GITHUB_STEP_SUMMARY` when set, and written to `--markdown FILE` when given.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import TextIO

EXIT_OK, EXIT_UNREACHABLE, EXIT_REJECTED, EXIT_FAIL = 0, 1, 2, 3
RETRYABLE = {429, 502, 503, 504}


def _get(url: str, token: str, timeout: float) -> tuple[int, dict | None]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json",
                                               "User-Agent": "perfplatform-check/1"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read() or b"null")
        except ValueError:
            return exc.code, None


def fetch(url: str, token: str, *, retries: int, backoff: float, timeout: float, err: TextIO) -> tuple[int, dict | None]:
    """GET with retries on connection errors and 5xx/429; (0, None) when never reached."""
    delay = backoff
    last: tuple[int, dict | None] = (0, None)
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
        try:
            status, doc = _get(url, token, timeout)
        except (urllib.error.URLError, OSError) as exc:
            print(f"  cannot reach {url}: {getattr(exc, 'reason', exc)}", file=err)
            last = (0, None)
            continue
        if status in RETRYABLE or status >= 500:
            print(f"  server answered {status}; retrying", file=err)
            last = (status, doc)
            continue
        return status, doc
    return (0, None) if last[0] == 0 else (-last[0], last[1])


def _errors(doc: dict | None) -> str:
    items = (doc or {}).get("errors") or []
    return "; ".join(f"{e.get('path') or '(request)'}: {e.get('message')}" for e in items) or "no detail"


def run(args, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    server = args.server or os.environ.get("PERF_SERVER")
    token = args.token or os.environ.get("PERF_TOKEN")
    if not server or not token:
        print("error: pass --server and --token (or set PERF_SERVER and PERF_TOKEN)", file=err)
        return EXIT_REJECTED
    path = "/".join(urllib.parse.quote(x, safe="") for x in (args.app, args.platform, args.build))
    url = f"{server.rstrip('/')}/api/v1/checks/{path}"
    deadline = time.monotonic() + max(0.0, args.wait)
    while True:
        status, doc = fetch(url, token, retries=args.retries, backoff=args.backoff, timeout=args.timeout, err=err)
        if status <= 0:
            print(f"error: could not read the check from {url} after {args.retries} retries", file=err)
            return EXIT_UNREACHABLE
        if status != 200 or not isinstance(doc, dict):
            print(f"error: HTTP {status}: {_errors(doc)}", file=err)
            return EXIT_REJECTED if 400 <= status < 500 else EXIT_UNREACHABLE
        if doc.get("status") != "pending" or time.monotonic() >= deadline:
            break
        time.sleep(min(args.poll, max(0.1, deadline - time.monotonic())))
    markdown = doc.get("markdown") or f"perfplatform check: {doc.get('status')}\n"
    print(markdown, file=out)
    for target in filter(None, (os.environ.get("GITHUB_STEP_SUMMARY"), args.markdown)):
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(markdown + "\n")
        except OSError as exc:
            print(f"warning: cannot write {target}: {exc.strerror}", file=err)
    state = doc.get("status")
    if state == "pending":
        print(f"error: the check is still pending after {args.wait:g} s", file=err)
        return EXIT_UNREACHABLE
    if state == "fail" and args.fail_on == "regression":
        return EXIT_FAIL
    return EXIT_OK
