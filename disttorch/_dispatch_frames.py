"""How many dispatch wrappers (``fx``'s tracing twins, ``overrides``' torch-function modes)
stand between a public function and its caller: a warning's ``stacklevel`` adds them to name
the caller's line as PyTorch's does, whether or not the wrappers are installed."""

from __future__ import annotations

import sys

#: module -> name of the wrapper function it puts around public functions
_WRAPPERS = {"disttorch.fx._dispatch": "twin", "disttorch.overrides": "public"}


def wrapper_frames(depth: int) -> int:
    """The number of wrapper frames right above the frame ``depth`` levels up from the caller
    (``depth=1``: the caller's caller)."""
    frame = sys._getframe(depth + 1)
    count = 0
    while frame is not None and _WRAPPERS.get(frame.f_globals.get("__name__")) == frame.f_code.co_name:
        count += 1
        frame = frame.f_back
    return count
