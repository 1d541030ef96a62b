"""Fuzz the upload and read API from its own OpenAPI document (schemathesis) against a live gunicorn:
no 5xx and no response that violates the schema, over at least 2,000 generated requests."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.factories import history_bodies
from tests.live import ROOT, VENV_BIN, LiveEnv, free_port, upload_json, wait_http

pytestmark = pytest.mark.integration

MIN_REQUESTS = 2000


def test_it_survives_schema_driven_fuzzing(tmp_path):
    env = LiveEnv(tmp_path)
    env.env["PERF_UPLOAD_RATE_PER_MINUTE"] = "0"  # the fuzzer is one very busy CI job
    try:
        token = env.token("com.example.shop")
        port = free_port()
        access_log = tmp_path / "access.log"
        env.start(str(VENV_BIN / "gunicorn"), "perfplatform.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "3",
                  "--limit-request-line", "8190", "--access-logfile", str(access_log), log="gunicorn.log")
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/healthz")
        for body in history_bodies(45, shifts={"startup.cold.ttid": (30, 0.2)}):  # data for the read side
            assert upload_json(url, token, body)[0] == 201
        seeded = len(access_log.read_text().splitlines())

        run = subprocess.run(
            [str(VENV_BIN / "st"), "--config-file", str(Path(__file__).with_name("schemathesis.toml")), "run",
             f"{url}/api/v1/schema", "--header", f"Authorization: Bearer {token}",
             "--max-examples", "200", "--seed", "20261202", "--workers", "2", "--no-color",
             "--output-truncate", "true", "--request-timeout", "30"],
            cwd=tmp_path, env=env.env, capture_output=True, text=True, timeout=1200,
        )
        lines = access_log.read_text().splitlines()[seeded:]
        statuses = [int(m.group(1)) for line in lines if (m := re.search(r'" (\d{3}) ', line))]
        summary = run.stdout[-3000:]
        artifacts = ROOT / "tests" / "artifacts"
        artifacts.mkdir(exist_ok=True)
        (artifacts / "fuzz-summary.json").write_text(json.dumps(
            {"requests": len(statuses), "5xx": sum(s >= 500 for s in statuses), "exit": run.returncode,
             "by_status": {str(c): statuses.count(c) for c in sorted(set(statuses))}}, indent=1))
        (artifacts / "fuzz-schemathesis.txt").write_text(run.stdout)
        assert run.returncode == 0, summary
        assert len(statuses) >= MIN_REQUESTS, f"only {len(statuses)} requests\n{summary}"
        assert [s for s in statuses if s >= 500] == []
    finally:
        env.close()
