from __future__ import annotations

from typing import AsyncIterator, Dict, List, Optional, cast
from urllib.parse import quote

from ..errors import NotFoundError
from ..types import Volume
from .http import AsyncHttp
from .volume_files import AsyncVolumeFiles


def _at(volume: str) -> str:
    return f"/volumes/{quote(volume, safe='')}"


class AsyncVolumes:
    """The team's volumes: disks that outlive sandboxes, addressed by id or name. Mount one with
    ``Sandbox.create(volumes=[{"volume": ..., "path": ...}])``; reach its files without a sandbox through ``files``."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http
        self.files = AsyncVolumeFiles(http)

    async def create(self, name: str, size_mib: int, *, timeout: Optional[float] = None) -> Volume:
        """Makes a volume of ``size_mib`` (its quota). ConflictError when the team has one of that name."""
        return cast(Volume, await self._http.json("POST", "/volumes", body={"name": name, "size_mib": size_mib}, timeout=timeout))

    async def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None, timeout: Optional[float] = None) -> AsyncIterator[List[Volume]]:
        """The team's volumes, newest first, a page at a time."""
        while True:
            query: Dict[str, str] = {}
            if limit is not None:
                query["limit"] = str(limit)
            if cursor is not None:
                query["cursor"] = cursor
            page = await self._http.json("GET", "/volumes", query=query, timeout=timeout)
            yield page["volumes"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    async def get(self, volume: str, *, timeout: Optional[float] = None) -> Volume:
        return cast(Volume, await self._http.json("GET", _at(volume), timeout=timeout))

    async def grow(self, volume: str, size_mib: int, *, timeout: Optional[float] = None) -> Volume:
        """Raises the quota at once; BadRequestError for a size below the current one (volumes never shrink)."""
        return cast(Volume, await self._http.json("PATCH", _at(volume), body={"size_mib": size_mib}, timeout=timeout))

    async def delete(self, volume: str, *, timeout: Optional[float] = None) -> bool:
        """Deletes a volume and its files for good; False when it was already gone (a retried DELETE may find it so).
        ConflictError while a sandbox that is not deleted mounts it."""
        try:
            await self._http.json("DELETE", _at(volume), timeout=timeout)
            return True
        except NotFoundError:
            return False
