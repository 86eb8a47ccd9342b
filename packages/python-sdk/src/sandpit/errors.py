"""The SDK's errors: one base class, and an ``ApiError`` per HTTP status carrying the contract's code."""

from __future__ import annotations

import builtins
from typing import Dict, Optional, Type


class SandpitError(Exception):
    """Base of every error the SDK raises, so callers can catch the SDK's failures in one place."""


class ConfigurationError(SandpitError):
    """The client is missing something it needs before any request is made (an API key)."""


class TimeoutError(SandpitError, builtins.TimeoutError):
    """A call or a stream ran past its deadline; the request was abandoned."""


class ConnectionError(SandpitError, builtins.ConnectionError):
    """The server could not be reached, or the connection broke before the answer was complete."""


class ApiError(SandpitError):
    """The API answered with an error: ``status`` is the HTTP status, ``code`` the contract's stable code
    (branch on it, not on the message)."""

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        #: Seconds from the Retry-After header, when the server sent one.
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"


class BadRequestError(ApiError):
    """400 ``bad_request``: the request or its parameters are invalid."""


class AuthError(ApiError):
    """401: missing or invalid API key or access token."""


class ForbiddenError(ApiError):
    """403: authenticated, but the key lacks the permission."""


class NotFoundError(ApiError):
    """404 ``not_found``: the sandbox or resource does not exist."""


class ConflictError(ApiError):
    """409 ``conflict``: the resource is in the wrong state for the operation."""


class GoneError(ApiError):
    """410 ``gone``."""


class RateLimitError(ApiError):
    """429: a rate or quota limit (``rate_limited``, ``too_many_sandboxes``, ...)."""


class ServerError(ApiError):
    """5xx: the server failed or is unavailable; GET and DELETE were already retried."""


class InsufficientStorageError(ServerError):
    """507 ``insufficient_storage``: the disk or volume is full (a volume's size is its quota); nothing was written."""


class TerminalError(SandpitError):
    """The server refused a terminal control message (for example a resize after the process exited)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: BadRequestError,
    401: AuthError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    429: RateLimitError,
    507: InsufficientStorageError,
}

# Codes for answers that did not carry the envelope (a proxy's error page, say).
_FALLBACK_CODES: Dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    410: "gone",
    413: "payload_too_large",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
    507: "insufficient_storage",
}


def api_error(status: int, code: Optional[str], message: str, retry_after: Optional[float] = None) -> ApiError:
    """The typed error for an API answer with a non-2xx status."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    return cls(status, code or _FALLBACK_CODES.get(status) or f"http_{status}", message, retry_after)
