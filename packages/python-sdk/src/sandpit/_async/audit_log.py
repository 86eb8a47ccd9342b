from __future__ import annotations

from datetime import datetime
from typing import AsyncIterator, Dict, List, Optional, Union

from ..types import AuditEntry
from .http import AsyncHttp


class AsyncAuditLog:
    """The team's audit log (the ``audit:read`` permission, which admins and owners hold): read only."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def list(
        self,
        *,
        actor: Optional[str] = None,
        action: Optional[str] = None,
        resource_type: Optional[str] = None,
        resource_id: Optional[str] = None,
        since: Optional[Union[datetime, str]] = None,
        until: Optional[Union[datetime, str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> AsyncIterator[List[AuditEntry]]:
        """Entries newest first, a page at a time; ``actor`` is a key id or a user id, times are datetimes (aware) or
        RFC 3339 strings."""
        while True:
            query: Dict[str, str] = {}
            for name, value in (("actor", actor), ("action", action), ("resource_type", resource_type), ("resource_id", resource_id)):
                if value is not None:
                    query[name] = value
            for name, when in (("since", since), ("until", until)):
                if when is not None:
                    query[name] = when if isinstance(when, str) else when.isoformat()
            if limit is not None:
                query["limit"] = str(limit)
            if cursor is not None:
                query["cursor"] = cursor
            page = await self._http.json("GET", "/audit-log", query=query, timeout=timeout)
            yield page["entries"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return
