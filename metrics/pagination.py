"""Offset pagination with an absolute `next` link, shared by every list endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.db.models import QuerySet
from django.http import HttpRequest

T = TypeVar("T")
MAX_LIMIT = 500


def paginate(request: HttpRequest, items: QuerySet[Any] | Sequence[T], *, limit: int, offset: int) -> tuple[list, str | None]:
    """Return one page and the URL of the next one (None on the last page).

    Fetches limit+1 rows to learn whether there is a next page without a COUNT(*) query.
    """
    page = list(items[offset : offset + limit + 1])
    if len(page) <= limit:
        return page, None
    params = request.GET.copy()
    params["offset"] = str(offset + limit)
    params["limit"] = str(limit)
    return page[:limit], request.build_absolute_uri(request.path) + "?" + urlencode(sorted(params.items()))
