from __future__ import annotations

from typing import List, Optional, cast
from urllib.parse import quote

from ..types import JsonObject, Secret
from .http import AsyncHttp


class AsyncSecrets:
    """The team's secrets: sandboxes bound to one see only a proxy token, swapped for the value at egress. Values are
    never returned."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(self, name: str, value: str, *, allowed_hosts: Optional[List[str]] = None, timeout: Optional[float] = None) -> Secret:
        """Stores a secret (ConflictError when the name is taken); ``allowed_hosts`` limits where the value may go."""
        body: JsonObject = {"name": name, "value": value}
        if allowed_hosts is not None:
            body["allowed_hosts"] = allowed_hosts
        return cast(Secret, await self._http.json("POST", "/secrets", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[Secret]:
        return cast(List[Secret], (await self._http.json("GET", "/secrets", timeout=timeout))["secrets"])

    async def revoke(self, name: str, *, timeout: Optional[float] = None) -> None:
        """Revokes a secret: bound sandboxes keep a useless token, and the name can be reused."""
        await self._http.json("DELETE", f"/secrets/{quote(name, safe='')}", timeout=timeout)
