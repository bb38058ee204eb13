"""The planners ``save``/``load`` take (``planner=DefaultLoadPlanner(allow_partial_load=True)``),
with PyTorch's arguments. disttorch plans every save and load the same way (nested dicts
flattened, each tensor's pieces written by their owners, a replicated value written once by the
lowest rank holding it), so of these arguments only ``allow_partial_load`` changes anything:
keys of the state dict that the checkpoint lacks are then left as they are instead of refused."""

from __future__ import annotations

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultSavePlanner:
    """How ``save`` lays a state dict out (PyTorch's arguments, accepted; the layout is fixed)."""

    def __init__(
        self,
        flatten_state_dict: bool = True,
        flatten_sharded_tensors: bool = True,
        dedup_replicated_tensors: bool | None = None,
        dedup_save_to_lowest_rank: bool = False,
        enable_plan_caching: bool = False,
    ) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.enable_plan_caching = enable_plan_caching


class DefaultLoadPlanner:
    """How ``load`` fills a state dict: with ``allow_partial_load=True`` keys the checkpoint
    lacks are skipped (PyTorch's default, ``False``, refuses them)."""

    def __init__(
        self,
        flatten_state_dict: bool = True,
        flatten_sharded_tensors: bool = True,
        allow_partial_load: bool = False,
    ) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = allow_partial_load
