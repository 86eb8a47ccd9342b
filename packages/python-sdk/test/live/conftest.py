"""Live tests need a running server: SANDPIT_API_URL and SANDPIT_API_KEY (packages/python-sdk/test/python-sdk.test.ts
starts one with the container driver and runs pytest against it)."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from sandpit import Sandbox, SandpitClient


@pytest.fixture(scope="session")
def api() -> Iterator[SandpitClient]:
    if not os.environ.get("SANDPIT_API_URL") or not os.environ.get("SANDPIT_API_KEY"):
        pytest.fail("the live tests need SANDPIT_API_URL and SANDPIT_API_KEY of a running server")
    with SandpitClient() as client:
        yield client


@pytest.fixture(scope="module")
def sandbox(api: SandpitClient) -> Iterator[Sandbox]:
    sandbox = Sandbox.create(client=api, name="pytest")
    yield sandbox
    sandbox.kill()
