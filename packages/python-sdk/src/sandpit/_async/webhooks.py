from __future__ import annotations

from typing import AsyncIterator, Dict, List, Optional, cast
from urllib.parse import quote

from ..types import CreatedWebhook, JsonObject, Webhook, WebhookDelivery
from .http import AsyncHttp


def _at(webhook_id: str) -> str:
    return f"/webhooks/{quote(webhook_id, safe='')}"


class AsyncWebhooks:
    """The team's webhook endpoints (the ``webhooks:manage`` permission): lifecycle events POSTed as signed JSON,
    retried for 24 h, in order per sandbox. Check deliveries with ``sandpit.verify_webhook``."""

    def __init__(self, http: AsyncHttp) -> None:
        self._http = http

    async def create(
        self,
        url: str,
        events: List[str],
        *,
        secret: Optional[str] = None,
        description: Optional[str] = None,
        active: Optional[bool] = None,
        timeout: Optional[float] = None,
    ) -> CreatedWebhook:
        """Registers an endpoint; without ``secret`` one is generated and answered only here."""
        body: JsonObject = {"url": url, "events": events}
        if secret is not None:
            body["secret"] = secret
        if description is not None:
            body["description"] = description
        if active is not None:
            body["active"] = active
        return cast(CreatedWebhook, await self._http.json("POST", "/webhooks", body=body, timeout=timeout))

    async def list(self, *, timeout: Optional[float] = None) -> List[Webhook]:
        return cast(List[Webhook], (await self._http.json("GET", "/webhooks", timeout=timeout))["webhooks"])

    async def get(self, webhook_id: str, *, timeout: Optional[float] = None) -> Webhook:
        return cast(Webhook, await self._http.json("GET", _at(webhook_id), timeout=timeout))

    async def update(self, webhook_id: str, fields: JsonObject, *, timeout: Optional[float] = None) -> Webhook:
        """Changes ``url``, ``events``, ``secret``, ``description`` (None clears it) or ``active``."""
        return cast(Webhook, await self._http.json("PATCH", _at(webhook_id), body=fields, timeout=timeout))

    async def delete(self, webhook_id: str, *, timeout: Optional[float] = None) -> None:
        await self._http.json("DELETE", _at(webhook_id), timeout=timeout)

    async def test(self, webhook_id: str, *, timeout: Optional[float] = None) -> WebhookDelivery:
        """Queues a ``webhook.test`` delivery to the endpoint; follow it in ``deliveries``."""
        return cast(WebhookDelivery, await self._http.json("POST", f"{_at(webhook_id)}/test", timeout=timeout))

    async def deliveries(
        self, webhook_id: str, *, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None, timeout: Optional[float] = None
    ) -> AsyncIterator[List[WebhookDelivery]]:
        """The endpoint's deliveries, newest first, a page at a time."""
        while True:
            query: Dict[str, str] = {}
            if status is not None:
                query["status"] = status
            if limit is not None:
                query["limit"] = str(limit)
            if cursor is not None:
                query["cursor"] = cursor
            page = await self._http.json("GET", f"{_at(webhook_id)}/deliveries", query=query, timeout=timeout)
            yield page["deliveries"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return
