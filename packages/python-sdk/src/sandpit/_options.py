"""Defaults shared by the sync and async clients."""

from __future__ import annotations

import os
from typing import Optional

DEFAULT_API_URL = "http://localhost:3000"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_DELAY = 0.25
MAX_BACKOFF = 10.0
#: Starting, restoring or snapshotting a sandbox can take longer than an ordinary call.
LIFECYCLE_TIMEOUT = 300.0
#: Whole-file reads and writes may be large.
TRANSFER_TIMEOUT = 600.0
#: A stream fails when nothing, not even the server's 15-second keepalive, arrives for this long.
DEFAULT_IDLE_TIMEOUT = 45.0
DEFAULT_COMMAND_TIMEOUT_S = 30
#: Time beyond a command's own limit for the sandbox to answer (auto-resume included).
ANSWER_SLACK = 60.0
SNAPSHOT_POLL = 1.0


def env(name: str) -> Optional[str]:
    return os.environ.get(name) or None
