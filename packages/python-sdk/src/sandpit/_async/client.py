from __future__ import annotations

from types import TracebackType
from typing import Optional, Type, cast

from ..types import Info, JsonObject
from .api_keys import AsyncApiKeys
from .audit_log import AsyncAuditLog
from .billing import AsyncBilling
from .http import AsyncHttp
from .identity import AsyncIdentity
from .sandboxes import AsyncSandboxes
from .secrets import AsyncSecrets
from .snapshots import AsyncSnapshots
from .team import AsyncTeam
from .templates import AsyncTemplates
from .volumes import AsyncVolumes
from .webhooks import AsyncWebhooks


class AsyncSandpitClient:
    """One connection to a Sandpit server: configuration, discovery and the resource groups.

    Arguments default to ``$SANDPIT_API_URL`` (else http://localhost:3000) and ``$SANDPIT_API_KEY``; ``timeout`` is
    the deadline of one call in seconds (retries included), ``max_retries`` and ``retry_delay`` shape the retries of
    GET and DELETE, ``data_plane_url`` overrides the address ``GET /info`` announces.
    """

    def __init__(
        self,
        *,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        data_plane_url: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        retry_delay: Optional[float] = None,
    ) -> None:
        self.http = AsyncHttp(api_url=api_url, api_key=api_key, timeout=timeout, max_retries=max_retries, retry_delay=retry_delay)
        self.sandboxes = AsyncSandboxes(self.http)
        self.api_keys = AsyncApiKeys(self.http)
        self.snapshots = AsyncSnapshots(self.http)
        self.secrets = AsyncSecrets(self.http)
        self.templates = AsyncTemplates(self.http)
        self._identity = AsyncIdentity(self.http)
        self.team = AsyncTeam(self.http, self._identity)
        self.billing = AsyncBilling(self.http, self._identity)
        self.webhooks = AsyncWebhooks(self.http)
        self.audit_log = AsyncAuditLog(self.http)
        self.volumes = AsyncVolumes(self.http)
        self._data_plane_url = data_plane_url.rstrip("/") if data_plane_url else None
        self._info: Optional[Info] = None

    @property
    def api_url(self) -> str:
        return self.http.api_url

    async def info(self, *, timeout: Optional[float] = None) -> Info:
        """``GET /info`` (no key needed): version, region, and where the data plane and sandbox hosts are. Cached."""
        if self._info is None:
            self._info = cast(Info, await self.http.json("GET", "/info", auth=False, timeout=timeout))
        return self._info

    async def me(self, *, timeout: Optional[float] = None) -> JsonObject:
        """The team, user and permissions of the API key in use."""
        return await self._identity.me(timeout=timeout)

    async def team_id(self, *, timeout: Optional[float] = None) -> str:
        """The API key's team id (for the /teams/{team_id}/... routes). Cached."""
        return await self._identity.team_id(timeout=timeout)

    async def data_plane_url(self, *, timeout: Optional[float] = None) -> str:
        """Where data-plane calls go: the configured address, else the one the server announces."""
        return self._data_plane_url or (await self.info(timeout=timeout))["data_plane_url"].rstrip("/")

    async def aclose(self) -> None:
        """Closes the connection pool."""
        await self.http.aclose()

    async def __aenter__(self) -> AsyncSandpitClient:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(api_url={self.api_url!r})"

