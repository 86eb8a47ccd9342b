"""Jupyter kernels for javascript and typescript (a Node.js process) and bash (a bash process), on ipykernel's wrapper-kernel base."""
import codecs
import json
import os
import queue
import secrets
import subprocess
import sys
import threading

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from sandbox_env import sandbox_env

HERE = os.path.dirname(os.path.abspath(__file__))


def pump(stream, name, out):
    """Forwards a pipe's bytes as they come; None marks its end."""
    while True:
        data = os.read(stream.fileno(), 65536)
        if not data:
            out.put((name, None))
            return
        out.put((name, data))


class ProcessKernel(Kernel):
    """A kernel whose state lives in one child process, started again if it exits."""

    proc = None

    def _env(self):
        # The process may start after this kernel did, when the sandbox's own env existed (sandbox_env.py).
        return {**os.environ, **sandbox_env()}

    def _ok(self):
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _error(self, name, value, traceback, silent):
        if not silent:
            self.send_response(self.iopub_socket, "error", {"ename": name, "evalue": value, "traceback": traceback})
        return {"status": "error", "execution_count": self.execution_count, "ename": name, "evalue": value, "traceback": traceback}

    def _stream(self, name, text, silent):
        if text and not silent:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})


class JavascriptKernel(ProcessKernel):
    implementation = "sandpit-javascript"
    implementation_version = "1.0"
    language = "javascript"
    language_version = "node"
    language_info = {"name": "javascript", "mimetype": "application/javascript", "file_extension": ".js"}
    banner = "Node.js"

    node_args = []
    runner_args = []

    def _start(self):
        argv = ["node", *self.node_args, os.path.join(HERE, "js-runner.mjs"), *self.runner_args]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=self._env())

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(json.dumps({"code": code}) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            event = json.loads(line)
            if "stream" in event:
                self._stream(event["stream"], event["text"], silent)
            elif "display" in event and not silent:
                kind = "execute_result" if event.get("main") else "display_data"
                content = {"data": event["display"], "metadata": {}}
                if kind == "execute_result":
                    content["execution_count"] = self.execution_count
                self.send_response(self.iopub_socket, kind, content)
            elif "error" in event:
                e = event["error"]
                return self._error(e["name"], e["value"], e["traceback"], silent)
            elif "done" in event:
                return self._ok()
        code = self.proc.wait()
        return self._error("ProcessExited", f"node exited with status {code}; its state is lost", [], silent)


class TypescriptKernel(JavascriptKernel):
    implementation = "sandpit-typescript"
    language = "typescript"
    language_info = {"name": "typescript", "mimetype": "text/typescript", "file_extension": ".ts"}
    banner = "TypeScript (Node.js)"
    # Node's type stripping warns that it is experimental on first use: not output of the user's code.
    node_args = ["--disable-warning=ExperimentalWarning"]
    runner_args = ["--typescript"]


class BashKernel(ProcessKernel):
    implementation = "sandpit-bash"
    implementation_version = "1.0"
    language = "bash"
    language_version = "5"
    language_info = {"name": "bash", "mimetype": "text/x-sh", "file_extension": ".sh"}
    banner = "bash"

    def _start(self):
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env())
        self.events = queue.Queue()
        for stream, name in ((self.proc.stdout, "stdout"), (self.proc.stderr, "stderr")):
            threading.Thread(target=pump, args=(stream, name, self.events), daemon=True).start()

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        mark = secrets.token_hex(8)
        # The status is printed after a marker on stdout; stderr gets the bare marker, so both are read to the end of the run.
        script = f"{code}\n__st=$?; printf '\\036{mark}:%d\\036' \"$__st\"; printf '\\036{mark}\\036' >&2\n"
        self.proc.stdin.write(script.encode())
        self.proc.stdin.flush()
        token = f"\036{mark}".encode()
        buffers = {"stdout": b"", "stderr": b""}
        decoders = {n: codecs.getincrementaldecoder("utf-8")(errors="replace") for n in buffers}
        status = None
        open_streams = {"stdout", "stderr"}
        while open_streams:
            name, data = self.events.get()
            if data is None:
                self._stream(name, decoders[name].decode(buffers[name], final=True), silent)
                open_streams.discard(name)
                continue
            buf = buffers[name] + data
            at = buf.find(token)
            if at >= 0:
                self._stream(name, decoders[name].decode(buf[:at], final=True), silent)
                if name == "stdout":
                    rest = buf[at + len(token) + 1 :]
                    status = int(rest[: rest.index(b"\036")].decode())
                buffers[name] = b""
                open_streams.discard(name)
                continue
            # Hold back a tail that may be the start of the marker; the rest goes now.
            keep = len(token) + 16
            self._stream(name, decoders[name].decode(buf[:-keep]), silent)
            buffers[name] = buf[-keep:]
        if status is None:
            self.proc.wait()
            return self._error("ProcessExited", f"bash exited with status {self.proc.returncode}; its state is lost", [], silent)
        if status != 0:
            return self._error("ExitError", f"exit status {status}", [], silent)
        return self._ok()


if __name__ == "__main__":
    kernel = {"javascript": JavascriptKernel, "typescript": TypescriptKernel, "bash": BashKernel}[sys.argv.pop(1)]
    IPKernelApp.launch_instance(kernel_class=kernel)
