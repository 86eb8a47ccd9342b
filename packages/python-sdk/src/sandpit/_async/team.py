from __future__ import annotations

from typing import Optional, cast
from urllib.parse import quote

from ..types import JsonObject
from .http import AsyncHttp
from .identity import AsyncIdentity


class AsyncTeam:
    """The calling key's team: members and roles. The team id comes from ``GET /me`` (any other team is 403)."""

    def __init__(self, http: AsyncHttp, identity: AsyncIdentity) -> None:
        self._http = http
        self._identity = identity

    async def management(self, *, timeout: Optional[float] = None) -> JsonObject:
        """Members, role assignments and what the calling key may change (needs members:read)."""
        return cast(JsonObject, await self._http.json("GET", f"{await self._team(timeout)}/management", timeout=timeout))

    async def invite(self, email: str, full_name: str, role: str, *, timeout: Optional[float] = None) -> JsonObject:
        """Adds a member with a role and issues their first API key (shown only here; needs members:manage)."""
        body = {"email": email, "full_name": full_name, "role": role}
        return cast(JsonObject, await self._http.json("POST", f"{await self._team(timeout)}/members", body=body, timeout=timeout))

    async def deactivate(self, user_id: str, *, timeout: Optional[float] = None) -> None:
        """Deactivates a member: their API keys stop working at once."""
        await self._http.json("DELETE", f"{await self._team(timeout)}/members/{quote(user_id, safe='')}", timeout=timeout)

    async def grant_role(self, user_id: str, role_name: str, *, timeout: Optional[float] = None) -> JsonObject:
        path = f"{await self._team(timeout)}/members/{quote(user_id, safe='')}/roles"
        return cast(JsonObject, await self._http.json("POST", path, body={"role_name": role_name}, timeout=timeout))

    async def revoke_role(self, user_id: str, role_name: str, *, timeout: Optional[float] = None) -> None:
        path = f"{await self._team(timeout)}/members/{quote(user_id, safe='')}/roles/{quote(role_name, safe='')}"
        await self._http.json("DELETE", path, timeout=timeout)

    async def _team(self, timeout: Optional[float]) -> str:
        return f"/teams/{quote(await self._identity.team_id(timeout=timeout), safe='')}"
