"""``torch.Stream``, ``torch.Event`` and the device error types, as PyTorch's CPU build has them.

On the CPU every operation completes before it returns, so the CPU stream is always idle
(``query()`` is True, ``synchronize()`` returns at once) and, as in PyTorch's CPU build, CPU
events cannot be recorded (``RuntimeError``). A stream or event of another device type raises
at construction, naming the device.
"""

from __future__ import annotations

from typing import Any

from ._tensor import device as _device

__all__ = ["AcceleratorError", "Event", "OutOfMemoryError", "Stream"]


class AcceleratorError(RuntimeError):
    """An error reported by an accelerator runtime (never raised on the CPU)."""


class OutOfMemoryError(RuntimeError):
    """A device allocator ran out of memory (``torch.cuda.OutOfMemoryError`` is this class)."""


def _cpu(kind: str, dev: Any) -> _device:
    d = _device("cpu" if dev is None else dev)
    if d.type != "cpu":
        raise RuntimeError(
            f"torch.{kind}: device type '{d.type}' is not available; disttorch runs on the CPU only"
        )
    return d


class Stream:
    """``torch.Stream(device=None, *, priority=0)``: the CPU's one stream (``stream_id`` 0)."""

    def __init__(self, device: Any = None, *, priority: int = 0, **kwargs: Any) -> None:
        self.device = _cpu("Stream", device)
        self.device_type, self.device_index, self.stream_id = "cpu", -1, 0

    def query(self) -> bool:
        """True: CPU work is complete when its call returns."""
        return True

    def synchronize(self) -> None:
        """Returns at once (nothing is pending)."""

    def wait_stream(self, stream: Stream) -> None:
        """Returns at once (nothing is pending on ``stream``)."""

    def wait_event(self, event: Event) -> None:
        """Returns at once."""

    def record_event(self, event: Event | None = None) -> Event:
        """Raises ``RuntimeError``: the CPU backend has no events (as PyTorch's CPU build)."""
        return (event or Event()).record(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream)

    def __hash__(self) -> int:
        return hash(("cpu", 0))

    def __repr__(self) -> str:
        return "torch.Stream device_type=cpu, device_index=-1, stream_id=0"


class Event:
    """``torch.Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``.
    Constructible on the CPU; ``record``/``elapsed_time`` raise ``RuntimeError`` as in PyTorch's
    CPU build; ``query`` is True and ``synchronize``/``wait`` return at once."""

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        self.device = _cpu("Event", device)
        self.event_id = 0

    def _unsupported(self) -> RuntimeError:
        return RuntimeError("cpu backend doesn't support events.")

    def record(self, stream: Stream | None = None) -> Event:
        """Raises ``RuntimeError``: the CPU backend has no events."""
        raise self._unsupported()

    def elapsed_time(self, end_event: Event) -> float:
        """Raises ``RuntimeError``: the CPU backend has no events."""
        raise self._unsupported()

    def query(self) -> bool:
        """True: nothing is pending."""
        return True

    def synchronize(self) -> None:
        """Returns at once."""

    def wait(self, stream: Stream | None = None) -> None:
        """Returns at once."""

    def __repr__(self) -> str:
        return "torch.Event device_type=cpu, device_index=-1, event_flag=0, event_id=0"
