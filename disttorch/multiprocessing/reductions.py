"""How tensors cross process boundaries in ``torch.multiprocessing``: through shared memory.

Registered with ``multiprocessing.reduction.ForkingPickler`` (which pickles ``Process``
arguments under spawn/forkserver and everything put on a ``multiprocessing`` queue or
pipe): a tensor is moved to shared memory if it is not there already (as PyTorch does) and
is sent as a descriptor of its segment plus its layout, so the receiver's tensor shares
memory with the sender's. Parameters stay Parameters (with ``requires_grad``); gradients
are not sent, as in PyTorch. Plain ``pickle``/``torch.save`` are unaffected (they copy).
"""

from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler
from typing import Any

from .._shared_memory import Handle, handle_of, open_handle
from .._tensor import Tensor

__all__ = ["init_reductions", "rebuild_tensor", "reduce_tensor"]


def reduce_tensor(t: Tensor) -> tuple:
    """ForkingPickler reduction: share ``t``'s memory and send a handle to it."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., "
            "putting it on the queue)."
        )
    t.share_memory_()
    handle = handle_of(t._data)
    return (rebuild_tensor, (type(t), handle, DupFd(handle.fd), t.requires_grad))


def rebuild_tensor(cls: type, handle: Handle, fd: Any, requires_grad: bool) -> Tensor:
    """Map the sender's segment and wrap it as a tensor of class ``cls``."""
    arr = open_handle(handle, fd.detach())
    from ..nn.parameter import Parameter

    if issubclass(cls, Parameter):
        t = cls(Tensor._make(arr), requires_grad)
    else:
        t = Tensor._make(arr)
        if cls is not Tensor:
            t.__class__ = cls
        if requires_grad:
            t.requires_grad_(True)
    return t


def init_reductions() -> None:
    """Register :func:`reduce_tensor` for ``Tensor``, ``Parameter`` and ``Buffer``
    (ForkingPickler matches exact types)."""
    from ..nn.parameter import Buffer, Parameter

    for cls in (Tensor, Parameter, Buffer):
        ForkingPickler.register(cls, reduce_tensor)
