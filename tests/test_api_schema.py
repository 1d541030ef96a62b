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


def test_it_documents_the_bearer_scheme_and_the_401_of_every_operation_that_needs_a_caller(client):
    doc = client.get("/api/v1/schema").json()
    schemes = doc["components"]["securitySchemes"]
    assert [v for v in schemes.values() if v.get("type") == "http" and v.get("scheme") == "bearer"]
    named = {name for ops in doc["paths"].values() for op in ops.values() for req in op.get("security", [])
             for name in req}
    assert named and named <= set(schemes), named - set(schemes)  # every scheme an operation names is defined
    secured = [(path, method, op) for path, ops in doc["paths"].items() for method, op in ops.items()
               if op.get("security")]
    assert {"/api/v1/alerts", "/api/v1/series", "/api/v1/series/{series_id}/points"} <= {p for p, _, _ in secured}
    assert all("401" in op["responses"] for _, _, op in secured), [(p, m) for p, m, op in secured
                                                                   if "401" not in op["responses"]]
    # and each answers it
    for path in ("/api/v1/alerts", "/api/v1/series"):
        assert client.get(path).status_code == 401
