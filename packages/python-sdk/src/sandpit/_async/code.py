from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Literal, Optional, cast
from urllib.parse import quote

from ..errors import ConnectionError
from ..types import CodeContext, CodeResult, CodeRunResult, JsonObject

if TYPE_CHECKING:
    from .client import AsyncSandpitClient

CodeLanguage = Literal["python", "javascript", "typescript", "r", "bash"]
# The server sends a keepalive comment every 15 s while code runs quietly.
IDLE_TIMEOUT = 60.0


class AsyncCode:
    """Code runs (Python, JavaScript, bash) in a sandbox of ``platform/code-interpreter``, with kept contexts."""

    def __init__(self, client: AsyncSandpitClient, sandbox_id: str) -> None:
        self._client = client
        self._path = f"/sandboxes/{quote(sandbox_id, safe='')}/code"

    async def run(
        self,
        code: str,
        *,
        language: Optional[CodeLanguage] = None,
        context_id: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        on_stdout: Optional[Callable[[str], None]] = None,
        on_stderr: Optional[Callable[[str], None]] = None,
        on_result: Optional[Callable[[CodeResult], None]] = None,
        timeout: Optional[float] = None,
    ) -> CodeRunResult:
        """Runs code, streaming its output to the callbacks; returns everything it produced (``error`` set if it raised)."""
        body: JsonObject = {"code": code}
        if language is not None:
            body["language"] = language
        if context_id is not None:
            body["context_id"] = context_id
        if env is not None:
            body["env"] = env
        stream = await self._client.http.stream(
            "POST", f"{self._path}/run", body=body, headers={"accept": "text/event-stream"}, timeout=timeout, idle_timeout=IDLE_TIMEOUT
        )
        try:
            async for event in stream.events():
                kind = event.get("type")
                if kind == "stdout" and on_stdout:
                    on_stdout(event["text"])
                elif kind == "stderr" and on_stderr:
                    on_stderr(event["text"])
                elif kind == "result" and on_result:
                    on_result(cast(CodeResult, {k: v for k, v in event.items() if k != "type"}))
                elif kind == "end":
                    return cast(CodeRunResult, event)
        finally:
            await stream.aclose()
        raise ConnectionError("the code run ended without its results")

    async def create_context(self, *, language: Optional[CodeLanguage] = None, cwd: Optional[str] = None, timeout: Optional[float] = None) -> CodeContext:
        body: JsonObject = {}
        if language is not None:
            body["language"] = language
        if cwd is not None:
            body["cwd"] = cwd
        return cast(CodeContext, await self._client.http.json("POST", f"{self._path}/contexts", body=body, timeout=timeout))

    async def list_contexts(self, *, timeout: Optional[float] = None) -> List[CodeContext]:
        return cast(List[CodeContext], await self._client.http.json("GET", f"{self._path}/contexts", timeout=timeout))

    async def restart_context(self, context_id: str, *, timeout: Optional[float] = None) -> None:
        """Clears the context's state (a fresh kernel)."""
        await self._client.http.json("POST", f"{self._path}/contexts/{quote(context_id, safe='')}/restart", timeout=timeout)

    async def remove_context(self, context_id: str, *, timeout: Optional[float] = None) -> None:
        await self._client.http.json("DELETE", f"{self._path}/contexts/{quote(context_id, safe='')}", timeout=timeout)
