"""HTTP with the contract's client rules: typed errors, retries for GET and DELETE only, a deadline on every call."""

from __future__ import annotations

import asyncio
import json
import random
import time
from email.utils import parsedate_to_datetime
from typing import Any, AsyncIterable, AsyncIterator, Dict, Mapping, Optional, Union

import httpx

from .._options import DEFAULT_API_URL, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY, DEFAULT_TIMEOUT, MAX_BACKOFF, env
from .._sse import parse_line
from ..errors import ApiError, ConfigurationError, ConnectionError, SandpitError, TimeoutError, api_error

Query = Mapping[str, str]
Content = Union[bytes, AsyncIterable[bytes]]

# GET and DELETE are safe to repeat; POST, PATCH (and PUT, whose streamed body cannot be replayed) might run
# twice, so they are never retried.
_IDEMPOTENT = ("GET", "DELETE")


def _retryable(err: SandpitError) -> bool:
    # A full disk (507) stays full: repeating the call only delays the same answer.
    return isinstance(err, ConnectionError) or (isinstance(err, ApiError) and (err.status == 429 or (err.status >= 500 and err.status != 507)))


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After is either delta-seconds or an HTTP date."""
    if not value or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_from(status: int, text: str, retry_after: Optional[str]) -> ApiError:
    """The SDK's error for a non-2xx answer, from the ``{"error": {"code", "message"}}`` envelope when there is one."""
    code: Optional[str] = None
    message = text.strip()[:500] or f"HTTP {status}"
    try:
        envelope = json.loads(text)
        error = envelope.get("error") if isinstance(envelope, dict) else None
        if isinstance(error, dict):
            if isinstance(error.get("code"), str):
                code = error["code"]
            if isinstance(error.get("message"), str):
                message = error["message"]
    except ValueError:
        pass  # Not the envelope: the raw text is the message.
    return api_error(status, code, message, _retry_after(retry_after))


class AsyncOpenStream:
    """A streaming answer: read its SSE events or its raw bytes once, then close it (closing early drops the connection)."""

    def __init__(self, response: httpx.Response, what: str, idle_timeout: float) -> None:
        self.response = response
        self._what = what
        self._idle_timeout = idle_timeout

    async def events(self) -> AsyncIterator[Any]:
        """The JSON payload of each ``data:`` line; every other line is ignored, as the contract requires."""
        try:
            async for line in self.response.aiter_lines():
                event = parse_line(line, self._what)
                if event is not None:
                    yield event
        except httpx.TimeoutException:
            raise TimeoutError(f"{self._what}: no data or keepalive for {self._idle_timeout} s") from None
        except httpx.TransportError as err:
            raise ConnectionError(f"{self._what}: the stream broke: {err}") from err

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.aiter_bytes():
                yield chunk
        except httpx.TimeoutException:
            raise TimeoutError(f"{self._what}: no data for {self._idle_timeout} s") from None
        except httpx.TransportError as err:
            raise ConnectionError(f"{self._what}: the download broke: {err}") from err

    async def aclose(self) -> None:
        await self.response.aclose()


class AsyncHttp:
    """One connection pool to the control plane (and the data plane, by ``base_url``)."""

    def __init__(
        self,
        *,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        retry_delay: Optional[float] = None,
    ) -> None:
        self.api_url = (api_url or env("SANDPIT_API_URL") or DEFAULT_API_URL).rstrip("/")
        self.api_key = api_key or env("SANDPIT_API_KEY")
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = DEFAULT_MAX_RETRIES if max_retries is None else max_retries
        self.retry_delay = DEFAULT_RETRY_DELAY if retry_delay is None else retry_delay
        self._client = httpx.AsyncClient(follow_redirects=False)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def json(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[Query] = None,
        content: Optional[Content] = None,
        base_url: Optional[str] = None,
        headers: Optional[Dict[str, str]] = None,
        auth: bool = True,
        timeout: Optional[float] = None,
    ) -> Any:
        """Sends a request and returns its parsed JSON body (None for an empty one)."""
        response = await self._retrying(method, path, body, query, content, base_url, headers, auth, timeout, None)
        text = response.text
        return json.loads(text) if text else None

    async def stream(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[Query] = None,
        base_url: Optional[str] = None,
        headers: Optional[Dict[str, str]] = None,
        auth: bool = True,
        timeout: Optional[float] = None,
        idle_timeout: float,
    ) -> AsyncOpenStream:
        """Opens a streaming answer. ``timeout`` bounds the wait for it (GET retries included); after that every read
        must bring something within ``idle_timeout``."""
        response = await self._retrying(method, path, body, query, None, base_url, headers, auth, timeout, idle_timeout)
        return AsyncOpenStream(response, f"{method} {path}", idle_timeout)

    async def _retrying(
        self,
        method: str,
        path: str,
        body: Any,
        query: Optional[Query],
        content: Optional[Content],
        base_url: Optional[str],
        headers: Optional[Dict[str, str]],
        auth: bool,
        timeout: Optional[float],
        idle_timeout: Optional[float],
    ) -> httpx.Response:
        """Sends until an answer is 2xx: GET and DELETE are retried with backoff (Retry-After first) while the failure
        is retryable and the deadline allows."""
        deadline = self.timeout if timeout is None else timeout
        request_headers = {"accept": "application/json", **(headers or {})}
        # Data-plane requests authenticate with the sandbox's access token and must not carry the team key.
        if auth:
            if not self.api_key:
                raise ConfigurationError("no API key: pass api_key or set SANDPIT_API_KEY")
            request_headers["x-api-key"] = self.api_key
        if content is not None:
            request_headers["content-type"] = "application/octet-stream"
        url = f"{base_url or self.api_url}{path}"
        started = time.monotonic()
        attempt = 0
        while True:
            remaining = deadline - (time.monotonic() - started)
            try:
                if remaining <= 0:
                    raise TimeoutError(f"{method} {path}: no complete answer within {deadline} s")
                request = self._client.build_request(
                    method,
                    url,
                    params=query,
                    json=body,
                    content=content,
                    headers=request_headers,
                    timeout=httpx.Timeout(remaining, read=remaining if idle_timeout is None else idle_timeout),
                )
                return await self._send(request, method, path, deadline, stream=idle_timeout is not None)
            except SandpitError as failure:
                if method not in _IDEMPOTENT or attempt >= self.max_retries or not _retryable(failure):
                    raise
                retry_after = failure.retry_after if isinstance(failure, ApiError) else None
                delay = self._backoff(attempt) if retry_after is None else retry_after
                # A wait that would outlast the deadline only delays the same failure.
                if time.monotonic() - started + delay >= deadline:
                    raise
            attempt += 1
            await asyncio.sleep(delay)

    async def _send(self, request: httpx.Request, method: str, path: str, deadline: float, stream: bool) -> httpx.Response:
        """One attempt: the answer when it is 2xx, else its typed error; transport failures become the SDK's errors."""
        try:
            response = await self._client.send(request, stream=stream)
            if response.status_code < 400:
                return response
            try:
                text = (await response.aread()).decode("utf-8", "replace")
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise TimeoutError(f"{method} {path}: no complete answer within {deadline} s") from None
        except httpx.TransportError as err:
            raise ConnectionError(f"{method} {path}: {type(err).__name__}: {err}") from err
        raise _error_from(response.status_code, text, response.headers.get("retry-after"))

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with "equal jitter": half the step fixed, half random, so retries spread out."""
        step = min(MAX_BACKOFF, self.retry_delay * 2.0**attempt)
        return step / 2 + random.random() * (step / 2)
