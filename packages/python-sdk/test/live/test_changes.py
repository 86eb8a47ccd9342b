"""A sandbox's changes against its base, a diff, and applying them to another sandbox, against a real server
(container driver)."""

from __future__ import annotations

import asyncio
import re
from typing import Iterator, List, Optional, Tuple

import pytest

from sandpit import AsyncSandpitClient, BadRequestError, NotFoundError, Sandbox, SandpitClient

UNKNOWN = "sb-local-00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def pair(api: SandpitClient) -> Iterator[Tuple[Sandbox, Sandbox]]:
    """Two sandboxes of the same template: changes are made in the first and applied to the second."""
    a = Sandbox.create(client=api, name="py-changes-a")
    b = Sandbox.create(client=api, name="py-changes-b")
    yield a, b
    a.kill()
    b.kill()


def test_lists_and_diffs_an_added_and_a_modified_file(api: SandpitClient, pair: Tuple[Sandbox, Sandbox]) -> None:
    a, _ = pair
    a.files.write("note.txt", "hi\n")
    assert a.exec("sudo sh -c 'echo hello > /etc/motd'").exit_code == 0

    page = api.sandboxes.changes(a.id, path="/home/user")
    assert page["base"] == {"kind": "template", "id": a.info["template_id"]}
    assert {"path": "/home/user/note.txt", "kind": "added", "type": "file", "size": 3} in page["changes"]
    assert api.sandboxes.changes(a.id, path="/etc/motd")["changes"] == [{"path": "/etc/motd", "kind": "modified", "type": "file", "size": 6}]

    # One entry a page: the cursors cover the whole list once.
    seen: List[str] = []
    cursor: Optional[str] = None
    while True:
        one = api.sandboxes.changes(a.id, limit=1, cursor=cursor)
        seen += [c["path"] for c in one["changes"]]
        cursor = one.get("next_cursor")
        if cursor is None:
            break
    assert seen == [c["path"] for c in api.sandboxes.changes(a.id, limit=1000)["changes"]]

    diff = api.sandboxes.change_diff(a.id, "/etc/motd")
    assert re.search(r"^--- a/etc/motd", diff, re.M) and re.search(r"^\+hello$", diff, re.M), diff
    assert re.search(r"^\+hi$", api.sandboxes.change_diff(a.id, "/home/user/note.txt"), re.M)

    with pytest.raises(NotFoundError):
        api.sandboxes.change_diff(a.id, "/etc/passwd")  # not changed
    with pytest.raises(BadRequestError):
        api.sandboxes.changes(a.id, path="relative")

    async def through_async() -> None:
        async with AsyncSandpitClient() as client:
            listed = await client.sandboxes.changes(a.id, path="/etc/motd")
            assert [c["kind"] for c in listed["changes"]] == ["modified"]
            assert "+hello" in await client.sandboxes.change_diff(a.id, "/etc/motd")

    asyncio.run(through_async())


def test_applies_changes_to_a_sandbox_of_the_same_template(api: SandpitClient, pair: Tuple[Sandbox, Sandbox]) -> None:
    a, b = pair
    a.files.write("applied.txt", "carried\n")
    result = api.sandboxes.apply_changes(b.id, a.id, ["/home/user/applied.txt"])
    assert result == {"applied": [{"path": "/home/user/applied.txt", "kind": "added"}], "conflicts": [], "skipped": []}
    assert b.files.read("applied.txt", format="text") == "carried\n"
    # The same change on both sides now: applying again applies nothing.
    assert api.sandboxes.apply_changes(b.id, a.id, ["/home/user/applied.txt"])["applied"] == []

    with pytest.raises(NotFoundError):
        api.sandboxes.apply_changes(b.id, UNKNOWN)
    with pytest.raises(BadRequestError):
        api.sandboxes.apply_changes(b.id, a.id, ["relative/path"])
