from __future__ import annotations

from typing import Dict, List, Optional, cast
from urllib.parse import quote

from ..errors import ApiError, ConnectionError, NotFoundError
from ..types import JsonObject, TerminalInfo
from .data_plane import AsyncDataPlane
from .terminal_connection import AsyncTerminalConnection


def _at(terminal_id: str) -> str:
    return f"/terminals/{quote(terminal_id, safe='')}"


class AsyncTerminals:
    """PTY sessions in one sandbox over the data plane."""

    def __init__(self, plane: AsyncDataPlane) -> None:
        self._plane = plane

    async def create(
        self,
        *,
        cols: Optional[int] = None,
        rows: Optional[int] = None,
        command: Optional[str] = None,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> TerminalInfo:
        """Starts a session (a PTY running as user; default the login shell ``bash -l``, 80x24). Attach with ``connect``."""
        body: JsonObject = {}
        for key, value in (("cols", cols), ("rows", rows), ("command", command), ("args", args), ("env", env), ("working_dir", cwd)):
            if value is not None:
                body[key] = value
        return cast(TerminalInfo, await self._plane.json("POST", "/terminals", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[TerminalInfo]:
        return cast(List[TerminalInfo], (await self._plane.json("GET", "/terminals", timeout=timeout))["terminals"])

    async def get(self, terminal_id: str, *, timeout: Optional[float] = None) -> TerminalInfo:
        return cast(TerminalInfo, await self._plane.json("GET", _at(terminal_id), timeout=timeout))

    async def kill(self, terminal_id: str, *, timeout: Optional[float] = None) -> bool:
        """Ends a session (SIGKILL to its process group); False when it was already gone."""
        try:
            await self._plane.json("DELETE", _at(terminal_id), timeout=timeout)
            return True
        except NotFoundError:
            return False

    async def connect(self, terminal_id: str, *, timeout: Optional[float] = None) -> AsyncTerminalConnection:
        """Attaches a WebSocket to a session; the kept output (up to 256 KiB) arrives first."""
        base_url, headers = await self._plane.target(timeout)
        url = "ws" + base_url[len("http"):] + f"{_at(terminal_id)}/connect"
        try:
            return await AsyncTerminalConnection.open(terminal_id, url, headers, timeout or self._plane.client.http.timeout)
        except ConnectionError:
            # A refused upgrade carries no error body; the session's own GET tells what was wrong.
            try:
                await self.get(terminal_id, timeout=timeout)
            except ApiError as err:
                raise err from None
            raise
