from __future__ import annotations

from typing import Optional, cast

from ..types import JsonObject
from .http import AsyncHttp


class AsyncIdentity:
    """Who the API key is: ``GET /me``, and the team id it names, cached. The client and the team-scoped resource
    groups (team, billing) share one, so none of them needs the client."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http
        self._team_id: Optional[str] = None

    async def me(self, *, timeout: Optional[float] = None) -> JsonObject:
        return cast(JsonObject, await self._http.json("GET", "/me", timeout=timeout))

    async def team_id(self, *, timeout: Optional[float] = None) -> str:
        if self._team_id is None:
            self._team_id = str((await self.me(timeout=timeout))["team_id"])
        return self._team_id
