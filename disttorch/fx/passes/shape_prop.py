"""``torch.fx.passes.shape_prop``: run a graph module on example inputs and record, in each
node's ``meta``, the shape, dtype, strides and memory format of the tensor it produced
(``meta["tensor_meta"]``) and the type of its value (``meta["type"]``)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ``ShapeProp`` records of a tensor."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result: Tensor) -> TensorMetadata:
    import disttorch

    memory_format = None
    for fmt in (disttorch.contiguous_format, disttorch.channels_last, disttorch.channels_last_3d):
        if result.is_contiguous(memory_format=fmt):
            memory_format = fmt
            break
    return TensorMetadata(
        result.shape, result.dtype, result.requires_grad, result.stride(), memory_format, False, {}
    )


class ShapeProp(Interpreter):
    """``ShapeProp(gm).propagate(*example_inputs)``: run ``gm`` and annotate every node."""

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found_tensor = False

        def meta(obj: Any) -> Any:
            nonlocal found_tensor
            if isinstance(obj, Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        tensor_meta = map_aggregate(result, meta)
        if found_tensor:
            n.meta["tensor_meta"] = tensor_meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on ``args``, recording metadata on every node; returns its result."""
        return super().run(*args)
