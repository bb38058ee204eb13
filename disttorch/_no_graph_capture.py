"""The one error of ``torch.export``'s graph capture: disttorch runs Python eagerly and has no
TorchDynamo that records a whole program as a graph (``torch.fx`` symbolic tracing is real,
see ``disttorch.fx``)."""

from __future__ import annotations

__all__ = ["no_graph_capture"]


def no_graph_capture(api: str) -> RuntimeError:
    """The RuntimeError raised by ``api`` (e.g. ``"torch.export.export"``)."""
    return RuntimeError(
        f"{api}: disttorch has no graph capture (no TorchDynamo); run the model "
        "eagerly, or use torch.compile, which returns the model unchanged here"
    )
