from __future__ import annotations

from typing import AsyncIterator, List, Literal, Optional, Union, cast, overload
from urllib.parse import quote

from .._options import TRANSFER_TIMEOUT
from ..types import VolumeFileEntry
from .files import AsyncDownload, FileData, download_as, upload_content
from .http import AsyncHttp, Content

_CHUNK = 1024 * 1024


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), _CHUNK):
        yield data[start : start + _CHUNK]


def _without_length(content: Content) -> Content:
    """Bytes are sent in chunks, without a length. With a length the server answers a full volume's 507 before
    reading the body and closes; httpcore before 0.17 (Debian 12's) reports that as a broken pipe, not the answer.
    Without one the server reads the body and answers 507 (up to 256 MiB past the quota)."""
    return _chunks(content) if isinstance(content, bytes) else content


def _files_of(volume: str) -> str:
    return f"/volumes/{quote(volume, safe='')}/files"


class AsyncVolumeFiles:
    """A volume's files without a sandbox (on the control plane). ``volume`` is its id or name; paths are from the
    volume's root (``/a/b`` or ``a/b``), and symlinks leading out of it are refused."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def write(self, volume: str, path: str, data: FileData, *, timeout: Optional[float] = None) -> VolumeFileEntry:
        """Uploads a file as it is read (PUT; never retried, as a stream cannot be replayed). Missing parent directories
        are made; an existing file is replaced atomically. InsufficientStorageError (507) when the volume is full, and
        then nothing is written."""
        entry = await self._http.json("PUT", _files_of(volume), query={"path": path}, content=_without_length(upload_content(data)), timeout=timeout or TRANSFER_TIMEOUT)
        return cast(VolumeFileEntry, entry)

    @overload
    async def read(self, volume: str, path: str, *, format: Literal["bytes"] = ..., timeout: Optional[float] = ...) -> bytes: ...

    @overload
    async def read(self, volume: str, path: str, *, format: Literal["text"], timeout: Optional[float] = ...) -> str: ...

    @overload
    async def read(self, volume: str, path: str, *, format: Literal["stream"], timeout: Optional[float] = ...) -> AsyncDownload: ...

    async def read(
        self, volume: str, path: str, *, format: Literal["bytes", "text", "stream"] = "bytes", timeout: Optional[float] = None
    ) -> Union[bytes, str, AsyncDownload]:
        """Downloads a file: bytes (default), ``format="text"`` (UTF-8) or ``format="stream"`` (chunks as they arrive,
        for large files). GET: retried on 429, 5xx and network errors until the body starts."""
        stream = await self._http.stream(
            "GET", _files_of(volume), query={"path": path}, timeout=timeout or TRANSFER_TIMEOUT, idle_timeout=timeout or TRANSFER_TIMEOUT
        )
        return await download_as(stream, format)

    async def list(self, volume: str, path: str = "/", *, timeout: Optional[float] = None) -> List[VolumeFileEntry]:
        """A directory's entries, sorted by name (default: the volume's root)."""
        answer = await self._http.json("GET", f"{_files_of(volume)}/list", query={"path": path}, timeout=timeout)
        return cast(List[VolumeFileEntry], answer["entries"])

    async def remove(self, volume: str, path: str, *, timeout: Optional[float] = None) -> None:
        """Removes a file, a symlink (itself) or an empty directory; ConflictError for a directory that is not empty."""
        await self._http.json("DELETE", _files_of(volume), query={"path": path}, timeout=timeout)
