"""The API's records as the server returns them (plain dicts, typed for checkers), and the SDK's own results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Optional, TypedDict


JsonObject = Dict[str, Any]

SandboxStatus = Literal["active", "pausing", "paused", "resuming", "migrating", "failed"]


class Resources(TypedDict):
    vcpu_count: int
    memory_mib: int
    disk_mib: int


class NetworkRules(TypedDict, total=False):
    allow_out: List[str]
    deny_out: List[str]


class BoundSecret(TypedDict):
    env: str
    secret: str
    revoked: bool


class _SandboxRequired(TypedDict):
    id: str
    template_id: str
    status: SandboxStatus
    driver: str
    metadata: Dict[str, str]
    preview_access: Literal["legacy_public", "public", "private"]
    secrets: List[BoundSecret]
    resources: Resources
    region: str
    created_at: str
    updated_at: str


class SandboxInfo(_SandboxRequired, total=False):
    """A sandbox as get, list, update and pause return it."""

    name: str
    network: NetworkRules
    auto_pause_seconds: int
    auto_delete_seconds: int
    auto_delete_at: str
    latest_snapshot_id: str


class SandboxWithToken(SandboxInfo):
    """A sandbox as create, resume and activate return it: with the data-plane access token."""

    access_token: str


class Info(TypedDict):
    version: str
    region: str
    driver: str
    data_plane_url: str
    sandbox_url: str
    preview_url: str
    warm_pool: Dict[str, int]


class _FileEntryRequired(TypedDict):
    name: str
    path: str
    type: Literal["file", "dir", "symlink", "other"]
    size: int
    mode: int
    permissions: str
    modified_at: str


class FileEntry(_FileEntryRequired, total=False):
    symlink_target: str


class FileWatchEvent(TypedDict, total=False):
    """One change under a watched directory; the last event of a watch has ``finished``."""

    type: str
    path: str
    is_dir: bool
    timestamp: str
    finished: bool


class _ProcessRequired(TypedDict):
    id: str
    pid: int
    command: str
    args: List[str]
    working_dir: str
    running: bool
    started_at: str


class ProcessInfo(_ProcessRequired, total=False):
    exit_code: int
    signal: int


class ProcessOutput(TypedDict, total=False):
    stdout: str
    stderr: str
    dropped_bytes: int
    running: bool
    exit_code: int


class _TerminalRequired(TypedDict):
    id: str
    pid: int
    command: str
    args: List[str]
    cols: int
    rows: int
    running: bool
    created_at: str


class TerminalInfo(_TerminalRequired, total=False):
    exit_code: int


class Volume(TypedDict):
    """A team's disk that outlives sandboxes; ``size_mib`` is its quota."""

    id: str
    name: str
    size_mib: int
    #: Bytes its files hold, as the file system accounts them (may lag writes by seconds).
    used_bytes: int
    #: Sandboxes (not deleted) that mount it now.
    mounted_by: List[str]
    created_at: str


class VolumeFileEntry(TypedDict):
    name: str
    #: From the volume's root.
    path: str
    type: Literal["file", "dir", "symlink", "other"]
    size: int
    modified_at: str


class _VolumeMountRequired(TypedDict):
    #: The volume's id or name.
    volume: str
    #: Absolute and normalized path inside the sandbox.
    path: str


class VolumeMount(_VolumeMountRequired, total=False):
    """One mount of ``Sandbox.create(volumes=[...])``."""

    read_only: bool


ChangeKind = Literal["added", "modified", "deleted"]


class SandboxChange(TypedDict):
    """A path whose content differs in the sandbox's writable layer from its base."""

    path: str
    kind: ChangeKind
    type: Literal["file", "dir", "symlink", "other"]
    #: Bytes of a file now (before, for a deletion); 0 for other types.
    size: int


class ChangeBase(TypedDict):
    """What the changes are against: the template, or the snapshot the sandbox was forked from."""

    kind: Literal["template", "snapshot"]
    id: str


class _SandboxChangePageRequired(TypedDict):
    base: ChangeBase
    changes: List[SandboxChange]


class SandboxChangePage(_SandboxChangePageRequired, total=False):
    """A page of what a sandbox changed, sorted by path; ``next_cursor`` when there is more."""

    next_cursor: str


class AppliedChange(TypedDict):
    path: str
    kind: ChangeKind


class ChangeConflict(TypedDict):
    path: str
    kind: ChangeKind
    #: The change the target made since the common base that collides.
    here: AppliedChange


class SkippedChange(TypedDict):
    path: str
    reason: str


class ApplyChangesResult(TypedDict):
    """What ``apply_changes`` did: ``conflicts`` and ``skipped`` (symlinks, special files) were left alone."""

    applied: List[AppliedChange]
    conflicts: List[ChangeConflict]
    skipped: List[SkippedChange]


class Snapshot(TypedDict):
    id: str
    sandbox_id: str
    template_id: Optional[str]
    name: Optional[str]
    kind: str
    status: Literal["creating", "ready", "failed", "deleting"]
    size_bytes: int
    resources: Resources
    created_at: str
    ready_at: Optional[str]


class _TemplateRequired(TypedDict):
    id: str
    name: str
    base: str
    status: Literal["building", "ready", "failed", "pending"]
    steps: List[JsonObject]
    curated: bool
    captured: bool
    usable: bool
    warm_pool: int
    warm_pool_ready: int
    ready_timeout_s: int
    resources: Resources
    created_at: str
    updated_at: str


class Template(_TemplateRequired, total=False):
    error: str
    latest_build_id: str
    start_cmd: str
    ready_cmd: str


class TemplateWithBuild(Template):
    build_id: str


class Secret(TypedDict):
    """A stored secret; its value is never returned."""

    name: str
    allowed_hosts: List[str]
    created_at: str


class _PreviewPortRequired(TypedDict):
    port: int
    url: str
    access: Literal["public", "private"]
    created_at: str


class PreviewPort(_PreviewPortRequired, total=False):
    #: For a private port: send it as the X-Preview-Token header (or ?preview_token=).
    preview_token: str


class ApiKeyInfo(TypedDict):
    id: str
    name: str
    prefix: str
    permissions: List[str]
    created_at: str


class CreatedApiKey(ApiKeyInfo):
    #: The key itself, shown only in this answer.
    key: str


@dataclass
class CommandResult:
    """A command run to completion. A non-zero exit code is a result, not an error."""

    stdout: str
    stderr: str
    exit_code: int
    #: True when stdout and stderr together passed 8 MiB and the tail was dropped (stream for unbounded output).
    truncated: bool = False
    #: Why the command itself failed, when it did (its time limit, say); streamed runs only.
    error: Optional[str] = None


@dataclass
class StreamResult:
    """How a streamed command or a followed process ended."""

    exit_code: int
    error: Optional[str] = None


@dataclass
class TerminalExit:
    exit_code: int
    #: The signal that ended the process, when one did.
    signal: Optional[int] = None


@dataclass
class BuildResult:
    """How a template build ended; ``error`` is ``<code>: <detail>`` when it failed."""

    status: Literal["ready", "failed"]
    error: Optional[str] = None


class _WebhookRequired(TypedDict):
    id: str
    url: str
    events: List[str]
    active: bool
    created_at: str
    updated_at: str


class Webhook(_WebhookRequired, total=False):
    description: str


class CreatedWebhook(Webhook):
    #: The signing secret: shown only in the create's answer.
    secret: str


class _DeliveryRequired(TypedDict):
    id: str
    webhook_id: str
    event_id: str
    event_type: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    created_at: str
    attempt_log: List[Dict[str, Any]]


class WebhookDelivery(_DeliveryRequired, total=False):
    last_status_code: int
    last_error: str
    next_attempt_at: str
    delivered_at: str


class _AuditEntryRequired(TypedDict):
    id: str
    at: str
    actor: Dict[str, str]
    action: str
    resource: Dict[str, str]
    request: Dict[str, str]
    status: int


class AuditEntry(_AuditEntryRequired, total=False):
    trace_id: str


class CodeResult(TypedDict, total=False):
    """One output of a code run in its formats (Jupyter MIME bundles): ``png`` is base64; other MIME types keep their names."""

    is_main_result: bool
    text: str
    html: str
    markdown: str
    svg: str
    png: str
    jpeg: str
    pdf: str
    latex: str
    json: Any
    javascript: str


class CodeError(TypedDict):
    name: str
    value: str
    traceback: str


class _CodeRunResultRequired(TypedDict):
    type: Literal["end"]
    results: List[CodeResult]
    stdout: List[str]
    stderr: List[str]


class CodeRunResult(_CodeRunResultRequired, total=False):
    error: CodeError
    execution_count: int


class CodeContext(TypedDict):
    id: str
    language: Literal["python", "javascript", "typescript", "r", "bash"]
    cwd: str
