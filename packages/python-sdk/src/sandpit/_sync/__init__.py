"""The blocking client, generated from ``_async`` by scripts/unasync.py (all but terminal_connection.py)."""
