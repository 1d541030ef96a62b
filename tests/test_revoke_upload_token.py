"""manage.py revoke_upload_token and list_upload_tokens."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from metrics.models import App, UploadToken
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def test_it_revokes_a_token_so_it_gets_401(upload, app_token):
    _, raw = app_token
    assert upload(native_body(1)).status_code == 201
    out = StringIO()
    call_command("revoke_upload_token", raw, stdout=out)
    assert "revoked token" in out.getvalue()
    assert UploadToken.objects.get().revoked
    assert upload(native_body(2)).status_code == 401


def test_it_revokes_by_id_and_refuses_an_unknown_token(app_token):
    token = UploadToken.objects.get()
    call_command("revoke_upload_token", "--id", str(token.pk), stdout=StringIO())
    assert UploadToken.objects.get().revoked
    with pytest.raises(CommandError, match="no such token"):
        call_command("revoke_upload_token", "pp_not-a-token", stdout=StringIO())
    with pytest.raises(CommandError, match="exactly one"):
        call_command("revoke_upload_token", stdout=StringIO())


def test_it_lists_tokens_with_their_use_but_never_the_secret(upload, app_token):
    _, raw = app_token
    other, other_raw = UploadToken.issue(App.objects.create(name="com.example.other"), label="nightly")
    upload(native_body(1))
    out = StringIO()
    call_command("list_upload_tokens", stdout=out)
    text = out.getvalue()
    assert raw not in text and other_raw not in text
    assert raw[10:] not in text and UploadToken.objects.get(pk=other.pk).digest not in text
    lines = text.strip().splitlines()
    assert len(lines) == 3
    shop = next(line for line in lines if "com.example.shop" in line).split("\t")
    assert shop[5] != "never" and shop[6] == "no"
    assert "nightly" in next(line for line in lines if "com.example.other" in line)
