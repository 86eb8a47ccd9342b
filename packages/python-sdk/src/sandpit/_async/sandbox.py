from __future__ import annotations

from types import TracebackType
from typing import AsyncIterator, Dict, List, Literal, Optional, Sequence, Type, Union, cast

from ..types import CommandResult, JsonObject, NetworkRules, SandboxInfo, SandboxStatus, SandboxWithToken, Snapshot, StreamResult, VolumeMount
from .client import AsyncSandpitClient
from .code import AsyncCode
from .commands import AsyncCommands
from .data_plane import AsyncDataPlane
from .desktop import AsyncDesktop
from .exec import OnOutput
from .files import AsyncFiles
from .preview_ports import AsyncPreviewPorts
from .processes import AsyncProcesses
from .terminals import AsyncTerminals


def _connection(client: Optional[AsyncSandpitClient], api_url: Optional[str], api_key: Optional[str]) -> AsyncSandpitClient:
    return client or AsyncSandpitClient(api_url=api_url, api_key=api_key)


class AsyncSandbox:
    """A live sandbox: made by ``create``, ``connect`` or ``resume``, it holds the access token the data plane
    (``commands``, ``files``, ``terminals``, ``processes``) uses. Plain records (``get``, ``list``) are ``SandboxInfo``.

    The static helpers take ``client`` (an ``AsyncSandpitClient`` to share) or ``api_url``/``api_key`` (defaulting to
    ``$SANDPIT_API_URL``/``$SANDPIT_API_KEY``). ``async with`` kills the sandbox on exit.
    """

    def __init__(self, client: AsyncSandpitClient, info: SandboxWithToken, owns_client: bool = False) -> None:
        self.client = client
        self.id = info["id"]
        self._info = self._record(info)
        self._access_token = info["access_token"]
        self._owns_client = owns_client
        plane = AsyncDataPlane(client, self.id, lambda: self._access_token)
        #: Background processes (data plane).
        self.processes = AsyncProcesses(plane)
        #: Runs commands over the data plane with the access token.
        self.commands = AsyncCommands(plane, self.processes)
        #: The sandbox's filesystem (data plane).
        self.files = AsyncFiles(plane)
        #: Interactive PTY sessions over WebSocket (data plane).
        self.terminals = AsyncTerminals(plane)
        #: Published ports (control plane).
        self.preview_ports = AsyncPreviewPorts(client, self.id)
        self.desktop = AsyncDesktop(client, self.id)
        #: Code runs in a sandbox of platform/code-interpreter (control plane).
        self.code = AsyncCode(client, self.id)

    @classmethod
    async def create(
        cls,
        *,
        name: Optional[str] = None,
        region: Optional[str] = None,
        from_template: Optional[str] = None,
        from_snapshot: Optional[str] = None,
        metadata: Optional[Dict[str, str]] = None,
        env: Optional[Dict[str, str]] = None,
        secrets: Optional[Dict[str, str]] = None,
        network: Optional[NetworkRules] = None,
        auto_pause_seconds: Optional[int] = None,
        auto_delete_seconds: Optional[int] = None,
        preview_access: Optional[Literal["public", "private"]] = None,
        volumes: Optional[List[VolumeMount]] = None,
        client: Optional[AsyncSandpitClient] = None,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> AsyncSandbox:
        """Creates a sandbox (from ``platform/base`` unless ``from_template`` says otherwise, or as a fork of a snapshot
        with ``from_snapshot``), ready to use on return, in ``region`` (default: the API's own). ``secrets`` maps env names
        to secret names; ``volumes`` mounts the team's volumes (``{"volume": id or name, "path": ..., "read_only": ...}``)."""
        params: JsonObject = {}
        fields = (
            ("name", name),
            ("region", region),
            ("from_template", from_template),
            ("from_snapshot", from_snapshot),
            ("metadata", metadata),
            ("env", env),
            ("secrets", secrets),
            ("network", network),
            ("auto_pause_seconds", auto_pause_seconds),
            ("auto_delete_seconds", auto_delete_seconds),
            ("preview_access", preview_access),
            ("volumes", volumes),
        )
        for key, value in fields:
            if value is not None:
                params[key] = value
        connection = _connection(client, api_url, api_key)
        try:
            return cls(connection, await connection.sandboxes.create(params, timeout=timeout), owns_client=client is None)
        except BaseException:
            if client is None:
                await connection.aclose()
            raise

    @classmethod
    async def connect(
        cls,
        sandbox_id: str,
        *,
        client: Optional[AsyncSandpitClient] = None,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> AsyncSandbox:
        """Attaches to an existing sandbox, resuming it when paused."""
        connection = _connection(client, api_url, api_key)
        try:
            return cls(connection, await connection.sandboxes.activate(sandbox_id, timeout=timeout), owns_client=client is None)
        except BaseException:
            if client is None:
                await connection.aclose()
            raise

    @staticmethod
    async def get(
        sandbox_id: str,
        *,
        client: Optional[AsyncSandpitClient] = None,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SandboxInfo:
        """The sandbox's record."""
        if client is not None:
            return await client.sandboxes.get(sandbox_id, timeout=timeout)
        async with AsyncSandpitClient(api_url=api_url, api_key=api_key) as own:
            return await own.sandboxes.get(sandbox_id, timeout=timeout)

    @staticmethod
    async def list(
        *,
        status: Union[SandboxStatus, Sequence[SandboxStatus], None] = None,
        metadata: Optional[Dict[str, str]] = None,
        limit: Optional[int] = None,
        client: Optional[AsyncSandpitClient] = None,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> AsyncIterator[List[SandboxInfo]]:
        """The team's sandboxes, newest first, a page at a time: ``async for page in AsyncSandbox.list(): ...``."""
        connection = _connection(client, api_url, api_key)
        try:
            async for page in connection.sandboxes.list(status=status, metadata=metadata, limit=limit, timeout=timeout):
                yield page
        finally:
            if client is None:
                await connection.aclose()

    @staticmethod
    async def kill_by_id(
        sandbox_id: str,
        *,
        client: Optional[AsyncSandpitClient] = None,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> bool:
        """Deletes a sandbox by id; False when it was already gone."""
        if client is not None:
            return await client.sandboxes.kill(sandbox_id, timeout=timeout)
        async with AsyncSandpitClient(api_url=api_url, api_key=api_key) as own:
            return await own.sandboxes.kill(sandbox_id, timeout=timeout)

    @property
    def info(self) -> SandboxInfo:
        """The sandbox as last seen by this object."""
        return self._info

    @property
    def access_token(self) -> str:
        """Token for the data plane (X-Access-Token); it grants access to this sandbox only."""
        return self._access_token

    async def get_info(self, *, timeout: Optional[float] = None) -> SandboxInfo:
        """Fetches the current state."""
        self._info = await self.client.sandboxes.get(self.id, timeout=timeout)
        return self._info

    async def update(self, params: JsonObject, *, timeout: Optional[float] = None) -> SandboxInfo:
        """Changes ``name``, ``metadata`` (replaced whole), timers (None disables), ``network`` or ``preview_access``."""
        self._info = await self.client.sandboxes.update(self.id, params, timeout=timeout)
        return self._info

    async def pause(self, *, keep_memory: Optional[bool] = None, timeout: Optional[float] = None) -> SandboxInfo:
        """Pauses (ConflictError when already paused); ``keep_memory=False`` keeps only the disk: processes end, resume boots afresh."""
        self._info = await self.client.sandboxes.pause(self.id, keep_memory=keep_memory, timeout=timeout)
        return self._info

    async def resume(self, *, keep_memory: Optional[bool] = None, timeout: Optional[float] = None) -> SandboxInfo:
        """Resumes (ConflictError when active); the access token is renewed. ``keep_memory=False`` boots from the disk."""
        answer = await self.client.sandboxes.resume(self.id, keep_memory=keep_memory, timeout=timeout)
        self._access_token = answer["access_token"]
        self._info = self._record(answer)
        return self._info

    async def migrate(self, *, node: Optional[str] = None, timeout: Optional[float] = None) -> SandboxInfo:
        """Moves it to another node, processes and all (see Sandboxes.migrate)."""
        self._info = await self.client.sandboxes.migrate(self.id, node=node, timeout=timeout)
        return self._info

    async def kill(self, *, timeout: Optional[float] = None) -> bool:
        """Deletes the sandbox; False when it was already gone."""
        return await self.client.sandboxes.kill(self.id, timeout=timeout)

    async def snapshot(self, *, name: Optional[str] = None, idempotency_key: Optional[str] = None, timeout: Optional[float] = None) -> Snapshot:
        """Captures memory and disk; the snapshot is ready (or failed) on return. Fork it with ``create(from_snapshot=...)``."""
        return await self.client.snapshots.create(self.id, name=name, idempotency_key=idempotency_key, timeout=timeout)

    async def preview_url(self, port: int, *, timeout: Optional[float] = None) -> str:
        """Where a port is (or would be, once published) reachable, from the server's announced preview URL pattern."""
        pattern = (await self.client.info(timeout=timeout))["preview_url"]
        return pattern.replace("{port}", str(port)).replace("{sandbox_id}", self.id)

    async def exec(
        self,
        command: str,
        *,
        args: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        timeout_s: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> CommandResult:
        """Runs a command to completion over the control plane (API key; auto-resumes a paused sandbox)."""
        return await self.client.sandboxes.exec(self.id, command, args=args, env=env, cwd=cwd, timeout_s=timeout_s, timeout=timeout)

    async def exec_stream(
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
        """Runs a command over the control plane, streaming its output to the callbacks."""
        return await self.client.sandboxes.exec_stream(
            self.id, command, args=args, env=env, cwd=cwd, timeout_s=timeout_s, on_stdout=on_stdout, on_stderr=on_stderr, idle_timeout=idle_timeout, timeout=timeout
        )

    async def aclose(self) -> None:
        """Closes the connection pool when this sandbox made its own client (the sandbox keeps running)."""
        if self._owns_client:
            await self.client.aclose()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.kill()
        finally:
            await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, status={self._info['status']!r})"

    @staticmethod
    def _record(info: SandboxWithToken) -> SandboxInfo:
        """The record without the token, so printing ``info`` never shows it."""
        return cast(SandboxInfo, {key: value for key, value in info.items() if key != "access_token"})
