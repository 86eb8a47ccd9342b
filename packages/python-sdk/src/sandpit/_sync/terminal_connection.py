"""The blocking terminal socket (hand-written): websockets 10 is asyncio only, so this drives the async connection on
a private event loop that runs only inside these calls, in the caller's thread. Code that already runs an event loop
in its thread (a notebook, say) uses ``AsyncSandbox`` instead."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Callable, Dict, Iterator, Optional, Type, Union

from .._async.terminal_connection import AsyncTerminalConnection
from ..types import TerminalExit


class TerminalConnection:
    """A PTY session's socket. The session outlives it: ``close()`` only detaches (a later connect repaints the kept
    output), ``terminals.kill`` ends it. Output arrives as bytes, the kept output first."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connection: AsyncTerminalConnection) -> None:
        self._loop = loop
        self._connection = connection
        self.id = connection.id

    @classmethod
    def open(cls, terminal_id: str, url: str, headers: Dict[str, str], timeout: float) -> TerminalConnection:
        loop = asyncio.new_event_loop()
        try:
            # No keepalive pings: the loop is idle between calls, so their replies could not be awaited in time.
            connection = loop.run_until_complete(AsyncTerminalConnection.open(terminal_id, url, headers, timeout, keepalive=False))
        except BaseException:
            loop.close()
            raise
        return cls(loop, connection)

    @property
    def exit(self) -> Optional[TerminalExit]:
        """How the process ended, once it has."""
        return self._connection.exit

    def write(self, data: Union[str, bytes]) -> None:
        """Sends input, as if typed (text is sent as UTF-8)."""
        self._loop.run_until_complete(self._connection.write(data))

    def resize(self, cols: int, rows: int) -> None:
        self._loop.run_until_complete(self._connection.resize(cols, rows))

    def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next output; None once the process has exited (``exit`` then says how). TimeoutError when nothing
        arrives within ``timeout`` seconds; TerminalError when the server refused a control message."""
        return self._loop.run_until_complete(self._connection.recv(timeout))

    def output(self, timeout: Optional[float] = None) -> Iterator[bytes]:
        """Output chunks until the process exits; ``timeout`` bounds the wait for each."""
        while True:
            chunk = self.recv(timeout)
            if chunk is None:
                return
            yield chunk

    def wait(self, on_data: Optional[Callable[[bytes], None]] = None, timeout: Optional[float] = None) -> TerminalExit:
        """Reads output (to ``on_data``) until the process exits, and says how it did."""
        for chunk in self.output(timeout):
            if on_data:
                on_data(chunk)
        assert self._connection.exit is not None
        return self._connection.exit

    def close(self) -> None:
        """Detaches; the session keeps running."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._connection.aclose())
        finally:
            self._loop.close()

    def __enter__(self) -> TerminalConnection:
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()
