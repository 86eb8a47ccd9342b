"""Volumes through both clients against a real server (container driver)."""

from __future__ import annotations

import asyncio
import io
import os
from typing import AsyncIterator, Iterator, List

import pytest

from sandpit import (
    AsyncSandpitClient,
    BadRequestError,
    ConflictError,
    InsufficientStorageError,
    NotFoundError,
    Sandbox,
    SandpitClient,
    ServerError,
)

MiB = 1024 * 1024


def chunks(count: int, size: int) -> Iterator[bytes]:
    """``count`` chunks of ``size`` bytes, sent without a length up front."""
    for i in range(count):
        yield bytes([i % 256]) * size


async def async_chunks(count: int, size: int) -> AsyncIterator[bytes]:
    for chunk in chunks(count, size):
        yield chunk


@pytest.fixture
def volumes(api: SandpitClient) -> Iterator[List[str]]:
    """Names of the volumes a test makes; whatever of them is left is deleted after it."""
    made: List[str] = []
    yield made
    for name in made:
        api.volumes.delete(name)


def test_volume_lifecycle_and_errors(api: SandpitClient, volumes: List[str]) -> None:
    volumes.extend(["py-a", "py-b"])
    a = api.volumes.create("py-a", 4)
    assert (a["name"], a["size_mib"], a["mounted_by"]) == ("py-a", 4, [])
    assert isinstance(a["used_bytes"], int)
    b = api.volumes.create("py-b", 4)
    pages = [[v["name"] for v in page] for page in api.volumes.list(limit=1)]
    assert [name for page in pages for name in page if name.startswith("py-")] == ["py-b", "py-a"]
    assert all(len(page) <= 1 for page in pages)
    assert api.volumes.get("py-a")["id"] == a["id"]
    assert api.volumes.get(a["id"])["name"] == "py-a"

    with pytest.raises(ConflictError) as conflict:
        api.volumes.create("py-a", 1)
    assert (conflict.value.status, conflict.value.code) == (409, "conflict")
    with pytest.raises(BadRequestError) as bad:
        api.volumes.create("../x", 1)
    assert (bad.value.status, bad.value.code) == (400, "bad_request")
    with pytest.raises(NotFoundError):
        api.volumes.get("py-nope")

    assert api.volumes.grow("py-a", 16)["size_mib"] == 16
    with pytest.raises(BadRequestError):
        api.volumes.grow("py-a", 8)

    assert api.volumes.delete(b["id"]) is True
    assert api.volumes.delete("py-b") is False
    assert api.volumes.delete("py-a") is True
    assert not [v for page in api.volumes.list() for v in page if v["name"].startswith("py-")]


def test_volume_files(api: SandpitClient, volumes: List[str]) -> None:
    volumes.extend(["py-files", "py-small"])
    api.volumes.create("py-files", 8)
    files = api.volumes.files
    entry = files.write("py-files", "/notes/hello.txt", "héllo\n")
    assert (entry["name"], entry["path"], entry["type"], entry["size"]) == ("hello.txt", "/notes/hello.txt", "file", 7)
    assert files.read("py-files", "notes/hello.txt", format="text") == "héllo\n"

    big = os.urandom(2 * MiB)
    assert files.write("py-files", "data/big.bin", io.BytesIO(big))["size"] == 2 * MiB
    assert files.read("py-files", "data/big.bin") == big
    with files.read("py-files", "data/big.bin", format="stream") as download:
        assert b"".join(download) == big

    assert [(e["name"], e["type"]) for e in files.list("py-files")] == [("data", "dir"), ("notes", "dir")]
    assert [e["path"] for e in files.list("py-files", "/notes")] == ["/notes/hello.txt"]
    files.remove("py-files", "notes/hello.txt")
    with pytest.raises(NotFoundError):
        files.read("py-files", "notes/hello.txt")
    with pytest.raises(ConflictError):
        files.remove("py-files", "data")
    with pytest.raises(BadRequestError):
        files.read("py-files", "../outside")

    api.volumes.create("py-small", 2)
    with pytest.raises(InsufficientStorageError) as full:
        files.write("py-small", "whole.bin", bytes(4 * MiB))
    assert isinstance(full.value, ServerError)
    assert (full.value.status, full.value.code) == (507, "insufficient_storage")
    with pytest.raises(InsufficientStorageError):
        files.write("py-small", "streamed.bin", chunks(16, 256 * 1024))
    assert files.list("py-small") == []


def test_a_sandbox_sees_an_uploaded_file_and_a_mounted_volume_cannot_be_deleted(api: SandpitClient, volumes: List[str]) -> None:
    volumes.append("py-mounted")
    api.volumes.create("py-mounted", 8)
    api.volumes.files.write("py-mounted", "in/greeting.txt", b"from python\n")
    with Sandbox.create(client=api, volumes=[{"volume": "py-mounted", "path": "/data"}]) as sandbox:
        seen = sandbox.commands.run("cat /data/in/greeting.txt")
        assert (seen.exit_code, seen.stdout) == (0, "from python\n")
        with pytest.raises(ConflictError):
            api.volumes.delete("py-mounted")
    assert api.volumes.delete("py-mounted") is True


def test_async_volumes() -> None:
    async def main() -> None:
        async with AsyncSandpitClient() as client:
            await client.volumes.create("py-async", 4)
            try:
                assert (await client.volumes.files.write("py-async", "a/b.bin", async_chunks(4, 256 * 1024)))["size"] == MiB
                received = b""
                async with await client.volumes.files.read("py-async", "a/b.bin", format="stream") as download:
                    async for chunk in download:
                        received += chunk
                assert received == b"".join(chunks(4, 256 * 1024))
                names = [v["name"] async for page in client.volumes.list() for v in page]
                assert "py-async" in names
            finally:
                assert await client.volumes.delete("py-async") is True

    asyncio.run(main())
