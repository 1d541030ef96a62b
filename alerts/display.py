"""Numbers as the API and notifications give them: levels without the float noise of their computation."""

from __future__ import annotations

import math

#: Significant digits kept: far beyond any measurement, short of the last bits a log/exp round trip leaves
#: (a 20,000,000-byte level read back as 19999999.999999978).
DIGITS = 12


def level(x: float | None) -> float | None:
    """``x`` to ``DIGITS`` significant digits (None and non-finite values as they are)."""
    if x is None or not math.isfinite(x):
        return x
    return float(f"{x:.{DIGITS}g}")
