"""``torch.autograd.profiler_legacy``: the legacy ``profile``, the ``autograd.profiler``
recorder with the legacy constructor's arguments only (others, such as ``use_xpu`` or
``use_device``, are a ``TypeError`` as in PyTorch)."""

from __future__ import annotations

from . import profiler

__all__ = ["profile"]


class profile(profiler.profile):  # noqa: N801 (PyTorch's name)
    """Record the ops run inside the ``with`` block (see ``autograd.profiler.profile``)."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
    ) -> None:
        super().__init__(
            enabled,
            use_cuda=use_cuda,
            record_shapes=record_shapes,
            with_flops=with_flops,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_modules=with_modules,
        )
