"""``torch._dynamo.utils``: ``counters``, the compiler's event counts that programs and tests
read (``counters["stats"]["calls_captured"]``, ``["unique_graphs"]``, ``counters["frames"]``:
counted as PyTorch's compiler would count them, see ``disttorch._compile_cache``), and
``compile_times``; nothing is compiled here, so nothing is timed: the table is empty."""

from __future__ import annotations

from .._compile_cache import counters

__all__ = ["compile_times", "counters"]


def compile_times(repr: str = "str", aggregate: bool = False) -> str | None | tuple[list[str], list[str]]:
    """The compiler's time per step: ``repr="str"`` a printable table, ``"csv"`` its
    ``(headers, values)``, anything else None (as PyTorch's); empty, nothing compiles here."""
    if repr == "str":
        return "TorchDynamo compilation metrics:\nFunction, Runtimes (s)"
    if repr == "csv":
        return [], []
    return None
