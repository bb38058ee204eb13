"""A flag with one value per thread, as PyTorch's grad mode and inference mode are: a thread
starts with the flag's initial value whatever the thread that started it has set (an RPC
worker thread records the graph of the call it runs while the main thread evaluates under
``no_grad``; a tensor another thread makes while this one is in ``inference_mode`` is a
normal tensor)."""

from __future__ import annotations

import threading

__all__ = ["ThreadFlag"]


class ThreadFlag(threading.local):
    """One boolean per thread, read and written as ``flag[0]`` (as the process-wide list it
    replaces was)."""

    def __init__(self, initial: bool) -> None:
        self.value = initial

    def __getitem__(self, _index: int) -> bool:
        return self.value

    def __setitem__(self, _index: int, value: bool) -> None:
        self.value = value
