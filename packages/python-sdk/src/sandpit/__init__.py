"""Sandpit: self-hosted sandboxes for AI agents. ``Sandbox`` blocks; ``AsyncSandbox`` is the asyncio twin."""

from ._async.client import AsyncSandpitClient
from ._async.commands import AsyncCommands
from ._async.files import AsyncDownload, AsyncFiles, AsyncFileWatch
from ._async.processes import AsyncCommandHandle, AsyncProcesses
from ._async.sandbox import AsyncSandbox
from ._async.terminal_connection import AsyncTerminalConnection
from ._async.terminals import AsyncTerminals
from ._async.volume_files import AsyncVolumeFiles
from ._async.volumes import AsyncVolumes
from ._options import DEFAULT_API_URL
from ._sync.client import SandpitClient
from ._sync.commands import Commands
from ._sync.files import Download, Files, FileWatch
from ._sync.processes import CommandHandle, Processes
from ._sync.sandbox import Sandbox
from ._sync.terminal_connection import TerminalConnection
from ._sync.terminals import Terminals
from ._sync.volume_files import VolumeFiles
from ._sync.volumes import Volumes
from .webhook_signature import verify_webhook
from .errors import (
    ApiError,
    AuthError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
    ConnectionError,
    ForbiddenError,
    GoneError,
    InsufficientStorageError,
    NotFoundError,
    RateLimitError,
    SandpitError,
    ServerError,
    TerminalError,
    TimeoutError,
)
from .types import (
    ApiKeyInfo,
    ApplyChangesResult,
    AuditEntry,
    BuildResult,
    CodeContext,
    CodeResult,
    CodeRunResult,
    CommandResult,
    CreatedApiKey,
    CreatedWebhook,
    FileEntry,
    FileWatchEvent,
    Info,
    PreviewPort,
    ProcessInfo,
    ProcessOutput,
    SandboxChange,
    SandboxChangePage,
    SandboxInfo,
    SandboxWithToken,
    Secret,
    Snapshot,
    StreamResult,
    Template,
    TemplateWithBuild,
    TerminalExit,
    TerminalInfo,
    Volume,
    VolumeFileEntry,
    VolumeMount,
    Webhook,
    WebhookDelivery,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_API_URL",
    "ApiError",
    "ApiKeyInfo",
    "ApplyChangesResult",
    "AuditEntry",
    "AsyncCommandHandle",
    "AsyncCommands",
    "AsyncDownload",
    "AsyncFileWatch",
    "AsyncFiles",
    "AsyncProcesses",
    "AsyncSandbox",
    "AsyncSandpitClient",
    "AsyncTerminalConnection",
    "AsyncTerminals",
    "AsyncVolumeFiles",
    "AsyncVolumes",
    "AuthError",
    "BadRequestError",
    "BuildResult",
    "CodeContext",
    "CodeResult",
    "CodeRunResult",
    "CommandHandle",
    "CommandResult",
    "Commands",
    "ConfigurationError",
    "ConflictError",
    "ConnectionError",
    "CreatedApiKey",
    "CreatedWebhook",
    "Download",
    "FileEntry",
    "FileWatch",
    "FileWatchEvent",
    "Files",
    "ForbiddenError",
    "GoneError",
    "Info",
    "InsufficientStorageError",
    "NotFoundError",
    "PreviewPort",
    "ProcessInfo",
    "ProcessOutput",
    "Processes",
    "RateLimitError",
    "Sandbox",
    "SandboxChange",
    "SandboxChangePage",
    "SandboxInfo",
    "SandboxWithToken",
    "SandpitClient",
    "SandpitError",
    "Secret",
    "ServerError",
    "Snapshot",
    "StreamResult",
    "Template",
    "TemplateWithBuild",
    "TerminalConnection",
    "TerminalError",
    "TerminalExit",
    "TerminalInfo",
    "Terminals",
    "TimeoutError",
    "Volume",
    "VolumeFileEntry",
    "VolumeFiles",
    "VolumeMount",
    "Volumes",
    "Webhook",
    "WebhookDelivery",
    "verify_webhook",
]
