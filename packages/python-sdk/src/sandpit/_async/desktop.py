from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional, Tuple, cast
from urllib.parse import quote

from ..types import JsonObject

if TYPE_CHECKING:
    from .client import AsyncSandpitClient

MouseButton = Literal["left", "middle", "right"]
SCREENSHOT_TIMEOUT = 60.0


class AsyncDesktop:
    """The desktop of a platform/desktop sandbox (control plane, API key): screenshots, mouse, keyboard, live view."""

    def __init__(self, client: AsyncSandpitClient, sandbox_id: str) -> None:
        self._client = client
        self._path = f"/sandboxes/{quote(sandbox_id, safe='')}/desktop"

    async def screenshot(self, *, region: Optional[Tuple[int, int, int, int]] = None, timeout: Optional[float] = None) -> bytes:
        """A PNG of the screen, or of ``region`` as (x, y, width, height)."""
        query = None if region is None else {"x": str(region[0]), "y": str(region[1]), "width": str(region[2]), "height": str(region[3])}
        limit = timeout or SCREENSHOT_TIMEOUT
        stream = await self._client.http.stream("GET", f"{self._path}/screenshot", query=query, timeout=limit, idle_timeout=limit)
        try:
            return b"".join([chunk async for chunk in stream.chunks()])
        finally:
            await stream.aclose()

    async def act(self, action: JsonObject, *, timeout: Optional[float] = None) -> None:
        """Sends one input action (see the API's DesktopAction); returns once it was sent to the display."""
        await self._client.http.json("POST", f"{self._path}/actions", body=action, timeout=timeout)

    async def move_mouse(self, x: int, y: int, *, timeout: Optional[float] = None) -> None:
        await self.act({"type": "move", "x": x, "y": y}, timeout=timeout)

    async def click(
        self, *, x: Optional[int] = None, y: Optional[int] = None, button: MouseButton = "left", count: int = 1, timeout: Optional[float] = None
    ) -> None:
        """Clicks where the pointer is, or at ``x``, ``y``; ``count=2`` is a double click."""
        body: JsonObject = {"type": "click", "button": button, "count": count}
        if x is not None and y is not None:
            body.update({"x": x, "y": y})
        await self.act(body, timeout=timeout)

    async def double_click(self, *, x: Optional[int] = None, y: Optional[int] = None, timeout: Optional[float] = None) -> None:
        await self.click(x=x, y=y, count=2, timeout=timeout)

    async def right_click(self, *, x: Optional[int] = None, y: Optional[int] = None, timeout: Optional[float] = None) -> None:
        await self.click(x=x, y=y, button="right", timeout=timeout)

    async def drag(self, start: Tuple[int, int], end: Tuple[int, int], *, timeout: Optional[float] = None) -> None:
        await self.act({"type": "drag", "from": list(start), "to": list(end)}, timeout=timeout)

    async def scroll(self, direction: Literal["up", "down", "left", "right"], amount: int = 1, *, timeout: Optional[float] = None) -> None:
        await self.act({"type": "scroll", "direction": direction, "amount": amount}, timeout=timeout)

    async def type(self, text: str, *, timeout: Optional[float] = None) -> None:
        """Types text as key presses into the focused window."""
        await self.act({"type": "type", "text": text}, timeout=timeout)

    async def key(self, keys: str, *, timeout: Optional[float] = None) -> None:
        """Presses a key or chord in X keysym names: ``Return``, ``ctrl+c``, ``ctrl+shift+t``."""
        await self.act({"type": "key", "keys": keys}, timeout=timeout)

    async def open(self, target: str, *, timeout: Optional[float] = None) -> None:
        """Opens a file in the sandbox or a URL with its default application."""
        await self.act({"type": "open", "target": target}, timeout=timeout)

    async def cursor(self, *, timeout: Optional[float] = None) -> JsonObject:
        """``{"x": ..., "y": ...}`` of the pointer."""
        return cast(JsonObject, await self._client.http.json("GET", f"{self._path}/cursor", timeout=timeout))

    async def screen_size(self, *, timeout: Optional[float] = None) -> JsonObject:
        """``{"width": ..., "height": ...}``."""
        return cast(JsonObject, await self._client.http.json("GET", f"{self._path}/screen", timeout=timeout))

    async def live_view(self, *, view_only: bool = False, ttl_s: Optional[int] = None, timeout: Optional[float] = None) -> JsonObject:
        """A noVNC link on a private preview port with a short-lived view token; ``view_only`` links cannot send input."""
        body: JsonObject = {"view_only": view_only}
        if ttl_s is not None:
            body["ttl_s"] = ttl_s
        return cast(JsonObject, await self._client.http.json("POST", f"{self._path}/live-view", body=body, timeout=timeout))
