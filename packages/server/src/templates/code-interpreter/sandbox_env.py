"""The env vars the sandbox was created with, for processes that started before they existed.

The platform writes them to SANDBOX_ENV_FILE when it gives them to a sandbox whose processes already
run: the template's capture is restored with this service and its warm kernels running, so they
learn the env here (as E2B's interpreter asks envd for it). A sandbox booted afresh has none there:
its processes inherit the env instead.
"""
import json

SANDBOX_ENV_FILE = "/.sandpit/env.json"
_found = None


def sandbox_env():
    """The sandbox's own env vars; read once found (a sandbox's env never changes), {} until then."""
    global _found
    if _found is None:
        try:
            with open(SANDBOX_ENV_FILE, encoding="utf-8") as f:
                _found = {str(k): str(v) for k, v in json.load(f).items()}
        except (OSError, ValueError, AttributeError):
            return {}
    return _found
