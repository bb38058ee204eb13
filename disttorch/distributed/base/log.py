"""A rate-limited warning logger, so a flood of bad input cannot flood the log."""

from __future__ import annotations

import logging
import threading


class RateLimitedLog:
    """Log the first ``burst`` warnings, then one in every ``every`` (with the running count).

    Args:
        logger: where to log.
        burst: how many warnings are logged one by one.
        every: after the burst, log one warning per this many.
    """

    def __init__(self, logger: logging.Logger, burst: int = 20, every: int = 1000) -> None:
        self.logger = logger
        self.burst = burst
        self.every = every
        self.count = 0
        self._lock = threading.Lock()

    def warning(self, message: str, *args: object) -> None:
        with self._lock:
            self.count += 1
            count = self.count
        if count <= self.burst:
            self.logger.warning(message, *args)
        elif count % self.every == 0:
            self.logger.warning(message + " (%d such messages so far; most not logged)", *args, count)
