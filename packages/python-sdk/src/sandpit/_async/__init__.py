"""The asyncio client; ``_sync`` is generated from it by scripts/unasync.py."""
