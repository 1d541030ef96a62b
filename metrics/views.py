"""Metric pages live in metrics/web/; these names stay importable."""

from metrics.web.builds import build_page, builds_home
from metrics.web.compare import compare_page
from metrics.web.series import distribution_page, series_page

__all__ = ["build_page", "builds_home", "compare_page", "distribution_page", "series_page"]
