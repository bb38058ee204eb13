"""The one error of ``torch.export`` and ``torch.fx`` graph capture: disttorch runs Python
eagerly and has no tracer that records a program as a graph."""

from __future__ import annotations

__all__ = ["no_graph_capture"]


def no_graph_capture(api: str) -> RuntimeError:
    """The RuntimeError raised by ``api`` (e.g. ``"torch.export.export"``)."""
    return RuntimeError(
        f"{api}: disttorch has no graph capture (no TorchDynamo/FX tracer); run the model "
        "eagerly, or use torch.compile, which returns the model unchanged here"
    )
