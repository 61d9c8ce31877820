"""UTC timestamps, written the one way every flightdeck file records them."""

from __future__ import annotations

from datetime import UTC, datetime


def format_utc(moment: datetime) -> str:
    """``2026-11-30T12:00:00Z``: second precision, UTC, a ``Z`` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> str:
    """Now, as :func:`format_utc` writes it."""
    return format_utc(datetime.now(UTC))
