from __future__ import annotations

import base64
from typing import Dict, List, Optional, Union, cast
from urllib.parse import quote

from .._options import DEFAULT_IDLE_TIMEOUT
from ..errors import NotFoundError
from ..types import JsonObject, ProcessInfo, ProcessOutput, StreamResult
from .data_plane import AsyncDataPlane
from .exec import OnOutput, follow_output

ProcessId = Union[str, int]


def _at(process_id: ProcessId) -> str:
    return f"/processes/{quote(str(process_id), safe='')}"


class AsyncProcesses:
    """Background processes in one sandbox over the data plane: they outlive the request, disconnects and pause/resume.
    Ids are the process id or its pid."""

    def __init__(self, plane: AsyncDataPlane) -> None:
        self._plane = plane

    async def start(
        self,
        command: str,
        *,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> ProcessInfo:
        """Starts a process and returns at once (BadRequestError when the binary or cwd is missing). Without ``args``
        the command runs under /bin/sh -c."""
        body: JsonObject = {"command": command}
        if args is not None:
            body["args"] = args
        if env is not None:
            body["env"] = env
        if cwd is not None:
            body["working_dir"] = cwd
        return cast(ProcessInfo, await self._plane.json("POST", "/processes", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[ProcessInfo]:
        """Running processes and recently exited ones."""
        return cast(List[ProcessInfo], (await self._plane.json("GET", "/processes", timeout=timeout))["processes"])

    async def get(self, process_id: ProcessId, *, timeout: Optional[float] = None) -> ProcessInfo:
        return cast(ProcessInfo, await self._plane.json("GET", _at(process_id), timeout=timeout))

    async def output(self, process_id: ProcessId, *, timeout: Optional[float] = None) -> ProcessOutput:
        """Output so far: the last 1 MiB of stdout and stderr together (``dropped_bytes`` counts the rest)."""
        return cast(ProcessOutput, await self._plane.json("GET", f"{_at(process_id)}/output", timeout=timeout))

    async def stream(
        self,
        process_id: ProcessId,
        *,
        on_stdout: OnOutput = None,
        on_stderr: OnOutput = None,
        idle_timeout: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> StreamResult:
        """Follows the output (the kept output first, then live) until the process exits; returns its exit code."""
        path = f"{_at(process_id)}/stream"
        stream = await self._plane.stream("GET", path, timeout=timeout, idle_timeout=idle_timeout or DEFAULT_IDLE_TIMEOUT)
        return await follow_output(stream, on_stdout, on_stderr, f"GET {path}")

    async def send_stdin(self, process_id: ProcessId, data: Union[str, bytes], *, eof: Optional[bool] = None, timeout: Optional[float] = None) -> None:
        """Writes to stdin (text as UTF-8, bytes as they are); ``eof`` closes stdin after it. ConflictError once the
        process has exited."""
        body: JsonObject = {"data": data} if isinstance(data, str) else {"data": base64.b64encode(data).decode(), "encoding": "base64"}
        if eof is not None:
            body["eof"] = eof
        await self._plane.json("POST", f"{_at(process_id)}/stdin", body=body, timeout=timeout)

    async def signal(self, process_id: ProcessId, signal: Union[str, int], *, timeout: Optional[float] = None) -> None:
        """Signals the process group: a name (``SIGTERM``, ``TERM``) or a number."""
        await self._plane.json("POST", f"{_at(process_id)}/signal", body={"signal": signal}, timeout=timeout)

    async def kill(self, process_id: ProcessId, *, timeout: Optional[float] = None) -> bool:
        """SIGKILLs the process group if it runs and forgets the process; False when it was already gone."""
        try:
            await self._plane.json("DELETE", _at(process_id), timeout=timeout)
            return True
        except NotFoundError:
            return False


class AsyncCommandHandle:
    """A command started with ``commands.run(..., background=True)``: a background process to follow, feed or end."""

    def __init__(self, processes: AsyncProcesses, info: ProcessInfo) -> None:
        self._processes = processes
        self.info = info
        self.id = info["id"]
        self.pid = info["pid"]

    async def wait(self, *, on_stdout: OnOutput = None, on_stderr: OnOutput = None, idle_timeout: Optional[float] = None) -> StreamResult:
        """Follows the output until the process exits."""
        return await self._processes.stream(self.id, on_stdout=on_stdout, on_stderr=on_stderr, idle_timeout=idle_timeout)

    async def send_stdin(self, data: Union[str, bytes], *, eof: Optional[bool] = None) -> None:
        await self._processes.send_stdin(self.id, data, eof=eof)

    async def signal(self, signal: Union[str, int]) -> None:
        await self._processes.signal(self.id, signal)

    async def kill(self) -> bool:
        return await self._processes.kill(self.id)
