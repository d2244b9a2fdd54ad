"""Price tables overridden from a setting (``VIGIL_EFS_PRICES``, ``VIGIL_EBS_PRICES``): one rule.

A region already in the built-in table takes any subset of its fields; a new region needs the
required ones. ValueError names what is wrong, in words a person setting the variable can act on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Set
from dataclasses import replace
from typing import Any, TypeVar

REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")
SOURCE_CHARS = 300

Prices = TypeVar("Prices")


def overridden(
    table: Mapping[str, Prices],
    overrides: object,
    *,
    fields: Set[str],
    required: Set[str],
    new: Callable[[dict[str, Any]], Prices],
) -> dict[str, Prices]:
    """``table`` with ``overrides`` applied; ``new`` builds a region's prices from its fields."""
    result = dict(table)
    if not overrides:
        return result
    if not isinstance(overrides, Mapping):
        raise ValueError("expected a JSON object of region codes")
    for region, values in overrides.items():
        if not isinstance(region, str) or not REGION.match(region):
            raise ValueError(f"{region!r} is not an AWS region code")
        if not isinstance(values, Mapping):
            raise ValueError(f"{region}: expected an object of prices")
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ValueError(f"{region}: unknown price {', '.join(unknown)}")
        given = {name: _checked(region, name, value) for name, value in values.items()}
        if region in result:
            result[region] = replace(result[region], **given)
            continue
        missing = sorted(set(required) - set(given))
        if missing:
            raise ValueError(f"{region}: missing {', '.join(missing)}")
        result[region] = new(given)
    return result


def _checked(region: str, name: str, value: object) -> object:
    if name == "source":
        if not isinstance(value, str):
            raise ValueError(f"{region}.source: expected text")
        return value[:SOURCE_CHARS]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{region}.{name}: expected a number of dollars")
    if not 0 <= value < 1000 or not math.isfinite(value):
        raise ValueError(f"{region}.{name}: {value} is not a price between 0 and 1000")
    return float(value)
