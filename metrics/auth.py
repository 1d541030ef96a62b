"""Authentication for the API: CI upload tokens (Bearer) and browser sessions."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone

from metrics.models import App, UploadToken


@dataclass(frozen=True)
class Caller:
    """Who is calling: a signed-in user (reads everything) or an app's upload token."""

    user_id: int | None = None
    is_staff: bool = False
    token: UploadToken | None = None

    @property
    def app(self) -> App | None:
        return self.token.app if self.token else None

    def can_read_app(self, app_name: str) -> bool:
        return self.token is None or self.token.app.name == app_name


def bearer_token(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def token_from_request(request: HttpRequest) -> UploadToken | None:
    raw = bearer_token(request)
    if raw is None or len(raw) > 200:
        return None
    digest = UploadToken.digest_of(raw)
    token = UploadToken.objects.select_related("app").filter(digest=digest, revoked=False).first()
    # The lookup is by a hash of a 256-bit secret; the constant-time compare guards the final check.
    if token is None or not hmac.compare_digest(token.digest, digest):
        return None
    return token


def touch(token: UploadToken) -> None:
    """Record use at most once a minute, so hot upload paths do not write on every call."""
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() > 60:
        UploadToken.objects.filter(pk=token.pk).update(last_used=now)


def caller_from_request(request: HttpRequest) -> Caller | None:
    token = token_from_request(request)
    if token is not None:
        return Caller(token=token)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return Caller(user_id=user.pk, is_staff=user.is_staff)
    return None
