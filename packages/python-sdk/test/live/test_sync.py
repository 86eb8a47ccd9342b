"""The blocking client against a real server (container driver)."""

from __future__ import annotations

import hashlib
import io
import os
from typing import Iterator, List

import pytest

import sandpit
from sandpit import (
    AuthError,
    ConflictError,
    NotFoundError,
    Sandbox,
    SandpitClient,
    ServerError,
    TimeoutError,
)

MiB = 1024 * 1024


def pattern(size: int, digest: "hashlib._Hash") -> Iterator[bytes]:
    """``size`` bytes of a repeatable pattern, a chunk at a time (never held whole)."""
    block = bytes(range(256)) * 4096
    sent = 0
    while sent < size:
        chunk = block[: min(len(block), size - sent)]
        digest.update(chunk)
        sent += len(chunk)
        yield chunk


def test_the_installed_package_is_what_runs() -> None:
    prefix = os.environ.get("SDK_TEST_INSTALL_PREFIX")
    if prefix:
        assert sandpit.__file__.startswith(prefix), sandpit.__file__
    assert os.path.exists(os.path.join(os.path.dirname(sandpit.__file__), "py.typed"))


def test_commands_run_stream_and_background(sandbox: Sandbox) -> None:
    result = sandbox.commands.run('python3 -c "print(6 * 7)"')
    assert (result.stdout, result.exit_code, result.truncated) == ("42\n", 0, False)
    assert sandbox.commands.run("printf", args=["%s-%s", "a b", "c"]).stdout == "a b-c"
    assert sandbox.commands.run("echo $X; pwd", env={"X": "set"}, cwd="/tmp").stdout == "set\n/tmp\n"
    assert sandbox.commands.run("exit 3").exit_code == 3
    assert sandbox.commands.run("sleep 5", timeout_s=1).exit_code == 124

    chunks: List[str] = []
    streamed = sandbox.commands.run("for i in 1 2 3; do echo tick $i; done; echo oops >&2; exit 4", on_stdout=chunks.append)
    assert "".join(chunks) == "tick 1\ntick 2\ntick 3\n" == streamed.stdout
    assert (streamed.stderr, streamed.exit_code) == ("oops\n", 4)
    errors: List[str] = []
    assert sandbox.commands.stream("echo e >&2; exit 2", on_stderr=errors.append).exit_code == 2
    assert errors == ["e\n"]

    handle = sandbox.commands.run("cat", background=True)
    handle.send_stdin("echoed back\n", eof=True)
    out: List[str] = []
    assert handle.wait(on_stdout=out.append).exit_code == 0
    assert "".join(out) == "echoed back\n"

    control = sandbox.exec("echo over the control plane")
    assert control.stdout == "over the control plane\n"
    assert sandbox.exec_stream("exit 6").exit_code == 6


def test_processes(sandbox: Sandbox) -> None:
    sleeper = sandbox.processes.start("sleep 300")
    assert sleeper["running"] is True
    assert any(p["id"] == sleeper["id"] for p in sandbox.processes.list())
    talker = sandbox.processes.start("echo hello; read line; echo got $line >&2")
    sandbox.processes.send_stdin(talker["id"], b"bytes\n")
    err: List[str] = []
    assert sandbox.processes.stream(talker["id"], on_stderr=err.append).exit_code == 0
    assert "".join(err) == "got bytes\n"
    assert sandbox.processes.output(talker["id"])["stdout"] == "hello\n"
    sandbox.processes.signal(sleeper["id"], "SIGTERM")
    assert sandbox.processes.stream(sleeper["id"]).exit_code == 143
    assert sandbox.processes.kill(sleeper["id"]) is True
    assert sandbox.processes.kill(sleeper["id"]) is False
    with pytest.raises(NotFoundError):
        sandbox.processes.get(sleeper["id"])


def test_files(sandbox: Sandbox) -> None:
    binary = bytes(range(256)) * 16
    written = sandbox.files.write("data/bin.dat", binary)
    assert (written["path"], written["size"]) == ("/home/user/data/bin.dat", len(binary))
    assert sandbox.files.read("data/bin.dat") == binary
    sandbox.files.write("/tmp/héllo.txt", "héllo wörld\n")
    assert sandbox.files.read("/tmp/héllo.txt", format="text") == "héllo wörld\n"
    sandbox.files.write("from-file.txt", io.BytesIO(b"from a file object"))
    assert sandbox.files.read("from-file.txt") == b"from a file object"

    up = hashlib.sha256()
    assert sandbox.files.write("big.bin", pattern(8 * MiB, up))["size"] == 8 * MiB
    assert sandbox.commands.run("sha256sum big.bin").stdout.split()[0] == up.hexdigest()
    down = hashlib.sha256()
    received = 0
    with sandbox.files.read("big.bin", format="stream") as download:
        for chunk in download:
            down.update(chunk)
            received += len(chunk)
    assert (received, down.hexdigest()) == (8 * MiB, up.hexdigest())

    assert sandbox.files.mkdir("tree/a/b")["type"] == "dir"
    sandbox.files.write("tree/a/one.txt", "one")
    assert [(e["name"], e["type"]) for e in sandbox.files.list("tree/a")] == [("b", "dir"), ("one.txt", "file")]
    assert sandbox.files.rename("tree/a/one.txt", "tree/two.txt")["path"] == "/home/user/tree/two.txt"
    assert sandbox.files.stat("tree/two.txt")["size"] == 3
    with pytest.raises(ConflictError):
        sandbox.files.remove("tree")
    sandbox.files.remove("tree", recursive=True)
    with pytest.raises(NotFoundError) as caught:
        sandbox.files.stat("tree")
    assert caught.value.code == "not_found"


def test_watch_sees_changes_made_after_it_returns(sandbox: Sandbox) -> None:
    sandbox.files.mkdir("watched")
    with sandbox.files.watch("watched", idle_timeout=20) as watch:
        sandbox.files.write("watched/new.txt", "x")
        sandbox.files.rename("watched/new.txt", "watched/renamed.txt")
        seen = []
        for event in watch:
            seen.append((event.get("type"), event.get("path")))
            if event.get("path", "").endswith("renamed.txt"):
                break
    assert ("rename_to", "/home/user/watched/renamed.txt") in seen
    assert any(path == "/home/user/watched/new.txt" for _, path in seen)


def test_terminals(sandbox: Sandbox) -> None:
    info = sandbox.terminals.create(cols=100, rows=30)
    assert any(t["id"] == info["id"] for t in sandbox.terminals.list())
    with sandbox.terminals.connect(info["id"]) as term:
        term.write('echo "from the terminal: $((6 * 7))"\n')
        term.resize(120, 40)
        term.write("stty size; exit 3\n")
        output = bytearray()
        exit = term.wait(on_data=output.extend, timeout=30)
    assert (exit.exit_code, exit.signal) == (3, None)
    assert b"from the terminal: 42" in output and b"40 120" in output

    lasting = sandbox.terminals.create(command="sleep 300")
    with sandbox.terminals.connect(lasting["id"]) as term:
        with pytest.raises(TimeoutError):
            term.recv(timeout=0.5)
    assert sandbox.terminals.kill(lasting["id"]) is True
    assert sandbox.terminals.kill(lasting["id"]) is False
    with pytest.raises(NotFoundError):
        sandbox.terminals.connect("no-such-terminal")


def test_lifecycle_and_errors(api: SandpitClient) -> None:
    with Sandbox.create(client=api, name="lifecycle", metadata={"suite": "py-lifecycle"}) as sandbox:
        sandbox.files.write("kept.txt", "kept")
        assert sandbox.pause()["status"] == "paused"
        with pytest.raises(ConflictError) as conflict:
            sandbox.pause()
        assert (conflict.value.status, conflict.value.code) == (409, "conflict")
        attached = Sandbox.connect(sandbox.id, client=api)
        assert attached.info["status"] == "active"
        assert attached.files.read("kept.txt") == b"kept"
        with pytest.raises(ConflictError):
            sandbox.resume()
        sandbox.pause()
        assert sandbox.resume()["status"] == "active"
        assert sandbox.commands.run("cat kept.txt").stdout == "kept"
        assert sandbox.pause(keep_memory=False)["kept_memory"] is False
        assert sandbox.resume(keep_memory=False)["status"] == "active"
        assert sandbox.commands.run("cat kept.txt").stdout == "kept"
        # One host has no other node to move it to: 409, and it runs on.
        with pytest.raises(ConflictError):
            sandbox.migrate()
        assert sandbox.update({"metadata": {"suite": "py-lifecycle", "step": "2"}})["metadata"]["step"] == "2"
        found = [sb["id"] for page in Sandbox.list(client=api, metadata={"suite": "py-lifecycle"}, status="active") for sb in page]
        assert found == [sandbox.id]
        with pytest.raises(ServerError) as unavailable:
            sandbox.snapshot(name="container-cannot")
        assert (unavailable.value.status, unavailable.value.code) == (503, "unavailable")
    assert sandbox.kill() is False
    with pytest.raises(NotFoundError):
        Sandbox.get(sandbox.id, client=api)


def test_preview_ports(sandbox: Sandbox) -> None:
    published = sandbox.preview_ports.publish(8080, access="private")
    assert published["port"] == 8080 and published.get("preview_token")
    assert [p["port"] for p in sandbox.preview_ports.list()] == [8080]
    assert sandbox.preview_url(8080).startswith("http://8080-" + sandbox.id)
    sandbox.preview_ports.unpublish(8080)
    assert sandbox.preview_ports.list() == []


def test_account_resources(api: SandpitClient) -> None:
    assert api.info()["driver"] == "container"
    secret = api.secrets.create("py-token", "s3cret-value", allowed_hosts=["example.com"])
    assert secret["name"] == "py-token" and "value" not in secret
    assert [s["name"] for s in api.secrets.list()] == ["py-token"]
    api.secrets.revoke("py-token")
    assert api.secrets.list() == []

    created = api.api_keys.create("py-readonly", permissions=["sandboxes:read"])
    with SandpitClient(api_key=created["key"]) as limited:
        assert limited.me()["permissions"] == ["sandboxes:read"]
        api.api_keys.revoke(created["id"])
        with pytest.raises(AuthError):
            limited.me()

    assert "current_charges_usd" in api.billing.summary()
    periods = api.billing.periods()
    assert api.billing.usage(period_id=periods[0]["period_id"])["period_id"] == periods[0]["period_id"]
    assert "sandboxes" in api.billing.sandbox_usage()
    assert api.team.management()["team_id"] == api.team_id()
    invited = api.team.invite("dev@example.com", "Dev", "member")
    user_id = invited["member"]["user_id"]
    assert api.team.grant_role(user_id, "billing_viewer")["role_name"] == "billing_viewer"
    with pytest.raises(ConflictError):
        api.team.grant_role(user_id, "billing_viewer")
    api.team.revoke_role(user_id, "billing_viewer")
    api.team.deactivate(user_id)
    members = {m["user_id"]: m for m in api.team.management()["members"]}
    assert members[user_id]["status"] == "deactivated"


def test_templates_build_with_a_log(api: SandpitClient) -> None:
    template = api.templates.create("py-tools", steps=[{"type": "env", "env": {"MODE": "ci"}}, {"type": "run", "command": "echo built > /tmp/mark"}])
    lines: List[str] = []
    result = api.templates.logs(template["id"], template["build_id"], on_line=lines.append)
    assert (result.status, result.error) == ("ready", None)
    assert any("step 2/2" in line for line in lines)
    assert api.templates.get("py-tools")["status"] == "ready"
    with Sandbox.create(client=api, from_template="py-tools") as sandbox:
        assert sandbox.commands.run("echo $MODE; cat /tmp/mark").stdout == "ci\nbuilt\n"
    # A rebuild takes the cached layer; no_cache runs the step again.
    for no_cache, expected in ((None, ["config", "cached"]), (True, ["config", "ran"])):
        again = api.templates.create("py-tools", steps=template["steps"], no_cache=no_cache)
        assert api.templates.logs(again["id"], again["build_id"]).status == "ready"
        assert [s["result"] for s in api.templates.build(again["id"], again["build_id"])["steps"]] == expected
    assert api.templates.delete("py-tools") is True
    assert api.templates.delete("py-tools") is False
