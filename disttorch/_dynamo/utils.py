"""``torch._dynamo.utils``: ``counters``, the compiler's event counts that programs and tests
read (``counters["stats"]["calls_captured"]``, ...); nothing is compiled here, so nothing
is counted and every count reads 0."""

from __future__ import annotations

from collections import Counter, defaultdict

__all__ = ["counters"]

counters: defaultdict[str, Counter] = defaultdict(Counter)
