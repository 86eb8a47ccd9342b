"""The asyncio client against a real server (container driver)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from typing import AsyncIterator, List

import pytest

from sandpit import AsyncSandbox, AsyncSandpitClient, ConflictError, NotFoundError

MiB = 1024 * 1024


async def pattern(size: int, digest: "hashlib._Hash") -> AsyncIterator[bytes]:
    block = bytes(range(256)) * 4096
    sent = 0
    while sent < size:
        chunk = block[: min(len(block), size - sent)]
        digest.update(chunk)
        sent += len(chunk)
        yield chunk


def test_async_sandbox_end_to_end() -> None:
    if not os.environ.get("SANDPIT_API_URL") or not os.environ.get("SANDPIT_API_KEY"):
        pytest.fail("the live tests need SANDPIT_API_URL and SANDPIT_API_KEY of a running server")

    async def main() -> None:
        async with AsyncSandpitClient() as client:
            async with await AsyncSandbox.create(client=client, name="py-async", metadata={"suite": "py-async"}) as sandbox:
                result = await sandbox.commands.run('python3 -c "print(6 * 7)"')
                assert (result.stdout, result.exit_code) == ("42\n", 0)
                chunks: List[str] = []
                assert (await sandbox.commands.stream("echo a; exit 5", on_stdout=chunks.append)).exit_code == 5
                assert chunks == ["a\n"]
                handle = await sandbox.commands.run("cat", background=True)
                await handle.send_stdin("round trip\n", eof=True)
                out: List[str] = []
                assert (await handle.wait(on_stdout=out.append)).exit_code == 0
                assert "".join(out) == "round trip\n"

                # Two commands at once on one client.
                both = await asyncio.gather(sandbox.commands.run("sleep 1; echo one"), sandbox.commands.run("sleep 1; echo two"))
                assert [r.stdout for r in both] == ["one\n", "two\n"]

                up = hashlib.sha256()
                assert (await sandbox.files.write("big.bin", pattern(4 * MiB, up)))["size"] == 4 * MiB
                down = hashlib.sha256()
                async with await sandbox.files.read("big.bin", format="stream") as download:
                    async for chunk in download:
                        down.update(chunk)
                assert down.hexdigest() == up.hexdigest()
                assert await sandbox.files.read("big.bin", format="bytes") == b"".join([c async for c in pattern(4 * MiB, hashlib.sha256())])

                await sandbox.files.mkdir("w")
                async with await sandbox.files.watch("w", idle_timeout=20) as watch:
                    await sandbox.files.write("w/x.txt", "x")
                    async for event in watch:
                        if event.get("path") == "/home/user/w/x.txt":
                            break

                info = await sandbox.terminals.create()
                async with await sandbox.terminals.connect(info["id"]) as term:
                    await term.write("echo $((40 + 2)); exit 7\n")
                    output = bytearray()
                    exit = await term.wait(on_data=output.extend, timeout=30)
                assert exit.exit_code == 7 and b"42" in output

                await sandbox.pause()
                with pytest.raises(ConflictError):
                    await sandbox.pause()
                await sandbox.resume()
                assert (await sandbox.exec("echo back")).stdout == "back\n"
                pages = [page async for page in AsyncSandbox.list(client=client, metadata={"suite": "py-async"})]
                assert [sb["id"] for page in pages for sb in page] == [sandbox.id]
            assert await AsyncSandbox.kill_by_id(sandbox.id, client=client) is False
            with pytest.raises(NotFoundError):
                await AsyncSandbox.get(sandbox.id, client=client)

    asyncio.run(main())
