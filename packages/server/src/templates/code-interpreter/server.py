"""Sandpit's code interpreter: E2B's /execute and /contexts API on port 49999 over Jupyter kernels."""
import json
import os
import queue
import select
import socket
import sys
import threading
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from jupyter_client import KernelManager
from sandbox_env import sandbox_env

PORT = int(os.environ.get("CODE_INTERPRETER_PORT", "49999"))
HOME = "/home/user"
# Kernels talk over Unix sockets, not loopback TCP: after a gVisor restore, libzmq's epoll loop was handed
# an event for a TCP socket it had already closed and crashed the process that held it.
IPC_DIR = "/tmp/.sandpit-kernels"
KERNELS = {"python": "python3", "javascript": "sandpit-javascript", "typescript": "sandpit-typescript", "r": "sandpit-r", "bash": "sandpit-bash"}
LAZY = {"r"}
ALIASES = {"py": "python", "python3": "python", "js": "javascript", "node": "javascript", "ts": "typescript", "sh": "bash"}
# Jupyter MIME types to E2B's result fields; the rest is passed through under its own name.
MIME = {
    "text/plain": "text",
    "text/html": "html",
    "text/markdown": "markdown",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpeg",
    "application/pdf": "pdf",
    "text/latex": "latex",
    "application/json": "json",
    "application/javascript": "javascript",
    "e2b/data": "data",
    "e2b/chart": "chart",
}
POLL_S = 0.5
START_TIMEOUT_S = 60


def now():
    return datetime.now(timezone.utc).isoformat()


def normalize(language):
    lang = (language or "python").strip().lower()
    return ALIASES.get(lang, lang)


def result_event(data, main):
    out = {"type": "result", "is_main_result": main}
    for mime, value in data.items():
        out[MIME.get(mime, mime)] = value
    text = out.get("text")
    # IPython quotes a string's repr; E2B reports the string itself.
    if isinstance(text, str) and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        out["text"] = text[1:-1]
    return out


def env_code(language, values):
    """Code that sets env vars in a kernel: a value to set, or None to unset."""
    if language == "python":
        return "".join(
            f"__import__('os').environ[{k!r}] = {v!r}\n" if v is not None else f"__import__('os').environ.pop({k!r}, None)\n" for k, v in values.items()
        )
    if language == "r":
        return "".join(f"Sys.setenv({json.dumps(k)} = {json.dumps(v)})\n" if v is not None else f"Sys.unsetenv({json.dumps(k)})\n" for k, v in values.items())
    if language in ("javascript", "typescript"):
        return "".join(f"process.env[{json.dumps(k)}] = {json.dumps(v)};\n" if v is not None else f"delete process.env[{json.dumps(k)}];\n" for k, v in values.items())
    return "".join(f"export {k}={shell_quote(v)}\n" if v is not None else f"unset {k}\n" for k, v in values.items() if k.isidentifier())


def shell_quote(value):
    return "'" + str(value).replace("'", "'\\''") + "'"


class CallerGone(Exception):
    """The caller closed its connection while its run went on."""


def peer_closed(sock):
    """Whether the other end closed the connection (a proxy does when its client leaves); nothing is read."""
    try:
        if not select.select([sock], [], [], 0)[0]:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class Context:
    """One kernel. Runs are serialised; a kernel found dead is reported, then restarted."""

    def __init__(self, language, cwd):
        self.id = str(uuid.uuid4())
        self.language = language
        self.cwd = cwd
        self.lock = threading.Lock()
        self.has_sandbox_env = False
        os.makedirs(IPC_DIR, mode=0o700, exist_ok=True)
        self.km = KernelManager(kernel_name=KERNELS[language], transport="ipc", ip=os.path.join(IPC_DIR, self.id))
        self.km.start_kernel(cwd=cwd)
        self.client = self._connect()

    def view(self):
        return {"id": self.id, "language": self.language, "cwd": self.cwd}

    def _connect(self):
        client = self.km.blocking_client()
        client.start_channels()
        client.wait_for_ready(timeout=START_TIMEOUT_S)
        return client

    def restart(self):
        with self.lock:
            self._restart()

    def _restart(self):
        self.client.stop_channels()
        self.km.restart_kernel(now=True)
        self.client = self._connect()
        self.has_sandbox_env = False

    def shutdown(self):
        with self.lock:
            self.client.stop_channels()
            self.km.shutdown_kernel(now=True)

    def _quiet(self, code):
        """Runs code for its effect (env vars), dropping its output."""
        for _ in self._run(code, silent=True):
            pass

    def execute(self, code, env, gone):
        """The run's events. `gone` tells whether the caller has left: then the run is interrupted."""
        with self.lock:
            if not self.km.is_alive():
                self._restart()
            sandbox = sandbox_env()
            # A kernel that started before the sandbox's env existed (a restored capture's) gets it on its first run.
            values = {} if self.has_sandbox_env else dict(sandbox)
            values.update(env)
            if values:
                self._quiet(env_code(self.language, values))
            self.has_sandbox_env = bool(sandbox)
            try:
                yield from self._run(code, silent=False, gone=gone)
            except (CallerGone, GeneratorExit):
                # Stopped, so that the context is free for the next run (GeneratorExit: the stream broke).
                self.km.interrupt_kernel()
                raise
            finally:
                if env and self.km.is_alive():
                    # Back to what the kernel had: the sandbox's value, its own, or none.
                    base = {**os.environ, **sandbox}
                    self._quiet(env_code(self.language, {k: base.get(k) for k in env}))

    def _run(self, code, silent, gone=lambda: False):
        # Runs are one at a time, so an error has nothing queued to abort but the run after an interrupted one.
        msg_id = self.client.execute(code, silent=silent, store_history=not silent, allow_stdin=False, stop_on_error=False)
        errored = False
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                if not self.km.is_alive():
                    # The next run starts a fresh kernel (execute); this one only reports what happened.
                    yield {
                        "type": "error",
                        "name": "KernelDied",
                        "value": f"the {self.language} kernel died; its state is lost and the next run starts a new one",
                        "traceback": "",
                    }
                    return
                if gone():
                    raise CallerGone()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                yield {"type": content["name"], "text": content["text"], "timestamp": now()}
            elif kind == "execute_result":
                yield result_event(content["data"], True)
            elif kind == "display_data":
                yield result_event(content["data"], False)
            elif kind == "error" and not errored:
                errored = True
                yield {"type": "error", "name": content["ename"], "value": content["evalue"], "traceback": "\n".join(content["traceback"])}
            elif kind == "execute_input":
                yield {"type": "number_of_executions", "execution_count": content["execution_count"]}
            elif kind == "status" and content["execution_state"] == "idle":
                return


class Contexts:
    def __init__(self):
        self.by_id = {}
        self.defaults = {}
        self.lock = threading.Lock()
        # A default context is started once, outside the registry's lock, so languages start side by side.
        self.starting = {language: threading.Lock() for language in KERNELS}

    def create(self, language, cwd):
        ctx = Context(language, cwd)
        with self.lock:
            self.by_id[ctx.id] = ctx
        return ctx

    def default(self, language):
        with self.starting[language]:
            with self.lock:
                ctx = self.defaults.get(language)
            if ctx is None:
                ctx = Context(language, HOME)
                with self.lock:
                    self.by_id[ctx.id] = ctx
                    self.defaults[language] = ctx
            return ctx

    def get(self, context_id):
        with self.lock:
            return self.by_id.get(context_id)

    def remove(self, context_id):
        with self.lock:
            ctx = self.by_id.pop(context_id, None)
            for lang, d in list(self.defaults.items()):
                if d is ctx:
                    del self.defaults[lang]
        if ctx:
            ctx.shutdown()
        return ctx

    def list(self):
        with self.lock:
            return [c.view() for c in self.by_id.values()]


CONTEXTS = Contexts()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Each event line goes out as it is written, not held until the previous one is acknowledged.
    disable_nagle_algorithm = True

    def log_message(self, *_args):
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        return body

    def _send(self, status, body=None, text=None):
        data = (text if text is not None else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text is not None else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, event):
        data = (json.dumps(event) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/health":
            return self._send(200, "OK")
        if path == "/contexts":
            return self._send(200, CONTEXTS.list())
        self._send(404, text=f"no route GET {path}")

    def do_DELETE(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) == 2 and parts[0] == "contexts":
            if CONTEXTS.remove(parts[1]) is None:
                return self._send(404, text=f"Context {parts[1]} not found")
            return self._send(200, None)
        self._send(404, text="no such route")

    def do_POST(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        try:
            body = self._body()
        except ValueError as err:
            return self._send(400, text=f"invalid JSON body: {err}")
        try:
            if parts == ["execute"]:
                return self._execute(body)
            if parts == ["contexts"]:
                language = normalize(body.get("language"))
                if language not in KERNELS:
                    return self._send(400, text=f"unsupported language '{language}'; one of {', '.join(KERNELS)}")
                return self._send(200, CONTEXTS.create(language, body.get("cwd") or HOME).view())
            if len(parts) == 3 and parts[0] == "contexts" and parts[2] == "restart":
                ctx = CONTEXTS.get(parts[1])
                if ctx is None:
                    return self._send(404, text=f"Context {parts[1]} not found")
                ctx.restart()
                return self._send(200, None)
        except Exception as err:  # noqa: BLE001 - a kernel that cannot start is the caller's 500
            return self._send(500, text=f"{type(err).__name__}: {err}")
        self._send(404, text="no such route")

    def _execute(self, body):
        code = body.get("code")
        if not isinstance(code, str):
            return self._send(400, text="code must be a string")
        if body.get("context_id") and body.get("language"):
            return self._send(400, text="Only one of context_id or language can be provided")
        env = body.get("env_vars") or {}
        if body.get("context_id"):
            ctx = CONTEXTS.get(body["context_id"])
            if ctx is None:
                return self._send(404, text=f"Context {body['context_id']} not found")
        else:
            language = normalize(body.get("language"))
            if language not in KERNELS:
                return self._send(400, text=f"unsupported language '{language}'; one of {', '.join(KERNELS)}")
            ctx = CONTEXTS.default(language)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        run = ctx.execute(code, {str(k): str(v) for k, v in env.items()}, gone=lambda: peer_closed(self.connection))
        try:
            try:
                for event in run:
                    self._chunk(event)
            except (BrokenPipeError, ConnectionResetError, CallerGone):
                raise
            except Exception as err:  # noqa: BLE001 - the stream has begun: the failure is reported in it
                self._chunk({"type": "error", "name": type(err).__name__, "value": str(err), "traceback": ""})
            self._chunk({"type": "end_of_execution"})
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, CallerGone):
            # The caller went away; closing the run below interrupts it (Context.execute).
            self.close_connection = True
        finally:
            run.close()


def main():
    # The default contexts are warm before the service reports ready (and before a template capture).
    # R's starts on its first run: few use it, and it would hold about 60 MiB in every sandbox.
    warming = [threading.Thread(target=CONTEXTS.default, args=(language,)) for language in KERNELS if language not in LAZY]
    for t in warming:
        t.start()
    for t in warming:
        t.join()
    server = ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
    server.daemon_threads = True
    print(f"code interpreter listening on {PORT}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
