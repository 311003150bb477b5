"""JSON text of results, in which a number without a finite value is ``null`` (``docs/cli.md``).

JSON has no NaN or infinity, and ``json.dumps`` refuses them with a traceback
(``allow_nan=False``) or writes tokens no strict reader takes. Commands compute
their figures so that none should be left; this is the last guard, and gives
``null`` the meaning it has everywhere in rpa-sim's outputs: a figure that is
undefined or has no finite value.

Examples
--------
>>> dumps({"width": math.inf, "rates": [0.5, math.nan], "name": "a"})
'{"width": null, "rates": [0.5, null], "name": "a"}'
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite"]


def finite(payload: Any) -> Any:
    """``payload`` with every float that is NaN or infinite replaced by None, through dicts, lists and tuples."""
    if isinstance(payload, float):
        return payload if math.isfinite(payload) else None
    if isinstance(payload, dict):
        return {key: finite(value) for key, value in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [finite(value) for value in payload]
    return payload


def dumps(payload: Any, **options: Any) -> str:
    """``json.dumps`` of :func:`finite` ``(payload)``, strict (``allow_nan=False``); ``options`` as ``json.dumps``."""
    return json.dumps(finite(payload), allow_nan=False, **options)
