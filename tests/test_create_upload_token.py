"""manage.py create_upload_token APP."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from metrics.models import App, UploadToken

pytestmark = pytest.mark.django_db


def test_it_prints_a_working_token_as_the_last_line_and_creates_the_app(client):
    out = StringIO()
    call_command("create_upload_token", "com.example.new", stdout=out, stderr=StringIO())
    raw = out.getvalue().strip().splitlines()[-1]
    assert raw.startswith("pp_")
    token = UploadToken.objects.get()
    assert token.app == App.objects.get(name="com.example.new")
    assert token.digest == UploadToken.digest_of(raw)
    r = client.get("/api/v1/series", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert r.status_code == 200


def test_it_issues_a_second_token_for_an_existing_app():
    call_command("create_upload_token", "a.b", stdout=StringIO(), stderr=StringIO())
    call_command("create_upload_token", "a.b", stdout=StringIO(), stderr=StringIO())
    assert App.objects.count() == 1
    assert UploadToken.objects.count() == 2


def test_it_rejects_a_bad_app_name():
    with pytest.raises(CommandError):
        call_command("create_upload_token", "bad name", stdout=StringIO(), stderr=StringIO())
