from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple

from .http import AsyncOpenStream, Content, Query

if TYPE_CHECKING:
    from .client import AsyncSandpitClient


class AsyncDataPlane:
    """Where one sandbox's data-plane calls go, authenticated by its access token (never the team key)."""

    def __init__(self, client: AsyncSandpitClient, sandbox_id: str, access_token: Callable[[], str]) -> None:
        self.client = client
        self.sandbox_id = sandbox_id
        self._access_token = access_token

    @property
    def access_token(self) -> str:
        return self._access_token()

    async def target(self, timeout: Optional[float] = None) -> Tuple[str, Dict[str, str]]:
        """Routed by header to the announced data-plane address, so no per-sandbox DNS name is needed."""
        base_url = await self.client.data_plane_url(timeout=timeout)
        return base_url, {"x-platform-sandbox-id": self.sandbox_id, "x-access-token": self._access_token()}

    async def json(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[Query] = None,
        content: Optional[Content] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        base_url, headers = await self.target(timeout)
        return await self.client.http.json(
            method, path, body=body, query=query, content=content, base_url=base_url, headers=headers, auth=False, timeout=timeout
        )

    async def stream(
        self,
        method: str,
        path: str,
        *,
        idle_timeout: float,
        body: Any = None,
        query: Optional[Query] = None,
        timeout: Optional[float] = None,
    ) -> AsyncOpenStream:
        base_url, headers = await self.target(timeout)
        return await self.client.http.stream(
            method, path, body=body, query=query, base_url=base_url, headers=headers, auth=False, timeout=timeout, idle_timeout=idle_timeout
        )
