"""GET /api/v1/schema: the OpenAPI document outside checks and fuzzers read."""

import pytest

pytestmark = pytest.mark.django_db


def test_it_serves_openapi_3_with_every_endpoint(client):
    r = client.get("/api/v1/schema")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"].startswith("3.")
    paths = set(doc["paths"])
    assert {"/api/v1/uploads", "/api/v1/builds/{app}/{platform}/{build}", "/api/v1/series",
            "/api/v1/series/{series_id}/points"} <= paths
    upload = doc["paths"]["/api/v1/uploads"]["post"]
    assert "application/json" in upload["requestBody"]["content"]
    assert {"201", "400", "401", "403", "413", "415"} <= set(upload["responses"])
    assert {p["name"] for p in upload["parameters"]} >= {"format", "app", "platform", "branch", "build", "commit",
                                                          "timestamp", "device"}
