"""``torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook``: the state of PyTorch's
post-local SGD (global all-reduces for ``start_localSGD_iter`` steps, then only within
``subgroup``, with periodic model averaging). disttorch's DDP has no local SGD: the state can
be built and inspected (Lightning checks its type), and the hook raises ``NotImplementedError``."""

from __future__ import annotations

from typing import Any

__all__ = ["PostLocalSGDState", "post_localSGD_hook"]


class PostLocalSGDState:
    """``PostLocalSGDState(process_group, subgroup, start_localSGD_iter,
    post_local_gradient_allreduce=True)``: the groups and the step at which local SGD starts."""

    __slots__ = ["iter", "post_local_gradient_allreduce", "process_group", "start_localSGD_iter", "subgroup"]

    def __init__(
        self,
        process_group: Any,
        subgroup: Any,
        start_localSGD_iter: int,
        post_local_gradient_allreduce: bool = True,
    ) -> None:
        self.process_group, self.subgroup = process_group, subgroup
        self.start_localSGD_iter = start_localSGD_iter
        self.post_local_gradient_allreduce = post_local_gradient_allreduce
        self.iter = 0

    def maybe_increase_iter(self, bucket: Any) -> None:
        """Count a step when the last bucket of it is reduced."""
        if bucket.is_last():
            self.iter += 1


def post_localSGD_hook(state: PostLocalSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Raises ``NotImplementedError``: disttorch's DDP does not support post-local SGD."""
    raise NotImplementedError(
        "post_localSGD_hook is not supported by disttorch's DistributedDataParallel (no local SGD or "
        "model averaging); use the default all-reduce (no comm hook) or fp16_compress_hook"
    )
