from __future__ import annotations

from types import TracebackType
from typing import IO, AsyncIterable, AsyncIterator, List, Literal, Optional, Type, Union, cast, overload

from .._options import DEFAULT_IDLE_TIMEOUT, TRANSFER_TIMEOUT
from ..types import FileEntry, FileWatchEvent, JsonObject
from .data_plane import AsyncDataPlane
from .http import AsyncOpenStream, Content

#: What ``write`` accepts: text (UTF-8), bytes, a binary file object, or an iterable of chunks, uploaded as read.
FileData = Union[str, bytes, IO[bytes], AsyncIterable[bytes]]

_CHUNK = 1024 * 1024


async def _read_file(file: IO[bytes]) -> AsyncIterator[bytes]:
    while True:
        chunk = file.read(_CHUNK)
        if not chunk:
            return
        yield chunk


def upload_content(data: FileData) -> Content:
    """The request body for ``data``: bytes as they are, a file object or an iterable read a chunk at a time."""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, bytes):
        return data
    if hasattr(data, "read"):
        return _read_file(cast(IO[bytes], data))
    return data


class AsyncDownload:
    """A file's content as it arrives, in chunks: iterate it once, and close it (or use ``with``) when stopping early."""

    def __init__(self, stream: AsyncOpenStream) -> None:
        self._stream = stream

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.chunks()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> AsyncDownload:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.aclose()


async def download_as(stream: AsyncOpenStream, format: str) -> Union[bytes, str, AsyncDownload]:
    """A started download in the format asked: a stream to read as it arrives, or all of it, as bytes or UTF-8 text."""
    if format == "stream":
        return AsyncDownload(stream)
    try:
        content = b"".join([chunk async for chunk in stream.chunks()])
    finally:
        await stream.aclose()
    return content.decode() if format == "text" else content


class AsyncFileWatch:
    """A running watch: iterate it for events (it ends when the watched directory goes away); ``close()`` stops it.
    Events are held by the connection until read, so changes made after ``watch`` returned are never missed."""

    def __init__(self, stream: AsyncOpenStream) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[FileWatchEvent]:
        async for event in self._stream.events():
            yield cast(FileWatchEvent, event)
            if event.get("finished"):
                return

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> AsyncFileWatch:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.aclose()


class AsyncFiles:
    """The sandbox's filesystem over the data plane; relative paths are under /home/user, and everything runs as ``user``."""

    def __init__(self, plane: AsyncDataPlane) -> None:
        self._plane = plane

    @overload
    async def read(self, path: str, *, format: Literal["bytes"] = ..., timeout: Optional[float] = ...) -> bytes: ...

    @overload
    async def read(self, path: str, *, format: Literal["text"], timeout: Optional[float] = ...) -> str: ...

    @overload
    async def read(self, path: str, *, format: Literal["stream"], timeout: Optional[float] = ...) -> AsyncDownload: ...

    async def read(
        self, path: str, *, format: Literal["bytes", "text", "stream"] = "bytes", timeout: Optional[float] = None
    ) -> Union[bytes, str, AsyncDownload]:
        """Downloads a file: bytes (default), ``format="text"`` (UTF-8) or ``format="stream"`` (chunks as they arrive,
        for large files). GET: retried on 429, 5xx and network errors until the body starts. Whole reads have a
        10-minute deadline unless ``timeout`` says otherwise."""
        stream = await self._plane.stream(
            "GET", "/files", query={"path": path}, timeout=timeout or TRANSFER_TIMEOUT, idle_timeout=timeout or TRANSFER_TIMEOUT
        )
        return await download_as(stream, format)

    async def write(self, path: str, data: FileData, *, timeout: Optional[float] = None) -> FileEntry:
        """Uploads a file as it is read (PUT; never retried, as a stream cannot be replayed). Missing parent directories
        are created; an existing file is replaced atomically. Returns the new file's entry."""
        return cast(FileEntry, await self._plane.json("PUT", "/files", query={"path": path}, content=upload_content(data), timeout=timeout or TRANSFER_TIMEOUT))

    async def list(self, path: str, *, timeout: Optional[float] = None) -> List[FileEntry]:
        """A directory's entries, sorted by name."""
        return cast(List[FileEntry], (await self._plane.json("GET", "/files/list", query={"path": path}, timeout=timeout))["entries"])

    async def stat(self, path: str, *, timeout: Optional[float] = None) -> FileEntry:
        """A file's or directory's entry (a symlink is reported as itself). NotFoundError when absent."""
        return cast(FileEntry, await self._plane.json("GET", "/files/stat", query={"path": path}, timeout=timeout))

    async def mkdir(self, path: str, *, parents: Optional[bool] = None, timeout: Optional[float] = None) -> FileEntry:
        """Creates a directory; with ``parents`` (default True) like mkdir -p."""
        body: JsonObject = {"path": path}
        if parents is not None:
            body["parents"] = parents
        return cast(FileEntry, await self._plane.json("POST", "/files/mkdir", body=body, timeout=timeout))

    async def remove(self, path: str, *, recursive: Optional[bool] = None, timeout: Optional[float] = None) -> None:
        """Removes a file or directory (``recursive`` for a non-empty one; otherwise that is a ConflictError)."""
        body: JsonObject = {"path": path}
        if recursive is not None:
            body["recursive"] = recursive
        await self._plane.json("POST", "/files/remove", body=body, timeout=timeout)

    async def rename(self, source: str, target: str, *, overwrite: Optional[bool] = None, timeout: Optional[float] = None) -> FileEntry:
        """Renames or moves (atomic); with ``overwrite=False`` an existing target is a ConflictError."""
        body: JsonObject = {"from": source, "to": target}
        if overwrite is not None:
            body["overwrite"] = overwrite
        return cast(FileEntry, await self._plane.json("POST", "/files/rename", body=body, timeout=timeout))

    async def watch(self, path: str, *, recursive: bool = False, idle_timeout: Optional[float] = None, timeout: Optional[float] = None) -> AsyncFileWatch:
        """Watches a directory; returns once the watch is in place, so changes made after that are seen. Iterating
        fails with TimeoutError when nothing, not even a keepalive (every 15 s), arrives for ``idle_timeout`` (45 s)."""
        query = {"path": path, "recursive": "true"} if recursive else {"path": path}
        return AsyncFileWatch(await self._plane.stream("GET", "/files/watch", query=query, timeout=timeout, idle_timeout=idle_timeout or DEFAULT_IDLE_TIMEOUT))
