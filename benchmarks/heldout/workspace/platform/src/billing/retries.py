"""Payment retries: retry a failed charge with exponential backoff, at most five times."""

from __future__ import annotations

import random

MAX_ATTEMPTS = 5
BASE_DELAY_SECONDS = 60


def next_delay(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based), with jitter."""
    return BASE_DELAY_SECONDS * 2 ** (attempt - 1) * random.uniform(0.8, 1.2)


def should_retry(error_code: str, attempt: int) -> bool:
    """A declined card is never retried; a timeout or a rate limit is, up to MAX_ATTEMPTS."""
    if error_code == "card_declined":
        return False
    return attempt < MAX_ATTEMPTS
