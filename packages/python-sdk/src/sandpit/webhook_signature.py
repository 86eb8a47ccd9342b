"""Checking a webhook delivery's ``X-Sandpit-Signature`` (the recipe in docs/observability.md)."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Optional, Union


def verify_webhook(secret: str, signature_header: str, raw_body: Union[bytes, str], *, tolerance_s: int = 300, now: Optional[float] = None) -> bool:
    """True when ``signature_header`` (``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``) was made with
    ``secret`` at most ``tolerance_s`` seconds from now. Pass the body exactly as received."""
    parts = dict(p.split("=", 1) for p in signature_header.split(",") if "=" in p)
    t, v1 = parts.get("t", ""), parts.get("v1", "")
    if not t.isdigit() or abs((time.time() if now is None else now) - int(t)) > tolerance_s:
        return False
    body = raw_body.encode() if isinstance(raw_body, str) else raw_body
    want = hmac.new(secret.encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, v1)
