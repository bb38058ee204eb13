"""``disttorch.func``: ``functional_call`` (call a module with substitute parameters and
buffers). The function transforms of ``torch.func`` (``grad``, ``vmap``, ``jacrev``, ...)
are not provided."""
from ..nn.utils.stateless import functional_call

__all__ = ["functional_call"]
