"""Response shapes of the metrics API, for validation and the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from ninja import Schema
from pydantic import Field, model_serializer

from metrics.pagination import MAX_LIMIT


class FieldErrorOut(Schema):
    path: str
    message: str


class ErrorsOut(Schema):
    errors: list[FieldErrorOut]


class BuildRef(Schema):
    id: str
    url: str


class UploadOut(Schema):
    build: BuildRef
    measurements: int
    analysis: str


class MeasurementOut(Schema):
    metric: str
    kind: str
    unit: str
    lower_is_better: bool
    device: str
    branch: str
    series: int
    value: float
    samples: list[float] | None = None
    count: int | None = None
    total: int | None = None


class BuildOut(Schema):
    id: str
    app: str
    platform: str
    branch: str
    commit: str
    parent_commit: str
    version: str
    timestamp: datetime
    role: str = Field(description="branch, pr (a pull-request build) or requested (a run the platform asked for)")
    base_commit: str = ""
    base_branch: str = ""
    requested: str = ""
    commits: list[str] = []
    url: str
    analysis: str
    measurements: list[MeasurementOut]


class SeriesOut(Schema):
    id: int
    app: str
    platform: str
    branch: str
    device: str
    metric: str
    kind: str
    unit: str
    lower_is_better: bool
    last_build_time: datetime | None
    points_url: str
    url: str


class SeriesPage(Schema):
    results: list[SeriesOut]
    next: str | None


#: PointOut's fields a build may not have uploaded.
POINT_OPTIONAL = frozenset({"samples", "count", "total"})


class PointOut(Schema):
    """One point; ``samples``, ``count`` and ``total`` are left out when the build did not upload them."""

    build: str
    commit: str
    timestamp: datetime
    value: float
    samples: list[float] | None = None
    count: int | None = None
    total: int | None = None

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler):
        # Only this shape's optional fields: a route-wide exclude_none would also drop the enclosing series'
        # last_build_time, which is required (null until the series' first build is analysed).
        return {k: v for k, v in handler(self).items() if v is not None or k not in POINT_OPTIONAL}


class PointsOut(Schema):
    series: SeriesOut
    points: list[PointOut]
    next: str | None = None


# Constrained parameter types, so the OpenAPI document states what the API accepts and bad values get
# a 400 with the parameter's path instead of reaching the database (PostgreSQL rejects NUL in text
# and integers beyond bigint).
MAX_DB_ID = 2**63 - 1
DbId = Annotated[int, Field(ge=1, le=MAX_DB_ID)]
QueryText = Annotated[str, Field(max_length=200, pattern=r"^[^\x00]*$")]
PageLimit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
PageOffset = Annotated[int, Field(ge=0, le=1_000_000)]
PointsLimit = Annotated[int, Field(ge=1, le=10_000)]
RFC3339 = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
DateTimeText = Annotated[str, Field(pattern=RFC3339, json_schema_extra={"format": "date-time"})]


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 date-time (already matched by `RFC3339`) as an aware UTC datetime.

    Raises ApiError(400) for impossible dates (month 13, day 0). Year 0000, valid in RFC 3339 but not
    in Python, is taken as the earliest time; offsets beyond what PostgreSQL accepts are folded into
    UTC here, before any query sees them.
    """
    from datetime import UTC

    from metrics.errors import ApiError

    normalized = text.upper().replace("Z", "+00:00")
    try:
        value = datetime.fromisoformat(normalized)
    except ValueError:
        if text.startswith("0000-"):
            try:
                datetime.fromisoformat("0001" + normalized[4:])
            except ValueError:
                raise ApiError(400, "before", f"not a date-time: {text!r}") from None
            return datetime.min.replace(tzinfo=UTC)
        raise ApiError(400, "before", f"not a date-time: {text!r}") from None
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return (datetime.min if value.year < 5000 else datetime.max).replace(tzinfo=UTC)
