"""Pure parsers from CI output formats to one upload model.

No Django, no I/O: each module turns already-decoded JSON into a :class:`ParsedUpload` or raises
:class:`UploadInvalid` with field paths. `metrics.ingest` does the storing.
"""

from metrics.formats.base import (
    KINDS,
    METRIC_NAME_RE,
    BuildInfo,
    FieldError,
    ParsedMetric,
    ParsedUpload,
    UploadInvalid,
)
from metrics.formats.registry import FORMATS, detect_format, parse

__all__ = [
    "FORMATS",
    "KINDS",
    "METRIC_NAME_RE",
    "BuildInfo",
    "FieldError",
    "ParsedMetric",
    "ParsedUpload",
    "UploadInvalid",
    "detect_format",
    "parse",
]
