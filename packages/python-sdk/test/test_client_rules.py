"""The contract's client rules (retries, errors, deadlines, streams) against a scripted local server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Iterator

import pytest

from sandpit import (
    ApiError,
    AsyncSandpitClient,
    AuthError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
    ConnectionError,
    InsufficientStorageError,
    NotFoundError,
    RateLimitError,
    Sandbox,
    SandpitClient,
    SandpitError,
    ServerError,
    TimeoutError,
)
from scripted_server import Reply, ScriptedServer, Seen, envelope

KEY = "sp_unit_key"
SANDBOX = {
    "id": "sb-local-6f1c1f0e-2a8e-4f57-9a3e-0a4f7c1d2b3c",
    "template_id": "platform/base",
    "status": "active",
    "driver": "container",
    "metadata": {},
    "preview_access": "public",
    "secrets": [],
    "resources": {"vcpu_count": 1, "memory_mib": 1024, "disk_mib": 4096},
    "region": "local",
    "created_at": "2025-01-01T00:00:00.000Z",
    "updated_at": "2025-01-01T00:00:00.000Z",
}


def client(url: str, **options: float) -> SandpitClient:
    return SandpitClient(api_url=url, api_key=KEY, retry_delay=0.005, **options)  # type: ignore[arg-type]


@pytest.fixture
def scripted() -> Iterator[list]:
    servers: list = []
    yield servers
    for server in servers:
        server.close()


def serve(servers: list, script) -> ScriptedServer:  # type: ignore[no-untyped-def]
    server = ScriptedServer(script)
    servers.append(server)
    return server


def test_get_is_retried_after_503(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(503, envelope("unavailable")) if n == 1 else Reply(200, SANDBOX))
    assert client(srv.url).sandboxes.get(SANDBOX["id"])["id"] == SANDBOX["id"]
    assert len(srv.seen) == 2
    assert srv.seen[1].headers["x-api-key"] == KEY


def test_post_and_patch_are_never_retried(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(503, envelope("unavailable", "try later")))
    with pytest.raises(ServerError) as caught:
        client(srv.url).sandboxes.create({"name": "x"})
    assert (caught.value.status, caught.value.code, caught.value.message) == (503, "unavailable", "try later")
    assert len(srv.seen) == 1 and json.loads(srv.seen[0].body) == {"name": "x"}
    with pytest.raises(ServerError):
        client(srv.url).sandboxes.update(SANDBOX["id"], {"name": "y"})
    assert len(srv.seen) == 2 and srv.seen[1].method == "PATCH"


def test_delete_is_retried_after_500(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(500, envelope("internal")) if n == 1 else Reply(204))
    assert client(srv.url).sandboxes.kill(SANDBOX["id"]) is True
    assert [s.method for s in srv.seen] == ["DELETE", "DELETE"]


def test_retry_after_is_honoured_on_429(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(429, envelope("rate_limited"), {"retry-after": "1"}) if n == 1 else Reply(200, SANDBOX))
    started = time.monotonic()
    client(srv.url).sandboxes.get(SANDBOX["id"])
    assert time.monotonic() - started >= 1.0
    assert len(srv.seen) == 2


def test_network_errors_retry_a_get_but_not_a_post(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(drop=True) if n == 1 else Reply(200, SANDBOX))
    assert client(srv.url).sandboxes.get(SANDBOX["id"])["id"] == SANDBOX["id"]
    dropped = serve(scripted, lambda n, _: Reply(drop=True))
    with pytest.raises(ConnectionError):
        client(dropped.url).sandboxes.pause(SANDBOX["id"])
    assert len(dropped.seen) == 1


def test_gives_up_after_max_retries_with_the_last_answer(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(502, envelope("bad_gateway", f"attempt {n}")))
    with pytest.raises(ServerError) as caught:
        client(srv.url, max_retries=2).sandboxes.get(SANDBOX["id"])
    assert caught.value.message == "attempt 3" and len(srv.seen) == 3


def test_statuses_map_to_typed_errors_with_codes(scripted: list) -> None:
    cases = [(400, "bad_request", BadRequestError), (401, "unauthorized", AuthError), (404, "not_found", NotFoundError),
             (409, "conflict", ConflictError), (429, "too_many_sandboxes", RateLimitError), (418, "teapot", ApiError)]
    for status, code, cls in cases:
        srv = serve(scripted, lambda n, _, s=status, c=code: Reply(s, envelope(c)))
        with pytest.raises(cls) as caught:
            client(srv.url, max_retries=0).sandboxes.pause(SANDBOX["id"])
        assert (caught.value.status, caught.value.code) == (status, code)
        assert isinstance(caught.value, SandpitError)


def test_507_is_insufficient_storage_and_never_retried(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(507, envelope("insufficient_storage")))
    with pytest.raises(InsufficientStorageError) as caught:
        client(srv.url).volumes.files.read("v", "/x")
    assert isinstance(caught.value, ServerError)
    assert (caught.value.status, caught.value.code) == (507, "insufficient_storage")
    assert len(srv.seen) == 1


def test_kill_helpers_swallow_404(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(404, envelope("not_found")))
    c = client(srv.url)
    assert c.sandboxes.kill("gone") is False
    assert c.snapshots.delete("gone") is False
    assert c.templates.delete("gone") is False
    assert Sandbox.kill_by_id("gone", client=c) is False


def test_no_api_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SANDPIT_API_KEY", raising=False)
    with pytest.raises(ConfigurationError):
        SandpitClient(api_url="http://127.0.0.1:9").sandboxes.get("x")


def test_env_configures_the_client(scripted: list, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(scripted, lambda n, _: Reply(200, SANDBOX))
    monkeypatch.setenv("SANDPIT_API_URL", srv.url)
    monkeypatch.setenv("SANDPIT_API_KEY", "sp_from_env")
    assert Sandbox.get(SANDBOX["id"])["id"] == SANDBOX["id"]
    assert srv.seen[0].headers["x-api-key"] == "sp_from_env"


def test_a_stalled_answer_is_a_timeout_at_the_deadline(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(200, lines=[], stall=3))
    with pytest.raises(TimeoutError):
        client(srv.url, timeout=0.5, max_retries=0).sandboxes.get(SANDBOX["id"])


def test_event_streams_parse_data_lines_and_ignore_the_rest(scripted: list) -> None:
    events = [": keepalive\n", "event: x\n", 'data: {"stdout": "a"}\n\n', 'data: {"stderr": "b"}\r\n', 'data: {"finished": true, "exit_code": 7, "error": "timeout"}\n']
    srv = serve(scripted, lambda n, _: Reply(200, lines=events))
    out: list = []
    result = client(srv.url).sandboxes.exec_stream("sb", "x", on_stdout=out.append, on_stderr=out.append)
    assert (result.exit_code, result.error, out) == (7, "timeout", ["a", "b"])


def test_a_silent_stream_fails_at_the_idle_deadline_and_an_early_end_is_a_connection_error(scripted: list) -> None:
    silent = serve(scripted, lambda n, _: Reply(200, lines=[': keepalive\n'], stall=3))
    with pytest.raises(TimeoutError):
        client(silent.url).sandboxes.exec_stream("sb", "x", idle_timeout=0.3)
    ended = serve(scripted, lambda n, _: Reply(200, lines=['data: {"stdout": "a"}\n']))
    with pytest.raises(ConnectionError):
        client(ended.url).sandboxes.exec_stream("sb", "x")


def test_list_follows_cursors_with_the_filters(scripted: list) -> None:
    def script(n: int, seen: Seen) -> Reply:
        return Reply(200, {"sandboxes": [SANDBOX], "next_cursor": "c1"}) if n == 1 else Reply(200, {"sandboxes": []})

    srv = serve(scripted, script)
    pages = list(Sandbox.list(status=["active", "paused"], metadata={"purpose": "demo"}, client=client(srv.url)))
    assert [len(p) for p in pages] == [1, 0]
    assert srv.seen[0].path == "/sandboxes?status=active%2Cpaused&metadata.purpose=demo"
    assert srv.seen[1].path.endswith("cursor=c1")


def test_async_client_follows_the_same_rules(scripted: list) -> None:
    srv = serve(scripted, lambda n, _: Reply(503, envelope("unavailable")) if n in (1, 3) else Reply(200, SANDBOX))

    async def main() -> None:
        async with AsyncSandpitClient(api_url=srv.url, api_key=KEY, retry_delay=0.005) as c:
            assert (await c.sandboxes.get(SANDBOX["id"]))["id"] == SANDBOX["id"]
            with pytest.raises(ServerError):
                await c.sandboxes.pause(SANDBOX["id"])

    asyncio.run(main())
    assert [s.method for s in srv.seen] == ["GET", "GET", "POST"]


def test_data_plane_calls_go_to_the_announced_address_with_the_access_token_only(scripted: list) -> None:
    plane = serve(scripted, lambda n, _: Reply(200, {"stdout": "hi\n", "stderr": "", "exit_code": 0}))

    def control(n: int, seen: Seen) -> Reply:
        if seen.path == "/info":
            return Reply(200, {"data_plane_url": plane.url + "/", "preview_url": "http://{port}-{sandbox_id}.preview.localhost"})
        return Reply(201, {**SANDBOX, "access_token": "tok_sandbox"})

    srv = serve(scripted, control)
    with Sandbox.create(client=client(srv.url), name="x") as sandbox:
        assert "access_token" not in sandbox.info
        assert sandbox.commands.run("echo hi").stdout == "hi\n"
        assert sandbox.preview_url(8080) == f"http://8080-{SANDBOX['id']}.preview.localhost"
    sent = plane.seen[0]
    assert (sent.method, sent.path) == ("POST", "/exec")
    assert sent.headers["x-access-token"] == "tok_sandbox"
    assert sent.headers["x-platform-sandbox-id"] == SANDBOX["id"]
    assert "x-api-key" not in sent.headers
    assert "x-api-key" not in srv.seen[1].headers  # GET /info needs no key
    assert [s.path for s in srv.seen] == ["/sandboxes", "/info", f"/sandboxes/{SANDBOX['id']}"]


def test_webhook_deliveries_and_the_audit_log_page_with_their_filters(scripted: list) -> None:
    def script(n: int, seen: Seen) -> Reply:
        if "/deliveries" in seen.path:
            return Reply(200, {"deliveries": [{"id": f"d{n}"}], **({} if "cursor=" in seen.path else {"next_cursor": "c2"})})
        return Reply(200, {"entries": [{"id": "a1"}]})

    srv = serve(scripted, script)
    c = client(srv.url)
    assert [len(p) for p in c.webhooks.deliveries("w1", status="failed")] == [1, 1]
    assert list(c.audit_log.list(action="sandbox.create", resource_type="sandbox")) == [[{"id": "a1"}]]
    assert [s.path for s in srv.seen] == [
        "/webhooks/w1/deliveries?status=failed",
        "/webhooks/w1/deliveries?status=failed&cursor=c2",
        "/audit-log?action=sandbox.create&resource_type=sandbox",
    ]


def test_verify_webhook_follows_the_server_recipe() -> None:
    import hashlib
    import hmac

    from sandpit import verify_webhook

    body = b'{"id":"evt_sb_1","type":"sandbox.created"}'
    t = 1_800_000_000
    header = f"t={t},v1={hmac.new(b'whsec_a', f'{t}.'.encode() + body, hashlib.sha256).hexdigest()}"
    assert verify_webhook("whsec_a", header, body, now=t + 10)
    assert not verify_webhook("whsec_b", header, body, now=t)
    assert not verify_webhook("whsec_a", header, body + b" ", now=t)
    assert not verify_webhook("whsec_a", header, body, now=t + 301)
    assert not verify_webhook("whsec_a", "garbage", body, now=t)
