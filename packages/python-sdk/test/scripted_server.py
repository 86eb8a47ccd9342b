"""A local HTTP server that answers from a script, for the client rules no real server shows on demand
(5xx, Retry-After, dropped connections, stalls)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    #: Close the connection without answering (a network error).
    drop: bool = False
    #: Raw body lines written one by one (for event streams), with an optional pause before the end.
    lines: Optional[List[str]] = None
    stall: float = 0.0


def envelope(code: str, message: str = "scripted") -> Dict[str, Any]:
    return {"error": {"code": code, "message": message}}


class ScriptedServer:
    """``script(n, seen)`` answers the n-th request (from 1)."""

    def __init__(self, script: Callable[[int, Seen], Reply]) -> None:
        self.seen: List[Seen] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                outer.seen.append(seen)
                reply = script(len(outer.seen), seen)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if reply.lines is not None:
                    self.send_response(reply.status)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for line in reply.lines:
                        self.wfile.write(line.encode())
                        self.wfile.flush()
                    threading.Event().wait(reply.stall)
                    self.close_connection = True
                    return
                data = b"" if reply.body is None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
