from __future__ import annotations

from typing import AsyncIterator, Dict, List, Optional, Sequence, Union, cast
from urllib.parse import quote

from .._options import DEFAULT_IDLE_TIMEOUT, LIFECYCLE_TIMEOUT
from ..errors import NotFoundError
from ..types import (
    ApplyChangesResult,
    CommandResult,
    JsonObject,
    SandboxChangePage,
    SandboxInfo,
    SandboxStatus,
    SandboxWithToken,
    StreamResult,
)
from .exec import OnOutput, exec_body, follow_output, run_deadline
from .http import AsyncHttp


def _at(sandbox_id: str) -> str:
    return f"/sandboxes/{quote(sandbox_id, safe='')}"


class AsyncSandboxes:
    """The sandbox endpoints of the control plane, by id; ``AsyncSandbox`` builds on these."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(self, params: Optional[JsonObject] = None, *, timeout: Optional[float] = None) -> SandboxWithToken:
        """Creates a sandbox, ready to use when this returns (deadline 5 minutes unless ``timeout`` is given)."""
        return cast(SandboxWithToken, await self._http.json("POST", "/sandboxes", body=params or {}, timeout=timeout or LIFECYCLE_TIMEOUT))

    async def get(self, sandbox_id: str, *, timeout: Optional[float] = None) -> SandboxInfo:
        return cast(SandboxInfo, await self._http.json("GET", _at(sandbox_id), timeout=timeout))

    async def list(
        self,
        *,
        status: Union[SandboxStatus, Sequence[SandboxStatus], None] = None,
        metadata: Optional[Dict[str, str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> AsyncIterator[List[SandboxInfo]]:
        """The team's sandboxes, newest first, one page at a time; ``metadata`` matches values exactly."""
        while True:
            query: Dict[str, str] = {}
            if status is not None:
                query["status"] = status if isinstance(status, str) else ",".join(status)
            for key, value in (metadata or {}).items():
                query[f"metadata.{key}"] = value
            if limit is not None:
                query["limit"] = str(limit)
            if cursor is not None:
                query["cursor"] = cursor
            page = await self._http.json("GET", "/sandboxes", query=query, timeout=timeout)
            yield page["sandboxes"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    async def update(self, sandbox_id: str, params: JsonObject, *, timeout: Optional[float] = None) -> SandboxInfo:
        """Changes name, metadata (replaced whole), timers (None disables), network rules or preview access."""
        return cast(SandboxInfo, await self._http.json("PATCH", _at(sandbox_id), body=params, timeout=timeout))

    async def pause(self, sandbox_id: str, *, keep_memory: Optional[bool] = None, timeout: Optional[float] = None) -> SandboxInfo:
        """Pauses an active sandbox (ConflictError when already paused); ``keep_memory=False`` keeps only its disk."""
        return cast(SandboxInfo, await self._lifecycle("pause", sandbox_id, keep_memory, timeout))

    async def resume(self, sandbox_id: str, *, keep_memory: Optional[bool] = None, timeout: Optional[float] = None) -> SandboxWithToken:
        """Resumes a paused sandbox (ConflictError when active); ``keep_memory=False`` boots it from its disk."""
        return cast(SandboxWithToken, await self._lifecycle("resume", sandbox_id, keep_memory, timeout))

    async def activate(self, sandbox_id: str, *, keep_memory: Optional[bool] = None, timeout: Optional[float] = None) -> SandboxWithToken:
        """Resumes when paused, does nothing when active; either way returns the access token."""
        return cast(SandboxWithToken, await self._lifecycle("activate", sandbox_id, keep_memory, timeout))

    async def migrate(self, sandbox_id: str, *, node: Optional[str] = None, timeout: Optional[float] = None) -> SandboxInfo:
        """Moves a sandbox to another node (several hosts; ``sandboxes:move``): a running gVisor sandbox keeps its
        processes, memory, id and token. ``node`` picks the target, else placement does; ConflictError when it cannot move."""
        body = {} if node is None else {"node": node}
        return cast(SandboxInfo, await self._http.json("POST", f"{_at(sandbox_id)}/migrate", body=body, timeout=timeout or LIFECYCLE_TIMEOUT))

    async def kill(self, sandbox_id: str, *, timeout: Optional[float] = None) -> bool:
        """Deletes a sandbox; False when it was already gone (404 is swallowed, as the contract says of kill helpers)."""
        try:
            await self._http.json("DELETE", _at(sandbox_id), timeout=timeout)
            return True
        except NotFoundError:
            return False

    async def changes(
        self,
        sandbox_id: str,
        *,
        path: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SandboxChangePage:
        """One page of the files added, modified and deleted against the sandbox's base (its template, or the snapshot it
        was forked from), sorted by path; ``path`` keeps one subtree, ``next_cursor`` (when present) is the next page's
        ``cursor``."""
        query: Dict[str, str] = {}
        if path is not None:
            query["path"] = path
        if limit is not None:
            query["limit"] = str(limit)
        if cursor is not None:
            query["cursor"] = cursor
        return cast(SandboxChangePage, await self._http.json("GET", f"{_at(sandbox_id)}/changes", query=query, timeout=timeout))

    async def change_diff(self, sandbox_id: str, path: str, *, timeout: Optional[float] = None) -> str:
        """A unified diff of one changed text file against its base version (BadRequestError for a binary file, a
        directory or one over 4 MiB; NotFoundError when the path has no change)."""
        stream = await self._http.stream(
            "GET", f"{_at(sandbox_id)}/changes", query={"diff": path}, timeout=timeout, idle_timeout=timeout or DEFAULT_IDLE_TIMEOUT
        )
        try:
            content = b"".join([chunk async for chunk in stream.chunks()])
        finally:
            await stream.aclose()
        return content.decode("utf-8", "replace")

    async def apply_changes(
        self, sandbox_id: str, from_: str, paths: Optional[Sequence[str]] = None, *, timeout: Optional[float] = None
    ) -> ApplyChangesResult:
        """Copies sandbox ``from_``'s changes (all, or those at or under ``paths``) into sandbox ``sandbox_id``; both need
        the same base (ConflictError otherwise). Paths the target changed too are reported in ``conflicts``, not applied."""
        body: JsonObject = {"from": from_}
        if paths is not None:
            body["paths"] = list(paths)
        return cast(
            ApplyChangesResult, await self._http.json("POST", f"{_at(sandbox_id)}/changes/apply", body=body, timeout=timeout or LIFECYCLE_TIMEOUT)
        )

    async def exec(
        self,
        sandbox_id: str,
        command: str,
        *,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout_s: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> CommandResult:
        """Runs a command to completion over the control plane (auto-resumes a paused sandbox)."""
        answer = await self._http.json(
            "POST", f"{_at(sandbox_id)}/exec", body=exec_body(command, args, env, cwd, timeout_s), timeout=run_deadline(timeout, timeout_s)
        )
        return CommandResult(stdout=answer["stdout"], stderr=answer["stderr"], exit_code=answer["exit_code"])

    async def exec_stream(
        self,
        sandbox_id: str,
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
        """Runs a command over the control plane, handing its output to the callbacks as it arrives."""
        path = f"{_at(sandbox_id)}/exec/stream"
        stream = await self._http.stream(
            "POST", path, body=exec_body(command, args, env, cwd, timeout_s), timeout=timeout, idle_timeout=idle_timeout or DEFAULT_IDLE_TIMEOUT
        )
        return await follow_output(stream, on_stdout, on_stderr, f"POST {path}")

    async def _lifecycle(self, verb: str, sandbox_id: str, keep_memory: Optional[bool], timeout: Optional[float]) -> JsonObject:
        body = None if keep_memory is None else {"keep_memory": keep_memory}
        return cast(JsonObject, await self._http.json("POST", f"{_at(sandbox_id)}/{verb}", body=body, timeout=timeout or LIFECYCLE_TIMEOUT))
