"""A rate-limited warning logger, so a flood of bad input cannot flood the log."""

from __future__ import annotations

import logging
import threading
import time


class RateLimitedLog:
    """Log the first ``burst`` warnings, then at most one every ``interval`` seconds (with the
    running count), however fast they come: a peer flooding bad input costs a line per interval.

    Args:
        logger: where to log.
        burst: how many warnings are logged one by one.
        interval: after the burst, the fewest seconds between two logged warnings.
    """

    def __init__(self, logger: logging.Logger, burst: int = 20, interval: float = 10.0) -> None:
        self.logger = logger
        self.burst = burst
        self.interval = interval
        self.count = 0
        self._last = 0.0  # monotonic time of the last warning logged
        self._lock = threading.Lock()

    def warning(self, message: str, *args: object) -> None:
        now = time.monotonic()
        with self._lock:
            self.count += 1
            count = self.count
            due = count > self.burst and now - self._last >= self.interval
            if count <= self.burst or due:
                self._last = now
        if count <= self.burst:
            self.logger.warning(message, *args)
        elif due:
            self.logger.warning(message + " (%d such messages so far; most not logged)", *args, count)
