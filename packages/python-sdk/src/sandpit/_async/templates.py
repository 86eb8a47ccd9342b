from __future__ import annotations

from typing import Callable, List, Optional, cast
from urllib.parse import quote

from .._options import DEFAULT_IDLE_TIMEOUT
from ..errors import ConnectionError, NotFoundError
from ..types import BuildResult, JsonObject, Template, TemplateWithBuild
from .http import AsyncHttp


def _at(template_id: str) -> str:
    return f"/templates/{quote(template_id, safe='')}"


class AsyncTemplates:
    """Templates: curated ``platform/*`` ones and the team's own, built from a base and steps."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(
        self,
        name: str,
        *,
        base: Optional[str] = None,
        steps: Optional[List[JsonObject]] = None,
        start_cmd: Optional[str] = None,
        ready_cmd: Optional[str] = None,
        ready_timeout_s: Optional[int] = None,
        warm_pool: Optional[int] = None,
        no_cache: Optional[bool] = None,
        timeout: Optional[float] = None,
    ) -> TemplateWithBuild:
        """Starts a build (or a rebuild of a template with the same name) and returns at once with the template and
        ``build_id``; follow it with ``logs(template["id"], template["build_id"])``. Steps are the API's:
        ``{"type": "run", "command": ...}``, ``{"type": "env", "env": {...}}``, ``copy``, ``workdir``; ``no_cache`` runs every
        step even where its layer is cached."""
        body: JsonObject = {"name": name}
        fields = (("base", base), ("steps", steps), ("start_cmd", start_cmd), ("ready_cmd", ready_cmd), ("ready_timeout_s", ready_timeout_s), ("warm_pool", warm_pool), ("no_cache", no_cache))
        for key, value in fields:
            if value is not None:
                body[key] = value
        return cast(TemplateWithBuild, await self._http.json("POST", "/templates", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[Template]:
        return cast(List[Template], (await self._http.json("GET", "/templates", timeout=timeout))["templates"])

    async def get(self, id_or_name: str, *, timeout: Optional[float] = None) -> Template:
        """By UUID or name (``platform/base`` included)."""
        return cast(Template, await self._http.json("GET", _at(id_or_name), timeout=timeout))

    async def delete(self, id_or_name: str, *, timeout: Optional[float] = None) -> bool:
        """Deletes a team template; False when it was already gone. ConflictError while sandboxes use it or it builds."""
        try:
            await self._http.json("DELETE", _at(id_or_name), timeout=timeout)
            return True
        except NotFoundError:
            return False

    async def build(self, template_id: str, build_id: str, *, timeout: Optional[float] = None) -> JsonObject:
        """A build: status, error and which steps ran or came from the cache."""
        return cast(JsonObject, await self._http.json("GET", f"{_at(template_id)}/builds/{quote(build_id, safe='')}", timeout=timeout))

    async def logs(
        self,
        template_id: str,
        build_id: str,
        *,
        on_line: Optional[Callable[[str], None]] = None,
        idle_timeout: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> BuildResult:
        """Follows a build's log (every line so far, then live lines) until the build ends, and says how it ended."""
        path = f"{_at(template_id)}/builds/{quote(build_id, safe='')}/logs"
        stream = await self._http.stream("GET", path, timeout=timeout, idle_timeout=idle_timeout or DEFAULT_IDLE_TIMEOUT)
        try:
            async for event in stream.events():
                if "line" in event and on_line:
                    on_line(event["line"])
                if event.get("finished"):
                    return BuildResult(status=event.get("status") or "failed", error=event.get("error"))
        finally:
            await stream.aclose()
        raise ConnectionError(f"GET {path}: the stream ended before the build finished")
