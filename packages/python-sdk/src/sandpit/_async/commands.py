from __future__ import annotations

from typing import Dict, List, Literal, Optional, Union, overload

from .._options import DEFAULT_IDLE_TIMEOUT
from ..types import CommandResult, StreamResult
from .data_plane import AsyncDataPlane
from .exec import OnOutput, exec_body, follow_output, run_deadline
from .processes import AsyncCommandHandle, AsyncProcesses


class AsyncCommands:
    """Runs commands in one sandbox over the data plane, authenticated by the sandbox's access token."""

    def __init__(self, plane: AsyncDataPlane, processes: AsyncProcesses) -> None:
        self._plane = plane
        self._processes = processes

    @overload
    async def run(
        self,
        command: str,
        *,
        args: Optional[List[str]] = ...,
        env: Optional[Dict[str, str]] = ...,
        cwd: Optional[str] = ...,
        timeout_s: Optional[float] = ...,
        on_stdout: OnOutput = ...,
        on_stderr: OnOutput = ...,
        background: Literal[False] = ...,
        timeout: Optional[float] = ...,
    ) -> CommandResult: ...

    @overload
    async def run(
        self,
        command: str,
        *,
        args: Optional[List[str]] = ...,
        env: Optional[Dict[str, str]] = ...,
        cwd: Optional[str] = ...,
        timeout_s: Optional[float] = ...,
        on_stdout: OnOutput = ...,
        on_stderr: OnOutput = ...,
        background: Literal[True],
        timeout: Optional[float] = ...,
    ) -> AsyncCommandHandle: ...

    async def run(
        self,
        command: str,
        *,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout_s: Optional[float] = None,
        on_stdout: OnOutput = None,
        on_stderr: OnOutput = None,
        background: bool = False,
        timeout: Optional[float] = None,
    ) -> Union[CommandResult, AsyncCommandHandle]:
        """Runs ``command`` (under /bin/sh -c, or as a program with ``args``) to completion.

        With ``on_stdout``/``on_stderr`` the output is streamed to them as it arrives (and also collected in the
        result); without, output past 8 MiB is dropped and ``truncated`` set. With ``background=True`` the command
        starts as a background process and a handle returns at once: follow its output with
        ``handle.wait(on_stdout=...)`` (``timeout_s`` does not apply to it).
        ``timeout_s`` is the command's own limit (default 30 s; exit code 124 at the limit).
        """
        if background:
            if on_stdout is not None or on_stderr is not None:
                raise ValueError("a background command's output is followed by handle.wait(on_stdout=..., on_stderr=...)")
            return AsyncCommandHandle(self._processes, await self._processes.start(command, args=args, env=env, cwd=cwd, timeout=timeout))
        if on_stdout is None and on_stderr is None:
            answer = await self._plane.json("POST", "/exec", body=exec_body(command, args, env, cwd, timeout_s), timeout=run_deadline(timeout, timeout_s))
            return CommandResult(stdout=answer["stdout"], stderr=answer["stderr"], exit_code=answer["exit_code"], truncated=answer.get("truncated") is True)
        stdout: List[str] = []
        stderr: List[str] = []

        def out(chunk: str) -> None:
            stdout.append(chunk)
            if on_stdout:
                on_stdout(chunk)

        def err(chunk: str) -> None:
            stderr.append(chunk)
            if on_stderr:
                on_stderr(chunk)

        result = await self.stream(command, args=args, env=env, cwd=cwd, timeout_s=timeout_s, on_stdout=out, on_stderr=err, timeout=timeout)
        return CommandResult(stdout="".join(stdout), stderr="".join(stderr), exit_code=result.exit_code, error=result.error)

    async def stream(
        self,
        command: str,
        *,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout_s: Optional[float] = None,
        on_stdout: OnOutput = None,
        on_stderr: OnOutput = None,
        idle_timeout: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> StreamResult:
        """Runs ``command``, handing its output to the callbacks as it arrives and keeping none; for unbounded output."""
        stream = await self._plane.stream(
            "POST", "/exec/stream", body=exec_body(command, args, env, cwd, timeout_s), timeout=timeout, idle_timeout=idle_timeout or DEFAULT_IDLE_TIMEOUT
        )
        return await follow_output(stream, on_stdout, on_stderr, "POST /exec/stream")
