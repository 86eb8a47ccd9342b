from __future__ import annotations

from typing import List, Optional, cast
from urllib.parse import quote

from ..types import ApiKeyInfo, CreatedApiKey, JsonObject
from .http import AsyncHttp


class AsyncApiKeys:
    """The team's API keys (creating, listing and revoking need the ``keys:manage`` permission)."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(self, name: str, *, permissions: Optional[List[str]] = None, timeout: Optional[float] = None) -> CreatedApiKey:
        """Creates a key with a subset of the calling key's permissions (all of them by default); ``key`` is shown only here."""
        body: JsonObject = {"name": name}
        if permissions is not None:
            body["permissions"] = permissions
        return cast(CreatedApiKey, await self._http.json("POST", "/api-keys", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[ApiKeyInfo]:
        return cast(List[ApiKeyInfo], (await self._http.json("GET", "/api-keys", timeout=timeout))["api_keys"])

    async def revoke(self, key_id: str, *, timeout: Optional[float] = None) -> None:
        await self._http.json("DELETE", f"/api-keys/{quote(key_id, safe='')}", timeout=timeout)
