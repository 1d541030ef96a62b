"""`perfplatform upload`: send CI output files to the server. Standard library only.

Exit codes (docs/API.md section 3): 0 every file stored, 2 the server rejected an input (its errors are
printed), 1 the server could not be reached (or kept failing) after retries.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TextIO

QUERY_FIELDS = ("app", "platform", "branch", "build", "commit", "parent_commit", "timestamp", "device", "version",
                "requested")
RETRYABLE_STATUS = {429, 502, 503, 504}
PERFHERDER_MARK = "PERFHERDER_DATA:"

EXIT_OK, EXIT_UNREACHABLE, EXIT_REJECTED = 0, 1, 2


class RedirectRefused(urllib.error.URLError):
    """The server answered with a redirect; the token is never re-sent to wherever it points."""

    def __init__(self, status: int, location: str):
        self.status, self.location = status, location
        super().__init__(f"redirected ({status}) to {location}")


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    # urllib would follow a 301/302 and re-send `Authorization: Bearer` to any host the server names.
    # A CI token must reach only the origin the user configured, so no redirect is followed.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise RedirectRefused(code, newurl)


OPENER = urllib.request.build_opener(_RefuseRedirects)


def redirect_message(url: str, exc: RedirectRefused) -> str:
    here = urllib.parse.urlsplit(url)
    there = urllib.parse.urlsplit(urllib.parse.urljoin(url, exc.location))
    same = (here.scheme, here.hostname, here.port) == (there.scheme, there.hostname, there.port)
    where = "another path on the same server" if same else f"another origin ({there.scheme}://{there.netloc})"
    return (f"the server redirected ({exc.status}) to {exc.location}, {where}; the token is not sent there. "
            f"Point --server (or PERF_SERVER) at the final address.")


@dataclass
class Outcome:
    code: int
    message: str
    status: int = 0


def bodies_from_file(path: str) -> list[tuple[bytes, str | None]]:
    """The request bodies in one file: the file itself if it is JSON, else each PERFHERDER_DATA payload
    of a CI log (as Firefox/Perfherder jobs print them)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        json.loads(raw)
        return [(raw, None)]
    except (ValueError, UnicodeDecodeError):
        pass
    found = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        idx = line.find(PERFHERDER_MARK)
        if idx >= 0:
            payload = line[idx + len(PERFHERDER_MARK):].strip()
            found.append((payload.encode("utf-8"), "perfherder"))
    if found:
        return found
    return [(raw, None)]  # let the server say what is wrong with it (415)


def _retry_after(headers, default: float) -> float:
    value = headers.get("Retry-After") if headers else None
    try:
        return min(60.0, max(0.0, float(value))) if value is not None else default
    except ValueError:
        return default


def post(url: str, body: bytes, token: str, *, retries: int, backoff: float, timeout: float, err: TextIO) -> Outcome:
    request = urllib.request.Request(
        url, data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "User-Agent": "perfplatform-upload/1"},
    )
    delay = backoff
    last = "no attempt made"
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(delay)
            delay = min(delay * 2, 60.0)
        try:
            with OPENER.open(request, timeout=timeout) as resp:
                return Outcome(EXIT_OK, resp.read().decode("utf-8", errors="replace"), resp.status)
        except RedirectRefused as exc:
            return Outcome(EXIT_UNREACHABLE, redirect_message(url, exc))
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", errors="replace")
            if exc.code in RETRYABLE_STATUS or exc.code >= 500:
                last = f"HTTP {exc.code}: {text[:500]}"
                delay = _retry_after(exc.headers, delay)
                if attempt < retries:
                    print(f"  server answered {exc.code}; retrying ({attempt + 1}/{retries})", file=err)
                continue
            return Outcome(EXIT_REJECTED, f"HTTP {exc.code}: {_format_errors(text)}")
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            last = f"cannot reach {url}: {reason}"
            if attempt < retries:
                print(f"  {last}; retrying ({attempt + 1}/{retries})", file=err)
    return Outcome(EXIT_UNREACHABLE, last)


def _format_errors(text: str) -> str:
    try:
        doc = json.loads(text)
        items = doc.get("errors") or []
        lines = [f"{e.get('path') or '(body)'}: {e.get('message')}" for e in items]
        return "\n    ".join(lines) if lines else text
    except (ValueError, AttributeError):
        return text[:2000]


def run(args, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    server = args.server or os.environ.get("PERF_SERVER")
    token = args.token or os.environ.get("PERF_TOKEN")
    if not server:
        print("error: no server: pass --server URL or set PERF_SERVER", file=err)
        return EXIT_REJECTED
    if not token:
        print("error: no token: pass --token TOKEN or set PERF_TOKEN", file=err)
        return EXIT_REJECTED
    params = {name: getattr(args, name) for name in QUERY_FIELDS if getattr(args, name, None)}
    worst = EXIT_OK
    for path in args.files:
        try:
            bodies = bodies_from_file(path)
        except OSError as exc:
            print(f"error: cannot read {path}: {exc.strerror}", file=err)
            worst = EXIT_REJECTED
            continue
        for i, (body, fmt) in enumerate(bodies):
            query = dict(params)
            if args.format or fmt:
                query["format"] = args.format or fmt
            url = server.rstrip("/") + "/api/v1/uploads"
            if query:
                url += "?" + urllib.parse.urlencode(query)
            label = path if len(bodies) == 1 else f"{path} (payload {i + 1}/{len(bodies)})"
            outcome = post(url, body, token, retries=args.retries, backoff=args.backoff, timeout=args.timeout, err=err)
            if outcome.code == EXIT_OK:
                try:
                    doc = json.loads(outcome.message)
                    what = "stored" if outcome.status == 201 else "unchanged (already stored)"
                    print(f"{label}: {what}: build {doc['build']['id']}, {doc['measurements']} measurements, "
                          f"analysis {doc['analysis']}, {doc['build']['url']}", file=out)
                except (ValueError, KeyError, TypeError):
                    print(f"{label}: stored", file=out)
            else:
                print(f"{label}: {'rejected' if outcome.code == EXIT_REJECTED else 'failed'}\n    {outcome.message}", file=err)
                worst = EXIT_REJECTED if EXIT_REJECTED in (worst, outcome.code) else max(worst, outcome.code)
    return worst
