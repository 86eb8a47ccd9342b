from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator, Dict, List, Optional, cast
from urllib.parse import quote

from .._options import LIFECYCLE_TIMEOUT, SNAPSHOT_POLL
from ..errors import NotFoundError, TimeoutError
from ..types import JsonObject, Snapshot
from .http import AsyncHttp


def _at(snapshot_id: str) -> str:
    return f"/snapshots/{quote(snapshot_id, safe='')}"


class AsyncSnapshots:
    """Snapshots of the team's sandboxes (memory and disk); start a sandbox from one with ``create(from_snapshot=...)``."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(
        self, sandbox_id: str, *, name: Optional[str] = None, idempotency_key: Optional[str] = None, timeout: Optional[float] = None
    ) -> Snapshot:
        """Captures an active or paused sandbox and returns the snapshot once it is ready (or failed). POST is never
        retried: pass ``idempotency_key`` to make a retry of your own safe. ServerError 503 where the host's driver
        cannot snapshot (the container driver)."""
        deadline = timeout or LIFECYCLE_TIMEOUT
        started = time.monotonic()
        body: JsonObject = {}
        if name is not None:
            body["name"] = name
        if idempotency_key is not None:
            body["idempotency_key"] = idempotency_key
        path = f"/sandboxes/{quote(sandbox_id, safe='')}/snapshot"
        snapshot = cast(Snapshot, await self._http.json("POST", path, body=body, timeout=deadline))
        # 202: the capture outlasted the server's deadline and settles in the background.
        while snapshot["status"] == "creating":
            if time.monotonic() - started + SNAPSHOT_POLL >= deadline:
                raise TimeoutError(f"snapshot {snapshot['id']} still creating after {deadline} s")
            await asyncio.sleep(SNAPSHOT_POLL)
            snapshot = await self.get(snapshot["id"])
        return snapshot

    async def list(
        self, *, sandbox_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None, timeout: Optional[float] = None
    ) -> AsyncIterator[List[Snapshot]]:
        """The team's snapshots, newest first, a page at a time."""
        while True:
            query: Dict[str, str] = {}
            if sandbox_id is not None:
                query["sandbox_id"] = sandbox_id
            if limit is not None:
                query["limit"] = str(limit)
            if cursor is not None:
                query["cursor"] = cursor
            page = await self._http.json("GET", "/snapshots", query=query, timeout=timeout)
            yield page["snapshots"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    async def get(self, snapshot_id: str, *, timeout: Optional[float] = None) -> Snapshot:
        return cast(Snapshot, await self._http.json("GET", _at(snapshot_id), timeout=timeout))

    async def rename(self, snapshot_id: str, name: Optional[str], *, timeout: Optional[float] = None) -> Snapshot:
        """Sets the label; None removes it."""
        return cast(Snapshot, await self._http.json("PATCH", _at(snapshot_id), body={"name": name}, timeout=timeout))

    async def delete(self, snapshot_id: str, *, timeout: Optional[float] = None) -> bool:
        """Deletes a snapshot and its files; False when it was already gone. ConflictError while it is being created."""
        try:
            await self._http.json("DELETE", _at(snapshot_id), timeout=timeout)
            return True
        except NotFoundError:
            return False
