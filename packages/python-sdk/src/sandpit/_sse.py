"""Server-sent events as the contract sends them: only ``data: <json>`` lines count."""

from __future__ import annotations

import json
from typing import Any, Optional

from .errors import SandpitError

_DATA = "data: "


def parse_line(line: str, what: str) -> Optional[Any]:
    """The JSON payload of a ``data:`` line, or None for every other line (keepalive comments, blank separators)."""
    line = line.rstrip("\r")
    if not line.startswith(_DATA):
        return None
    try:
        return json.loads(line[len(_DATA):])
    except ValueError:
        raise SandpitError(f"{what}: malformed event {line[:200]!r}") from None
