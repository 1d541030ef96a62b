"""GitHub REST calls for a check: one commit status per PR build, one sticky PR comment per PR and device set.

The comment is found again by a hidden marker `<!-- perfplatform:check:{app}:{platform}:{branch} -->` in its
body (listing the PR's comments), then PATCHed; without it one is POSTed. The pull-request number comes from
a branch named `pr/<number>` (or `pull/<number>`, `<anything>/pr-<number>`); other branches get only the
commit status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from alerts.codehost.http import send

PR_BRANCH_RE = re.compile(r"(?:^|/)(?:pr|pull|pulls)[/-](\d+)$")
STATE = {"pass": "success", "inconclusive": "success", "no_baseline": "success", "fail": "failure",
         "pending": "pending"}
CONTEXT = "perfplatform/check"


@dataclass(frozen=True)
class Target:
    api_url: str
    repo: str
    token: str


def pr_number(branch: str) -> int | None:
    m = PR_BRANCH_RE.search(branch)
    return int(m.group(1)) if m else None


def marker(app: str, platform: str, branch: str) -> str:
    return f"<!-- perfplatform:check:{app}:{platform}:{branch} -->"


def _headers(t: Target) -> dict[str, str]:
    return {"Authorization": f"Bearer {t.token}", "X-GitHub-Api-Version": "2022-11-28"}


def post_status(t: Target, sha: str, status: str, description: str, url: str) -> None:
    send("POST", f"{t.api_url}/repos/{t.repo}/statuses/{sha}", headers=_headers(t),
         body={"state": STATE.get(status, "error"), "target_url": url, "description": description[:140],
               "context": CONTEXT})


def find_comment(t: Target, number: int, mark: str) -> int | None:
    page = 1
    while page <= 10:
        r = send("GET", f"{t.api_url}/repos/{t.repo}/issues/{number}/comments?per_page=100&page={page}",
                 headers=_headers(t))
        items = r.json() or []
        for c in items:
            if mark in (c.get("body") or ""):
                return int(c["id"])
        if len(items) < 100:
            return None
        page += 1
    return None


def upsert_comment(t: Target, number: int, mark: str, body: str, known_id: int | None) -> int:
    text = f"{mark}\n{body}"
    cid = known_id or find_comment(t, number, mark)
    if cid is not None:
        send("PATCH", f"{t.api_url}/repos/{t.repo}/issues/comments/{cid}", headers=_headers(t), body={"body": text})
        return cid
    r = send("POST", f"{t.api_url}/repos/{t.repo}/issues/{number}/comments", headers=_headers(t), body={"body": text})
    return int(r.json()["id"])
