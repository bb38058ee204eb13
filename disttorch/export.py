"""``torch.export``: a module's forward captured as a graph, with ``torch.fx``'s symbolic
tracing (disttorch has no TorchDynamo and no ATen operators).

``export(module, args)`` traces ``module`` with :func:`disttorch.fx`'s tracing, each call
also run on the example inputs (``fx/_example_trace.py``): what is no tensor (a size, a
dimension count, a dtype, an input such as ``use_cache=False``) is the example's value, so
shapes are specialised to the example's as PyTorch's export does, and a forward may slice,
loop or branch on them. A forward wrapped by a decorator taking ``(*args, **kwargs)`` and
one returning a registered pytree container (transformers' ``ModelOutput``) are exported
too, and a tensor's proxy answers ``isinstance(x, torch.Tensor)`` and ``callable(x)`` as the
tensor does (einops picks its backend so). The forward runs once, in the trace (a ``print`` in it prints once, as in
PyTorch); the graph is then run on the examples and checked against the trace's result, and an
:class:`ExportedProgram` returned. Its graph's nodes are the module's own calls (layers,
torch functions, tensor methods), where PyTorch's are ATen operators, and ``print(ep)``
shows that graph's code. Control flow on a tensor's values raises fx's ``TraceError``, as
PyTorch's export refuses it. ``dynamic_shapes`` is checked against the inputs as PyTorch
checks it; when it names a dimension, sizes are recorded instead of fixed (the graph then
follows other sizes, and a forward branching on a size raises ``TraceError``, as plain
fx tracing does). ``ep.module()`` is a ``GraphModule`` computing what the module computes, sharing its
parameters and buffers. ``save``/``load`` write and read an archive
(``_module_archive.py``) in any disttorch process; PyTorch's ``.pt2`` files cannot be read,
nor ours by PyTorch.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from typing import Any, BinaryIO

from ._compile import _export_region
from ._module_archive import EXPORTED_PROGRAM
from ._module_archive import read as read_archive
from ._module_archive import write as write_archive
from ._tensor import Tensor
from .fx import Graph, GraphModule
from .fx._example_trace import ExampleTracer
from .nn.modules.module import Module
from .utils import _pytree

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "export", "load", "save"]


class Dim:
    """``torch.export.Dim(name, *, min=None, max=None)``: a named dynamic dimension of a
    ``dynamic_shapes`` spec."""

    AUTO, STATIC, DYNAMIC = "AUTO", "STATIC", "DYNAMIC"

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None) -> None:
        self.__name__, self.min, self.max = name, min, max

    def __repr__(self) -> str:
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"


class ExportGraphSignature:
    """What the graph's inputs and outputs are: the module's parameters and buffers (by
    their ``state_dict`` names), the user's inputs and the outputs (by node name)."""

    def __init__(
        self, parameters: list[str], buffers: list[str], user_inputs: tuple, user_outputs: tuple
    ) -> None:
        self.parameters, self.buffers = parameters, buffers
        self.user_inputs, self.user_outputs = user_inputs, user_outputs

    def __str__(self) -> str:
        lines = ["# inputs"]
        lines += [f"p_{n.replace('.', '_')}: PARAMETER target='{n}'" for n in self.parameters]
        lines += [f"b_{n.replace('.', '_')}: BUFFER target='{n}'" for n in self.buffers]
        lines += [f"{n}: USER_INPUT" for n in self.user_inputs]
        lines += ["", "# outputs"] + [f"{n}: USER_OUTPUT" for n in self.user_outputs]
        return "\n".join(lines)


class ExportedProgram:
    """A module's forward as a graph (see the module docstring). Not callable itself, as in
    PyTorch: call :meth:`module`'s result."""

    def __init__(
        self, root: Module, graph_module: GraphModule, example_inputs: tuple, guards: tuple = ()
    ) -> None:
        self._root, self.graph_module, self.example_inputs = root, graph_module, example_inputs
        # (input name, dim, size) the graph was specialised to; (input name, dim, (min, max))
        # for a dynamic dimension with bounds
        self._guards = guards
        nodes = list(graph_module.graph.nodes)
        outputs = _pytree.tree_leaves(nodes[-1].args[0]) if nodes and nodes[-1].op == "output" else []
        self.graph_signature = ExportGraphSignature(
            [name for name, _ in root.named_parameters()],
            [name for name, _ in root.named_buffers()],
            tuple(_user_input(n) for n in nodes if n.op == "placeholder"),
            tuple(getattr(o, "name", str(o)) for o in outputs),
        )
        self.range_constraints: dict = {}

    @property
    def graph(self) -> Any:
        return self.graph_module.graph

    @property
    def state_dict(self) -> dict:
        """The module's parameters and buffers by name (the tensors themselves)."""
        return {**dict(self._root.named_parameters()), **dict(self._root.named_buffers())}

    def module(self) -> GraphModule:
        """A ``GraphModule`` running the graph, sharing the module's parameters and buffers;
        an input whose size differs from the example's where the graph is specialised to it
        raises PyTorch's ``AssertionError('Guard failed: x.size()[0] == 2')``."""
        gm = GraphModule(self._root, self.graph_module.graph, "GraphModule")
        guards = getattr(self, "_guards", ())  # (an archive written before guards: none)
        if guards:
            gm.register_forward_pre_hook(functools.partial(_check_guards, guards), with_kwargs=True)
        return gm

    def run_decompositions(self, decomp_table: dict | None = None, **kwargs: Any) -> ExportedProgram:
        """This program: its nodes are already the calls disttorch runs (no ATen to lower)."""
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Unable to call ExportedProgram directly. You should use `exported_program.module()` instead."
        )

    def __str__(self) -> str:
        code = self.graph_module.code.strip("\n").replace("\n", "\n        ")
        return (
            "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        "
            + code
            + "\n\nGraph signature: \n    "
            + str(self.graph_signature).replace("\n", "\n    ")
            + f"\n\nRange constraints: {self.range_constraints}\n"
        )


def _user_input(node: Any) -> Any:
    """A placeholder as the signature names it: its name, or the constant it was fixed to (an
    input holding no tensor, such as ``use_cache=False``: PyTorch lists the value)."""
    value = node.meta.get("val", _NO_VALUE)
    if value is _NO_VALUE or any(isinstance(x, Tensor) for x in _pytree.tree_leaves(value)):
        return node.target
    return value


_NO_VALUE = object()


def export(
    mod: Module,
    args: tuple = (),
    kwargs: dict | None = None,
    *,
    dynamic_shapes: Any = None,
    strict: bool = False,
    preserve_module_call_signature: tuple = (),
) -> ExportedProgram:
    """Capture ``mod``'s forward on the example ``args``/``kwargs`` (see the module
    docstring). Raises fx's ``TraceError`` (``torch.fx.proxy``) where the forward's control
    flow depends on a tensor's values, and ``ValueError`` when the graph disagrees with the
    module on the examples."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    kwargs = dict(kwargs or {})
    bound = inspect.signature(mod.forward).bind(*args, **kwargs)
    _check_dynamic_shapes(list(bound.arguments), dynamic_shapes)
    # an argument the example leaves out keeps its default, as a constant of the graph (an
    # empty *args or **kwargs: no input, as PyTorch's graph has none for them)
    empty = {inspect.Parameter.VAR_POSITIONAL: (), inspect.Parameter.VAR_KEYWORD: {}}
    left_out = {
        p.name: empty.get(p.kind, p.default)
        for p in bound.signature.parameters.values()
        if p.name not in bound.arguments and (p.default is not inspect.Parameter.empty or p.kind in empty)
    }
    examples = {**bound.arguments, **{f"{n}_1": v for n, v in left_out.items()}}
    dynamic = any(
        isinstance(d, Dim) or d in (Dim.AUTO, Dim.DYNAMIC) for d in _pytree.tree_leaves(dynamic_shapes)
    )
    tracer = ExampleTracer(examples, symbolic_sizes=dynamic)
    with warnings.catch_warnings(), _export_region():  # (fx cannot check a default that is no number)
        warnings.filterwarnings("ignore", message="Was not able to add assertion")
        graph = tracer.trace(mod, concrete_args=left_out)
    _drop_inputs(graph, [f"{n}_1" for n in left_out])
    traced = GraphModule(tracer.root, graph, type(mod).__name__)
    from .autograd.grad_mode import no_grad

    with no_grad():
        expected, got = tracer.output_value(graph), traced(*args, **kwargs)
    if _pytree.tree_structure(expected) != _pytree.tree_structure(got):
        raise ValueError("torch.export: the traced graph returns another structure than the module")
    dims = _dynamic_dims(dynamic_shapes, list(bound.arguments))
    guards = tuple(
        (name, d, size)
        for name, value in bound.arguments.items()
        if isinstance(value, Tensor)
        for d, size in enumerate(value.shape)
        if d not in dims.get(name, ())
    )
    guards += _range_guards(dynamic_shapes, bound.arguments)
    return ExportedProgram(mod, traced, (args, kwargs), guards)


def _range_guards(dynamic_shapes: Any, inputs: dict) -> tuple:
    """``(name, dim, (min, max))`` for each ``Dim`` of ``dynamic_shapes`` given a bound (``None``
    for a side left open). The example's size must lie in it: else PyTorch's
    ``ConstraintViolationError('10 not in range [11, 18]')``."""
    if dynamic_shapes is None:
        return ()
    names = list(inputs)
    spec = dynamic_shapes if isinstance(dynamic_shapes, dict) else dict(zip(names, dynamic_shapes))
    out = []
    for name, dims in spec.items():
        value = inputs.get(name)
        pairs = dims.items() if isinstance(dims, dict) else enumerate(dims or ())
        for d, dim in pairs:
            if not isinstance(dim, Dim) or (dim.min is None and dim.max is None):
                continue
            if isinstance(value, Tensor) and d < value.dim():
                size = value.shape[d]
                if (dim.min is not None and size < dim.min) or (dim.max is not None and size > dim.max):
                    from .fx.experimental.symbolic_shapes import ConstraintViolationError

                    lo = dim.min if dim.min is not None else 0
                    hi = dim.max if dim.max is not None else "int_oo"
                    raise ConstraintViolationError(
                        f"{size} not in range [{lo}, {hi}]\n\nThe error above occurred when calling "
                        "torch.export.export."
                    )
            out.append((name, d, (dim.min, dim.max)))
    return tuple(out)


def _dynamic_dims(dynamic_shapes: Any, names: list[str]) -> dict[str, set[int]]:
    """The dimensions ``dynamic_shapes`` leaves free, by input name."""
    if dynamic_shapes is None:
        return {}
    spec = dynamic_shapes if isinstance(dynamic_shapes, dict) else dict(zip(names, dynamic_shapes))
    free: dict[str, set[int]] = {}
    for name, dims in spec.items():
        pairs = dims.items() if isinstance(dims, dict) else enumerate(dims or ())
        free[name] = {d for d, v in pairs if v is not None and v != Dim.STATIC}
    return free


def _check_guards(guards: tuple, module: Module, args: tuple, kwargs: dict) -> None:
    """A forward pre-hook: the inputs have the sizes the graph was specialised to."""
    given = inspect.signature(module.forward).bind(*args, **kwargs).arguments
    for name, d, size in guards:
        value = given.get(name)
        if not isinstance(value, Tensor):
            continue
        if isinstance(size, tuple):  # a dynamic dimension's bounds (``Dim(min=, max=)``)
            lo, hi = size
            if value.dim() > d and lo is not None and value.shape[d] < lo:
                raise AssertionError(f"Guard failed: {name}.size()[{d}] >= {lo}")
            if value.dim() > d and hi is not None and value.shape[d] > hi:
                raise AssertionError(f"Guard failed: {name}.size()[{d}] <= {hi}")
        elif value.dim() <= d or value.shape[d] != size:
            raise AssertionError(f"Guard failed: {name}.size()[{d}] == {size}")


def _drop_inputs(graph: Graph, names: list[str]) -> None:
    """``graph`` without the placeholders ``names`` (the inputs fx keeps for arguments fixed
    to their defaults) and the checks of their values, which are all that use them."""
    doomed = {n for n in graph.nodes if n.op == "placeholder" and n.name in names}
    for node in graph.nodes:
        if any(arg in doomed for arg in node._input_nodes):
            doomed.add(node)
    for node in reversed(list(graph.nodes)):
        if node in doomed:
            graph.erase_node(node)


def _check_dynamic_shapes(names: list[str], dynamic_shapes: Any) -> None:
    """PyTorch's check of a ``dynamic_shapes`` dict: its keys are the names of the inputs."""
    if not isinstance(dynamic_shapes, dict):
        return
    if sorted(dynamic_shapes) != sorted(names):
        raise ValueError(
            "When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg names "
            f"{names} of `inputs`, but here they are {list(dynamic_shapes)}. Alternatively, you could "
            "also ignore arg names entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`."
        )


def save(
    ep: ExportedProgram, f: str | os.PathLike | BinaryIO, *, extra_files: dict | None = None, **kwargs: Any
) -> None:
    """Write ``ep`` to ``f`` (a path or a writable binary file), with ``extra_files``
    (name -> str or bytes); :func:`load` reads it back."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(
            f"The 'ep' parameter must be an instance of 'ExportedProgram', got '{type(ep).__name__}' instead."
        )
    write_archive(ep, f, EXPORTED_PROGRAM, extra_files)


def load(
    f: str | os.PathLike | BinaryIO, *, extra_files: dict | None = None, **kwargs: Any
) -> ExportedProgram:
    """The exported program in a file :func:`save` wrote; fills ``extra_files`` with the saved
    extra files' bytes. Loading unpickles the file, which can run code from it: load only
    archives you trust."""
    return read_archive(f, EXPORTED_PROGRAM, extra_files)
