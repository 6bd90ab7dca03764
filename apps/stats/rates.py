"""Success rates with their uncertainty: the Wilson score interval, so that 3 resolved of 4
(75 %, 95 % interval 30–95 %) does not read like 750 of 1,000 (75 %, 72–78 %). Pure Python.

Wilson's interval rather than the textbook p ± z·√(p(1−p)/n): that one is zero-width at 0 of n
and n of n and runs past 0 and 1 for small n, which is exactly where a collection of shared
runs is (a model with a handful of runs)."""

from __future__ import annotations

import math

# The two-sided 95 % normal quantile (scipy.stats.norm.ppf(0.975)).
Z95 = 1.959963984540054


def wilson_interval(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The (low, high) bounds, in [0, 1], of the Wilson score interval for `successes` of
    `total`; (0, 1) when there is nothing to go on (total 0)."""
    if total <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= total:
        raise ValueError(f"{successes} successes of {total}")
    p = successes / total
    z2 = z * z
    denominator = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
