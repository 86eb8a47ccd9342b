from __future__ import annotations

from typing import Any, List, Optional, cast
from urllib.parse import quote

from ..types import JsonObject
from .http import AsyncHttp
from .identity import AsyncIdentity


class AsyncBilling:
    """The calling key's team's usage and charges (needs billing:read)."""

    def __init__(self, http: AsyncHttp, identity: AsyncIdentity) -> None:
        self._http = http
        self._identity = identity

    async def summary(self, *, timeout: Optional[float] = None) -> JsonObject:
        """Charges, credits and usage of the current period."""
        return cast(JsonObject, await self._http.json("GET", "/billing/summary", timeout=timeout))

    async def usage(self, *, period_id: Optional[str] = None, timeout: Optional[float] = None) -> JsonObject:
        """Usage of one period (``period_id`` from ``periods()``; default the current one)."""
        return cast(JsonObject, await self._get("/billing/usage", period_id, timeout))

    async def sandbox_usage(self, *, period_id: Optional[str] = None, timeout: Optional[float] = None) -> JsonObject:
        """Usage and charge of each sandbox in one period."""
        return cast(JsonObject, await self._get("/billing/usage/sandboxes", period_id, timeout))

    async def periods(self, *, timeout: Optional[float] = None) -> List[JsonObject]:
        """Every period since the billing account was opened, newest first."""
        return cast(List[JsonObject], (await self._get("/billing/periods", None, timeout))["periods"])

    async def _get(self, tail: str, period_id: Optional[str], timeout: Optional[float]) -> Any:
        query = None if period_id is None else {"period_id": period_id}
        path = f"/teams/{quote(await self._identity.team_id(timeout=timeout), safe='')}{tail}"
        return await self._http.json("GET", path, query=query, timeout=timeout)
