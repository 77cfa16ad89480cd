"""When to try a request again and how long to wait.

Connection errors, timeouts, 429 and 5xx are worth another try; other 4xx
never are (the same request would get the same refusal). Waits grow
exponentially with full jitter (a random wait between zero and the cap), so
clients that failed together do not come back together; a ``Retry-After``
from the service is honoured instead. Retries stop at whichever comes first:
the retry count or the deadline of the whole logical call.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    """How a logical call is retried; ``Client(retry=RetryPolicy(retries=0))`` disables retries."""

    #: Attempts after the first one.
    retries: int = 3
    #: The cap of the first wait (seconds); each retry doubles it.
    base: float = 0.1
    #: No wait is longer than this (seconds).
    max_wait: float = 5.0
    #: A Retry-After longer than this (seconds) ends the retries: the caller decides whether to wait so long.
    max_retry_after: float = 60.0
    #: No retry starts, and no wait runs, past this many seconds after the call began.
    deadline: float = 120.0

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError("retries must be a non-negative integer.")
        if self.deadline <= 0:
            raise ValueError("deadline must be positive.")


def is_retriable_status(status: int) -> bool:
    return status == 429 or status >= 500


def backoff_delay(attempt: int, policy: RetryPolicy, rand: float | None = None) -> float:
    """The wait before retry ``attempt + 1`` (attempt 0 is the first retry): full jitter under an exponential cap."""
    cap: float = min(policy.max_wait, policy.base * 2.0 ** min(attempt, 30))
    return (random.random() if rand is None else rand) * cap


def parse_retry_after(header: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); None when unreadable."""
    if header is None:
        return None
    value = header.strip()
    if value.isdigit():
        return float(value)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None:
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


class Schedule:
    """One logical call's retry budget: the attempts made and the deadline."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.attempt = 0
        self.ends = time.monotonic() + policy.deadline

    def next_wait(self, retry_after: float | None = None) -> float | None:
        """The wait before the next attempt, or None when the count or the deadline is spent."""
        if self.attempt >= self.policy.retries:
            return None
        if retry_after is not None and retry_after > self.policy.max_retry_after:
            return None
        wait = retry_after if retry_after is not None else backoff_delay(self.attempt, self.policy)
        if time.monotonic() + wait >= self.ends:
            return None
        self.attempt += 1
        return wait
