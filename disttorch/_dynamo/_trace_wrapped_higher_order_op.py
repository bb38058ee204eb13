"""``torch._dynamo._trace_wrapped_higher_order_op``: ``TransformGetItemToIndex``, the
function mode that makes ``tensor[0-d index tensor]`` an index op inside ``vmap``'d mask
functions (transformers imports it). It is a ``TorchFunctionMode``, which disttorch's ops do
not dispatch through: entering it raises (see :class:`disttorch.overrides.TorchFunctionMode`)."""

from __future__ import annotations

from ..overrides import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Index with 0-d integer tensors as tensors, not Python numbers (needs function modes)."""
