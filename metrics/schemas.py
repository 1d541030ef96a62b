"""Response shapes of the metrics API, for validation and the OpenAPI document."""

from __future__ import annotations

from datetime import datetime

from ninja import Schema


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


class PointOut(Schema):
    build: str
    commit: str
    timestamp: datetime
    value: float
    samples: list[float] | None = None
    count: int | None = None
    total: int | None = None


class PointsOut(Schema):
    series: SeriesOut
    points: list[PointOut]
