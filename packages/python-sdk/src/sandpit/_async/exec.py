from __future__ import annotations

from typing import Callable, Dict, List, Optional

from .._options import ANSWER_SLACK, DEFAULT_COMMAND_TIMEOUT_S
from ..errors import ConnectionError
from ..types import JsonObject, StreamResult
from .http import AsyncOpenStream

OnOutput = Optional[Callable[[str], None]]


def exec_body(command: str, args: Optional[List[str]], env: Optional[Dict[str, str]], cwd: Optional[str], timeout_s: Optional[float]) -> JsonObject:
    body: JsonObject = {"command": command}
    if args is not None:
        body["args"] = args
    if env is not None:
        body["env"] = env
    if cwd is not None:
        body["working_dir"] = cwd
    if timeout_s is not None:
        body["timeout_s"] = timeout_s
    return body


def run_deadline(timeout: Optional[float], timeout_s: Optional[float]) -> float:
    """A run's call deadline follows the command's own limit unless given."""
    return timeout if timeout is not None else (DEFAULT_COMMAND_TIMEOUT_S if timeout_s is None else timeout_s) + ANSWER_SLACK


async def follow_output(stream: AsyncOpenStream, on_stdout: OnOutput, on_stderr: OnOutput, what: str) -> StreamResult:
    """Reads a stream of exec events (a command's or a background process's) to its final event."""
    try:
        async for event in stream.events():
            if event.get("stdout") and on_stdout:
                on_stdout(event["stdout"])
            if event.get("stderr") and on_stderr:
                on_stderr(event["stderr"])
            if event.get("finished"):
                return StreamResult(exit_code=event.get("exit_code", -1), error=event.get("error"))
    finally:
        await stream.aclose()
    raise ConnectionError(f"{what}: the stream ended before the command finished")
