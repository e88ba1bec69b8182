"""The retry rules of the official clients (the specification's, exactly).

- Up to ``max_retries`` retries (3 by default; 0 allowed).
- Only when the error says ``retryable`` (the service's body) or is the client-side
  ``network_error`` or ``timeout``.
- Wait out ``Retry-After`` when the service sent one of at most 60 seconds; otherwise
  exponential backoff from 0.5 s, doubling, up to 8 s, with jitter (between half and all of it).
"""
from __future__ import annotations

import random as _random
from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import ServiceError

BASE_DELAY = 0.5
MAX_DELAY = 8.0
MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    #: A number in [0, 1) for the jitter; injectable so tests are exact.
    random: Callable[[], float] = field(default=_random.random)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")

    def should_retry(self, error: ServiceError, retries_done: int) -> bool:
        return retries_done < self.max_retries and error.retryable

    def backoff(self, retries_done: int) -> float:
        """The wait before retry number ``retries_done + 1`` when the service named none."""
        ceiling = min(BASE_DELAY * (2 ** retries_done), MAX_DELAY)
        return ceiling / 2 + self.random() * ceiling / 2

    def delay(self, error: ServiceError, retries_done: int) -> float:
        after: Optional[float] = error.retry_after
        if after is not None and 0 <= after <= MAX_RETRY_AFTER:
            return after
        return self.backoff(retries_done)
