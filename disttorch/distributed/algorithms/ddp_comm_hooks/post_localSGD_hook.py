"""``torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook``: post-local SGD as
PyTorch's. For the first ``start_localSGD_iter`` steps DDP averages gradients over
``process_group`` as usual; from then on only within ``subgroup`` (or, with
``post_local_gradient_allreduce=False``, not at all: each rank steps on its own gradients),
and a model averager (:mod:`..model_averaging`) brings the replicas together every few steps."""

from __future__ import annotations

import logging
from typing import Any

from .default_hooks import _allreduce_fut

__all__ = ["PostLocalSGDState", "post_localSGD_hook"]

logger = logging.getLogger(__name__)


class PostLocalSGDState:
    """``PostLocalSGDState(process_group, subgroup, start_localSGD_iter,
    post_local_gradient_allreduce=True)``: the groups and the step at which local SGD starts.
    ``process_group=None`` is the world; ``subgroup=None`` asks ``new_subgroups()`` for a
    machine's group at the first local step (which PyTorch's CPU build refuses: pass one)."""

    __slots__ = ["iter", "post_local_gradient_allreduce", "process_group", "start_localSGD_iter", "subgroup"]

    def __init__(
        self,
        process_group: Any,
        subgroup: Any,
        start_localSGD_iter: int,  # noqa: N803 (PyTorch's name)
        post_local_gradient_allreduce: bool = True,
    ) -> None:
        logger.info("Local SGD will be started after %s iterations", start_localSGD_iter)
        self.process_group, self.subgroup = process_group, subgroup
        self.start_localSGD_iter = start_localSGD_iter
        self.post_local_gradient_allreduce = post_local_gradient_allreduce
        self.iter = 0

    def maybe_increase_iter(self, bucket: Any) -> None:
        """Count a step when the last bucket of it is reduced."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_localSGD_iter:
            logger.info("Start to apply local SGD after %s iterations.", self.iter)


def post_localSGD_hook(state: PostLocalSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Average ``bucket`` over ``state.process_group`` before ``state.start_localSGD_iter``
    steps, then over ``state.subgroup`` (or leave it as it is with
    ``post_local_gradient_allreduce=False``). Run a model averager after ``optimizer.step()``."""
    from .... import distributed as dist
    from ....futures import Future

    tensor = bucket.buffer()
    if state.iter < state.start_localSGD_iter:
        state.maybe_increase_iter(bucket)
        group = state.process_group if state.process_group is not None else dist.group.WORLD
        return _allreduce_fut(group, tensor)
    if not state.post_local_gradient_allreduce:
        fut: Future = Future()
        fut.set_result(tensor)
        return fut
    if state.subgroup is None:
        state.subgroup, _ = dist.new_subgroups()
    return _allreduce_fut(state.subgroup, tensor)
