"""``torch._dynamo._trace_wrapped_higher_order_op``: ``TransformGetItemToIndex``, the
function mode that makes ``tensor[0-d index tensor]`` an index op inside ``vmap``'d mask
functions (transformers imports it). disttorch indexes with a 0-d integer tensor as with
its value, so the mode passes every call through (see
:class:`disttorch.overrides.TorchFunctionMode`)."""

from __future__ import annotations

from ..overrides import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Index with 0-d integer tensors as tensors, not Python numbers (here: passed through)."""
