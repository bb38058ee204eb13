"""The parallel styles: how one module of a tensor-parallel plan is cut and how its
inputs and outputs are laid out (mirrors ``torch.distributed.tensor.parallel.style``).

- :class:`ColwiseParallel`: ``nn.Linear``'s weight (and bias) cut by output features,
  ``Shard(0)``; ``nn.Embedding``'s table cut by columns, ``Shard(1)``. The input is
  replicated, the output sharded on its last dimension.
- :class:`RowwiseParallel`: ``nn.Linear``'s weight cut by input features, ``Shard(1)``
  (bias replicated); ``nn.Embedding``'s table by rows, ``Shard(0)``. The input is sharded
  on its last dimension (an embedding's indices replicated); the output is a partial sum,
  reduced to ``output_layouts`` (``Replicate()``: all-reduce; ``Shard(d)``: reduce-scatter).
- :class:`SequenceParallel`: parameters replicated, activations sharded on the sequence
  dimension (norms and dropout run on each rank's part of the sequence).
- :class:`PrepareModuleInput` / :class:`PrepareModuleOutput` /
  :class:`PrepareModuleInputOutput`: only re-lay a module's inputs or outputs.

A style turns plain input tensors into DTensors with ``DTensor.from_local`` (each rank's
tensor is its piece under ``input_layouts``), redistributes them to what the module needs,
and hands back plain tensors (``to_local()``) when ``use_local_output`` is set.
"""

from __future__ import annotations

from typing import Any

from ....distributed.device_mesh import DeviceMesh
from ....distributed.tensor import DTensor, Replicate, Shard, distribute_module, distribute_tensor
from ....distributed.tensor.placement_types import Placement
from ...modules.linear import Linear
from ...modules.sparse import Embedding
from ...parameter import Parameter

__all__ = [
    "ParallelStyle",
    "ColwiseParallel",
    "RowwiseParallel",
    "SequenceParallel",
    "PrepareModuleInput",
    "PrepareModuleOutput",
    "PrepareModuleInputOutput",
]


class ParallelStyle:
    """The base of the styles: ``_apply(module, device_mesh)`` parallelises ``module``."""

    src_data_rank: int | None = 0

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply")


def _as_dtensor(value: Any, mesh: DeviceMesh, layout: tuple[Placement, ...], what: str) -> DTensor:
    """``value`` as a DTensor: a DTensor as it is, a plain tensor as this rank's piece under ``layout``."""
    if isinstance(value, DTensor):
        return value
    if not hasattr(value, "_data"):
        raise ValueError(f"expecting input of {what} to be a torch.Tensor or DTensor, but got {value!r}")
    return DTensor.from_local(value, mesh, layout, run_check=False)


def _relaid(value: DTensor, layout: tuple[Placement, ...], use_local: bool) -> Any:
    """``value`` redistributed to ``layout`` (if it is not so already), local if asked."""
    if value.placements != layout:
        value = value.redistribute(placements=layout)
    return value.to_local() if use_local else value


def _distribute_params(
    module: Any, mesh: DeviceMesh, layouts: dict[str, Placement], src_data_rank: Any
) -> None:
    """Replace ``module``'s own parameters named in ``layouts`` by DTensor parameters."""
    for name, placement in layouts.items():
        param = module._parameters.get(name)
        if param is None:
            continue
        whole = distribute_tensor(param.detach(), mesh, [placement], src_data_rank=src_data_rank)
        module.register_parameter(name, Parameter(whole, requires_grad=param.requires_grad))


class _LinearOrEmbeddingStyle(ParallelStyle):
    """What Colwise and Rowwise share: one input relaid before ``forward``, the output
    after, and parameters cut by a layout per module kind."""

    #: parameter layouts and the layout the module's input needs, per module kind
    _plans: dict[type, tuple[dict[str, Placement], tuple[Placement, ...]]] = {}
    _default_input: Placement
    _default_output: Placement

    def __init__(
        self,
        *,
        input_layouts: Placement | None = None,
        output_layouts: Placement | None = None,
        use_local_output: bool = True,
    ) -> None:
        self.input_layouts = (input_layouts or self._default_input,)
        self.output_layouts = (output_layouts or self._default_output,)
        self.use_local_output = use_local_output

    def _plan(self, module: Any) -> tuple[dict[str, Placement], tuple[Placement, ...]]:
        for kind, plan in self._plans.items():
            if isinstance(module, kind):
                return plan
        raise NotImplementedError(f"{type(self).__name__} currently only support nn.Linear and nn.Embedding!")

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        params, desired_input = self._plan(module)
        self.desired_input_layouts = desired_input

        def partition(name: str, submodule: Any, mesh: DeviceMesh) -> None:
            if submodule is module:
                _distribute_params(submodule, mesh, params, self.src_data_rank)

        def prepare_input(mod: Any, inputs: tuple, mesh: DeviceMesh) -> Any:
            x = _as_dtensor(inputs[0], mesh, self.input_layouts, type(mod).__name__)
            return (_relaid(x, desired_input, use_local=False), *inputs[1:])

        def prepare_output(mod: Any, outputs: Any, mesh: DeviceMesh) -> Any:
            return _relaid(outputs, self.output_layouts, self.use_local_output)

        return distribute_module(module, device_mesh, partition, prepare_input, prepare_output)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
            f"use_local_output={self.use_local_output})"
        )


class ColwiseParallel(_LinearOrEmbeddingStyle):
    """Cut ``nn.Linear`` by output features (``nn.Embedding`` by columns).

    Args:
        input_layouts: how the plain input is laid out (default ``Replicate()``).
        output_layouts: the output's layout (default ``Shard(-1)``).
        use_local_output: hand back the output's local piece (default) or the DTensor.
    """

    _default_input, _default_output = Replicate(), Shard(-1)
    _plans = {
        Linear: ({"weight": Shard(0), "bias": Shard(0)}, (Replicate(),)),
        Embedding: ({"weight": Shard(1)}, (Replicate(),)),
    }


class RowwiseParallel(_LinearOrEmbeddingStyle):
    """Cut ``nn.Linear`` by input features (``nn.Embedding`` by rows); the output's partial
    sums are reduced to ``output_layouts``.

    Args:
        input_layouts: how the plain input is laid out (default ``Shard(-1)``).
        output_layouts: the output's layout (default ``Replicate()``).
        use_local_output: hand back the output's local piece (default) or the DTensor.
    """

    _default_input, _default_output = Shard(-1), Replicate()
    _plans = {
        Linear: ({"weight": Shard(1), "bias": Replicate()}, (Shard(-1),)),
        Embedding: ({"weight": Shard(0)}, (Replicate(),)),
    }


class SequenceParallel(ParallelStyle):
    """Replicate the module's parameters and run it on sequence shards: the input is laid
    out as ``Shard(sequence_dim)`` (a plain input is taken as this rank's shard).

    Args:
        sequence_dim: the sequence dimension of the input (default 1).
        use_local_output: hand back the output's local piece (default: the DTensor).
    """

    def __init__(self, *, sequence_dim: int = 1, use_local_output: bool = False) -> None:
        self.sequence_sharding = (Shard(sequence_dim),)
        self.use_local_output = use_local_output

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        def replicate(name: str, submodule: Any, mesh: DeviceMesh) -> None:
            for p_name, param in list(submodule._parameters.items()):
                if param is not None and not isinstance(param, DTensor):
                    whole = DTensor.from_local(param.detach(), mesh, [Replicate()], run_check=False)
                    submodule.register_parameter(p_name, Parameter(whole, requires_grad=param.requires_grad))

        def prepare_input(mod: Any, inputs: tuple, mesh: DeviceMesh) -> Any:
            x = _as_dtensor(inputs[0], mesh, self.sequence_sharding, type(mod).__name__)
            return (_relaid(x, self.sequence_sharding, use_local=False), *inputs[1:])

        def prepare_output(mod: Any, outputs: Any, mesh: DeviceMesh) -> Any:
            return outputs.to_local() if self.use_local_output else outputs

        return distribute_module(module, device_mesh, replicate, prepare_input, prepare_output)

    def __repr__(self) -> str:
        return f"SequenceParallel(sequence_dim={self.sequence_sharding[0].dim}, use_local_output={self.use_local_output})"


def _layouts(value: Placement | tuple | None) -> tuple | None:
    return (value,) if isinstance(value, Placement) else value


class PrepareModuleInput(ParallelStyle):
    """Re-lay a module's inputs before ``forward``: input ``i``, taken as laid out by
    ``input_layouts[i]``, is redistributed to ``desired_input_layouts[i]`` (``None``: left
    as it is); likewise keyword inputs by name.

    Args:
        input_layouts, desired_input_layouts: one placement per positional input.
        input_kwarg_layouts, desired_input_kwarg_layouts: placements by keyword.
        use_local_output: hand the module local pieces instead of DTensors.
    """

    def __init__(
        self,
        *,
        input_layouts: Placement | tuple | None = None,
        desired_input_layouts: Placement | tuple | None = None,
        input_kwarg_layouts: dict[str, Placement] | None = None,
        desired_input_kwarg_layouts: dict[str, Placement] | None = None,
        use_local_output: bool = False,
    ) -> None:
        self.input_layouts = _layouts(input_layouts)
        self.desired_input_layouts = _layouts(desired_input_layouts)
        self.use_local_output = use_local_output
        if self.input_layouts is not None:
            if self.desired_input_layouts is None:
                raise AssertionError("desired module inputs should not be None!")
            if len(self.input_layouts) != len(self.desired_input_layouts):
                raise AssertionError("input_layouts and desired_input_layouts should have same length!")
        self.with_kwargs = input_kwarg_layouts is not None
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        if len(self.input_kwarg_layouts) != len(self.desired_input_kwarg_layouts):
            raise AssertionError(
                "input_kwarg_layouts and desired_input_kwarg_layouts should have same length!"
            )

    def _one(self, value: Any, mesh: DeviceMesh, layout: Placement | None, desired: Placement | None) -> Any:
        if layout is None:
            return value
        x = _as_dtensor(value, mesh, (layout,), "the module")
        return _relaid(x, (desired,) if desired is not None else x.placements, self.use_local_output)

    def _inputs(self, inputs: tuple, mesh: DeviceMesh) -> tuple:
        if self.input_layouts is None:
            return inputs
        if len(inputs) != len(self.input_layouts):
            raise ValueError("module inputs and input_layouts should have same length!")
        return tuple(
            self._one(x, mesh, layout, desired)
            for x, layout, desired in zip(inputs, self.input_layouts, self.desired_input_layouts)
        )

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        if self.with_kwargs:

            def hook(mod: Any, inputs: tuple, kwargs: dict) -> tuple:
                kwargs = {
                    k: self._one(
                        v,
                        device_mesh,
                        self.input_kwarg_layouts.get(k),
                        self.desired_input_kwarg_layouts.get(k),
                    )
                    for k, v in kwargs.items()
                }
                return self._inputs(inputs, device_mesh), kwargs

            module.register_forward_pre_hook(hook, with_kwargs=True)
        else:
            module.register_forward_pre_hook(lambda mod, inputs: self._inputs(inputs, device_mesh))
        return module

    def __repr__(self) -> str:
        return (
            f"PrepareModuleInput(input_layouts={self.input_layouts}, desired_input_layouts="
            f"{self.desired_input_layouts}, input_kwarg_layouts={self.input_kwarg_layouts}, "
            f"desired_input_kwarg_layouts={self.desired_input_kwarg_layouts}, use_local_output={self.use_local_output})"
        )


class PrepareModuleOutput(ParallelStyle):
    """Re-lay a module's outputs after ``forward``: output ``i``, taken as laid out by
    ``output_layouts[i]`` (``None``: left as it is), is redistributed to
    ``desired_output_layouts[i]``.

    Args:
        output_layouts, desired_output_layouts: one placement per output.
        use_local_output: hand back local pieces (default) instead of DTensors.
    """

    def __init__(
        self,
        *,
        output_layouts: Placement | tuple,
        desired_output_layouts: Placement | tuple,
        use_local_output: bool = True,
    ) -> None:
        self.output_layouts = _layouts(output_layouts)
        self.desired_output_layouts = _layouts(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same length!")

    def _outputs(self, outputs: Any, mesh: DeviceMesh) -> Any:
        many = outputs if isinstance(outputs, tuple) else (outputs,)
        if len(many) != len(self.output_layouts):
            raise ValueError("module outputs and output_layouts should have same length!")
        out = []
        for value, layout, desired in zip(many, self.output_layouts, self.desired_output_layouts):
            if layout is None:
                out.append(value)
            else:
                out.append(
                    _relaid(
                        _as_dtensor(value, mesh, (layout,), "the module"), (desired,), self.use_local_output
                    )
                )
        return out[0] if len(out) == 1 else tuple(out)

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        module.register_forward_hook(lambda mod, inputs, outputs: self._outputs(outputs, device_mesh))
        return module

    def __repr__(self) -> str:
        return (
            f"PrepareModuleOutput(output_layouts={self.output_layouts}, desired_output_layouts="
            f"{self.desired_output_layouts}, use_local_output={self.use_local_output})"
        )


class PrepareModuleInputOutput(ParallelStyle):
    """:class:`PrepareModuleInput` and :class:`PrepareModuleOutput` on one module
    (``use_local_input`` is the input side's ``use_local_output``)."""

    def __init__(
        self,
        *,
        input_layouts: Placement | tuple | None = None,
        desired_input_layouts: Placement | tuple | None = None,
        input_kwarg_layouts: dict[str, Placement] | None = None,
        desired_input_kwarg_layouts: dict[str, Placement] | None = None,
        use_local_input: bool = False,
        output_layouts: Placement | tuple,
        desired_output_layouts: Placement | tuple,
        use_local_output: bool = True,
    ) -> None:
        self.prepare_module_input = PrepareModuleInput(
            input_layouts=input_layouts,
            desired_input_layouts=desired_input_layouts,
            input_kwarg_layouts=input_kwarg_layouts,
            desired_input_kwarg_layouts=desired_input_kwarg_layouts,
            use_local_output=use_local_input,
        )
        self.prepare_module_output = PrepareModuleOutput(
            output_layouts=output_layouts,
            desired_output_layouts=desired_output_layouts,
            use_local_output=use_local_output,
        )

    def _apply(self, module: Any, device_mesh: DeviceMesh) -> Any:
        self.prepare_module_input._apply(module, device_mesh)
        self.prepare_module_output._apply(module, device_mesh)
        return module

    def __repr__(self) -> str:
        return f"PrepareModuleInputOutput({self.prepare_module_input!r}, {self.prepare_module_output!r})"
