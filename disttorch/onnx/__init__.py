"""``torch.onnx``: importable, so programs that offer an ONNX export option run; disttorch
cannot export an ONNX graph, and ``export`` says so."""

from __future__ import annotations

from typing import Any

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Raised when a model cannot be exported to ONNX."""


def is_in_onnx_export() -> bool:
    """False: disttorch never traces a model for ONNX export."""
    return False


def export(model: Any, args: Any = (), f: Any = None, *posargs: Any, **kwargs: Any) -> None:
    """Not available: raises :class:`OnnxExporterError` (a RuntimeError).

    disttorch records no graph an ONNX exporter could translate. To export, save the
    weights (``torch.save(model.state_dict(), path)``), load them into the same model
    under PyTorch and call ``torch.onnx.export`` there.
    """
    raise OnnxExporterError(
        "torch.onnx.export is not available in disttorch (it has no ONNX exporter). Save the "
        "weights with torch.save(model.state_dict(), 'model.pt'), load them into the same model "
        "under PyTorch and export from there."
    )
