from __future__ import annotations

from typing import TYPE_CHECKING, List, Literal, Optional, cast
from urllib.parse import quote

from ..types import JsonObject, PreviewPort

if TYPE_CHECKING:
    from .client import AsyncSandpitClient


class AsyncPreviewPorts:
    """A sandbox's published ports (control plane, API key)."""

    def __init__(self, client: AsyncSandpitClient, sandbox_id: str) -> None:
        self._client = client
        self._path = f"/sandboxes/{quote(sandbox_id, safe='')}/preview-ports"

    async def publish(self, port: int, *, access: Optional[Literal["public", "private"]] = None, timeout: Optional[float] = None) -> PreviewPort:
        """Publishes a port at its preview URL (the server inside must listen on 0.0.0.0). ``access`` defaults to the
        sandbox's preview_access; a private port's answer carries the ``preview_token`` to send."""
        body: JsonObject = {"port": port} if access is None else {"port": port, "access": access}
        return cast(PreviewPort, await self._client.http.json("POST", self._path, body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[PreviewPort]:
        return cast(List[PreviewPort], (await self._client.http.json("GET", self._path, timeout=timeout))["preview_ports"])

    async def unpublish(self, port: int, *, timeout: Optional[float] = None) -> None:
        await self._client.http.json("DELETE", f"{self._path}/{port}", timeout=timeout)
