"""One WebSocket attached to a terminal session (hand-written: the sync twin wraps it, since websockets 10 is asyncio only)."""

from __future__ import annotations

import asyncio
import json
from types import TracebackType
from typing import AsyncIterator, Callable, Dict, Optional, Type, Union

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatusCode
from websockets.legacy.client import WebSocketClientProtocol, connect

from ..errors import ConnectionError, TerminalError, TimeoutError
from ..types import TerminalExit


class AsyncTerminalConnection:
    """A PTY session's socket. The session outlives it: ``close()`` only detaches (a later connect repaints the kept
    output), ``terminals.kill`` ends it. Output arrives as bytes, the kept output first."""

    def __init__(self, terminal_id: str, socket: WebSocketClientProtocol) -> None:
        self.id = terminal_id
        self._socket = socket
        self.exit: Optional[TerminalExit] = None

    @classmethod
    async def open(cls, terminal_id: str, url: str, headers: Dict[str, str], timeout: float, keepalive: bool = True) -> AsyncTerminalConnection:
        """Connects; ConnectionError when the server refuses (the caller asks the API why)."""
        try:
            socket = await connect(
                url, extra_headers=headers, open_timeout=timeout, ping_interval=20 if keepalive else None, max_size=None
            )
        except asyncio.TimeoutError:
            raise TimeoutError(f"terminal {terminal_id}: no connection within {timeout} s") from None
        except InvalidStatusCode as err:
            raise ConnectionError(f"terminal {terminal_id}: the connection was refused ({err.status_code})") from err
        except (InvalidHandshake, OSError) as err:
            raise ConnectionError(f"terminal {terminal_id}: {err}") from err
        return cls(terminal_id, socket)

    async def write(self, data: Union[str, bytes]) -> None:
        """Sends input, as if typed (text is sent as UTF-8)."""
        await self._send(data.encode() if isinstance(data, str) else data)

    async def resize(self, cols: int, rows: int) -> None:
        await self._send(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    async def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next output; None once the process has exited (``exit`` then says how). TimeoutError when nothing
        arrives within ``timeout`` seconds; TerminalError when the server refused a control message."""
        while self.exit is None:
            try:
                message = await asyncio.wait_for(self._socket.recv(), timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(f"terminal {self.id}: no output within {timeout} s") from None
            except ConnectionClosed as err:
                raise ConnectionError(f"terminal {self.id}: the connection closed before the process exited ({err})") from None
            if isinstance(message, bytes):
                return message
            event = json.loads(message)
            if event.get("type") == "exit":
                self.exit = TerminalExit(exit_code=event.get("exit_code", -1), signal=event.get("signal"))
            elif event.get("type") == "error":
                raise TerminalError(str(event.get("code")), str(event.get("message")))
        return None

    async def wait(self, on_data: Optional[Callable[[bytes], None]] = None, timeout: Optional[float] = None) -> TerminalExit:
        """Reads output (to ``on_data``) until the process exits, and says how it did."""
        async for chunk in self.output(timeout):
            if on_data:
                on_data(chunk)
        assert self.exit is not None
        return self.exit

    async def output(self, timeout: Optional[float] = None) -> AsyncIterator[bytes]:
        """Output chunks until the process exits; ``timeout`` bounds the wait for each."""
        while True:
            chunk = await self.recv(timeout)
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        """Detaches; the session keeps running."""
        await self._socket.close()

    async def _send(self, message: Union[str, bytes]) -> None:
        try:
            await self._socket.send(message)
        except ConnectionClosed as err:
            raise ConnectionError(f"terminal {self.id}: the connection is closed ({err})") from None

    async def __aenter__(self) -> AsyncTerminalConnection:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.aclose()
