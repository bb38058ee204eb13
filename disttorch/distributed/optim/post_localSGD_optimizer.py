"""``PostLocalSGDOptimizer``: a local optimiser followed by a model averager (post-local SGD)."""

from __future__ import annotations

import warnings
from typing import Any

from ...optim.optimizer import Optimizer

__all__ = ["PostLocalSGDOptimizer"]


class PostLocalSGDOptimizer(Optimizer):
    """Wrap ``optim`` (the local optimiser): ``step()`` runs it, then
    ``averager.average_parameters`` over its parameter groups. Its ``state_dict`` is the local
    optimiser's with the averager's ``step`` added, as PyTorch's."""

    def __init__(self, optim: Optimizer, averager: Any) -> None:
        self.optim = optim
        self.param_groups = self.optim.param_groups
        self.averager = averager

    @property
    def state(self) -> Any:  # type: ignore[override]
        return self.optim.state

    def __repr__(self) -> str:
        return self.optim.__repr__()

    def state_dict(self) -> dict:
        """The local optimiser's state dict, plus ``"step"``: the averager's step count."""
        optim_state_dict = self.optim.state_dict()
        optim_state_dict["step"] = self.averager.step
        return optim_state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Load the local optimiser's state and the averager's step (0, with a warning, when
        ``state_dict`` has none)."""
        self.optim.load_state_dict(state_dict)
        if "step" in state_dict:
            self.averager.step = state_dict["step"]
        else:
            warnings.warn(
                "Loaded state dict does not contain a step counter for an averager. Setting step counter to 0.",
                stacklevel=2,
            )
            self.averager.step = 0

    def step(self) -> None:  # type: ignore[override]
        """One local step, then the averager's (which averages every ``period`` steps)."""
        self.optim.step()
        self.averager.average_parameters(params=self.param_groups)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optim.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group: dict) -> None:
        self.optim.add_param_group(param_group)
