"""``DTensor``: a tensor spread over a ``DeviceMesh``, one piece per rank.

Here a DTensor's own memory (``_data``) is its local piece, so in-place arithmetic on it
(optimiser updates) works on the piece; its metadata is the whole tensor's, as in PyTorch:
``shape``, ``size()``, ``numel()``, ``dim()``/``ndim``, ``stride()`` and ``len()`` describe
the global tensor, ``to_local()`` gives the piece. Ops that take DTensors go through
sharding propagation (``_dispatch.py``): a rule per op says which layout its inputs need
and which layout its output has, the inputs are redistributed, the op runs on the local
pieces, and the output is a DTensor again. Views and reshapes take global sizes
(``_view_methods.py``) and the view rules turn them into the pieces' sizes.

Layouts, one placement per mesh dimension (``placement_types.py``): ``Shard(d)`` for any
tensor dimension (uneven sizes split as ``torch.chunk`` splits them), ``Replicate()`` and
``Partial(op)``. ``redistribute`` moves between any two (``_redistribute.py``);
``from_local``, ``to_local``, ``full_tensor`` and ``redistribute`` are differentiable.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Sequence

import numpy as np

from ..._tensor import Size, Tensor, _wrap_dim
from ...autograd.engine import add_to_grad
from ...autograd.function import Function, dispatch_disabled, register_function_dispatch
from .. import collectives, groups
from ..comm_record import counted_as
from ..device_mesh import DeviceMesh, init_device_mesh, mesh_from_state
from ..reduce_ops import ReduceOp
from ._dispatch import dispatch
from ._partial_grad import PartialGrad, with_partial
from ._partial_inplace import PartialInplaceRules
from ._redistribute import Redistribute, redistribute_local
from ._view_methods import GlobalViewMethods
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor"]


def normalize_placements(
    mesh: DeviceMesh, placements: Sequence[Placement] | None, ndim: int
) -> tuple[Placement, ...]:
    """One placement per mesh dimension (all ``Replicate()`` when None), ``Shard`` dims made
    non-negative for a tensor of ``ndim`` dimensions; a clear error for anything else."""
    placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
    if len(placements) != mesh.ndim:
        raise ValueError(
            f"`placements` must have the same length as `device_mesh.ndim`! Found placements "
            f"length: {len(placements)}, and device_mesh.ndim: {mesh.ndim}."
        )
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Shard, Replicate or Partial, got {p!r}")
        if isinstance(p, Shard):
            rank = max(ndim, 1)  # a 0-d tensor is cut as one row (FSDP's convention)
            if not -rank <= p.dim < rank:
                raise IndexError(f"{p!r} is out of range for a tensor of {ndim} dimensions")
            p = dataclasses.replace(p, dim=p.dim % rank)
        out.append(p)
    return tuple(out)


class _FromLocal(Function):
    """The local piece, as the same values in a new node (the gradient passes through)."""

    _raw = True

    @staticmethod
    def forward(ctx, x: Tensor) -> np.ndarray:
        return x._data.view()

    @staticmethod
    def backward(ctx, g: Tensor) -> Tensor:
        return g


class _ToLocal(Function):
    """A DTensor's piece as a plain tensor; the gradient of the piece, read as laid out by
    ``grad_placements``, is moved to the DTensor's own layout."""

    _raw = True

    @staticmethod
    def forward(ctx, x: "DTensor", grad_placements: tuple | None) -> np.ndarray:
        ctx.move = (x._mesh, grad_placements, x._placements, x._global_shape)
        return x._data.view()

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        mesh, src, dst, shape = ctx.move
        if src is None:
            return g, None
        dst = tuple(Replicate() if p.is_partial() else p for p in dst)
        return Tensor._make(redistribute_local(np.asarray(g._data), mesh, src, dst, shape)), None


_routed: list = []


def _route_ops_here() -> None:
    """Send ops on DTensors to the sharding propagation (``_dispatch``) from the first DTensor
    on; until then ``Function.apply`` pays nothing for it."""
    if not _routed:
        register_function_dispatch(DTensor, functools.partial(dispatch, DTensor))
        _routed.append(True)


def _as_hooks_see_it(grad: Tensor, mesh: DeviceMesh, placements: tuple, shape: tuple) -> "DTensor":
    """Gradient ``grad`` (a piece, or a summand ``PartialGrad``) of a tensor laid out as
    ``placements``, as PyTorch's tensor hooks see it: a DTensor, ``Partial`` where it is a
    summand, sharing its memory and node."""
    return DTensor._share(grad, mesh, with_partial(placements, grad), shape)


def _piece_from_hook(grad: Tensor, mesh: DeviceMesh, placements: tuple, shape: tuple) -> Tensor:
    """What a hook handed back, as the engine carries gradients: the piece; a summand
    (``PartialGrad``) along the mesh dimensions where it is ``Partial`` and the tensor is not;
    a DTensor of another layout moved to the tensor's (outside the graph)."""
    if not isinstance(grad, DTensor):
        return grad
    summed = tuple(
        m for m, p in enumerate(grad._placements) if p.is_partial() and not placements[m].is_partial()
    )
    if grad._placements != tuple(Partial() if m in summed else p for m, p in enumerate(placements)):
        return Tensor._make(redistribute_local(grad._data, mesh, grad._placements, placements, shape))
    piece = grad.to_local()
    return PartialGrad.of(piece, mesh, summed) if summed else piece


def _rebuild_dtensor(local: Tensor, spec: tuple, requires_grad: bool) -> "DTensor":
    """A pickled DTensor (``DTensor.__reduce_ex__``): ``local`` laid out as ``spec`` says."""
    state, placements, global_shape, global_stride = spec
    out = DTensor._wrap(local._data, mesh_from_state(state, lazy=True), placements, global_shape)
    out._global_stride = global_stride
    out._rg = requires_grad
    return out


class DTensor(PartialInplaceRules, GlobalViewMethods, Tensor):
    """A tensor whose memory is this rank's piece of a whole laid out over ``device_mesh``;
    its shape, strides and size are the whole's.

    Build one with :func:`distribute_tensor` or :meth:`DTensor.from_local`.
    """

    __module__ = "disttorch.distributed.tensor"  # where it is published: prints and pickles so
    _functions_call_methods = True  # torch.reshape(dt, ...) is dt.reshape(...): global sizes

    _mesh: DeviceMesh
    _placements: tuple[Placement, ...]
    _global_shape: tuple[int, ...]
    _global_stride: tuple[int, ...] | None = None  # the whole's, where known (else derived from the piece's)

    @classmethod
    def _wrap(
        cls, local: np.ndarray, mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Any
    ) -> "DTensor":
        """A new leaf DTensor over ``local``."""
        t = object.__new__(cls)
        Tensor._init_state(t, local)
        t._set_spec(mesh, placements, global_shape)
        return t

    @classmethod
    def _share(
        cls, t: Tensor, mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Any
    ) -> "DTensor":
        """A DTensor that is ``t`` for autograd (same node, same memory) with this layout."""
        out = object.__new__(cls)
        Tensor._init_state(out, t._data, t.grad_fn, t._output_nr)
        out._rg = t._rg
        out._set_spec(mesh, placements, global_shape)
        return out

    def _set_spec(self, mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Any) -> None:
        _route_ops_here()
        self._global_shape = tuple(int(s) for s in global_shape)
        self._mesh = mesh
        self._placements = normalize_placements(mesh, placements, len(self._global_shape))

    # ------------------------------------------------------------------ pickling, copying
    _saves_itself = True  # torch.save writes it as __reduce_ex__ says, not as its local piece

    def __reduce_ex__(self, protocol: int) -> tuple:
        """As PyTorch pickles one: the local piece, the mesh (its ranks and names: a live mesh
        of the loading job is reused, else one is made, its groups on first use), the
        placements, the whole's shape and strides, and ``requires_grad``."""
        local = Tensor._make(self._data)
        spec = (self._mesh._state(), self._placements, self._global_shape, self._global_stride)
        return (_rebuild_dtensor, (local, spec, self._rg and self.grad_fn is None))

    def __deepcopy__(self, memo: dict) -> "DTensor":
        """A copy of the local piece with the same layout, on the same mesh (its groups are
        the job's, not copied)."""
        memo.setdefault(id(self._mesh), self._mesh)
        return super().__deepcopy__(memo)

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._mesh

    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._placements

    def _partial_placements(self) -> tuple[Placement, ...] | None:
        return self._placements if any(p.is_partial() for p in self._placements) else None

    @property
    def global_shape(self) -> tuple[int, ...]:
        """The shape of the whole tensor, as a tuple (``shape`` as a ``Size``)."""
        return self._global_shape

    # ------------------------------------------------------------------ the whole's metadata
    @property
    def shape(self) -> Size:
        return Size(self._global_shape)

    def size(self, dim: int | None = None) -> Size | int:
        """The global shape, or the global size of dimension ``dim``."""
        if dim is None:
            return Size(self._global_shape)
        return self._global_shape[_wrap_dim(dim, len(self._global_shape))]

    def dim(self) -> int:
        return len(self._global_shape)

    ndim = property(dim)
    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._global_shape)

    nelement = numel

    def __len__(self) -> int:
        if not self._global_shape:
            raise TypeError("len() of a 0-d tensor")
        return self._global_shape[0]

    def stride(self, dim: int | None = None) -> tuple | int:
        """The whole's strides: those of the tensor ``distribute_tensor`` cut, those given to
        ``from_local(stride=)``, else derived from the piece's as PyTorch derives them: along
        each mesh dimension that shards tensor dimension ``d``, every stride at least ``d``'s
        (the dimensions laid out outside it) grows by that mesh dimension's size."""
        st = self._global_stride or self._strides_of_whole()
        return st if dim is None else st[_wrap_dim(dim, len(st))]

    def _strides_of_whole(self) -> tuple[int, ...]:
        local = self._data
        if local.ndim != len(self._global_shape):  # FSDP's 0-d parameter, kept as one row
            return ()
        st = [s // local.itemsize for s in local.strides]
        for mesh_dim, p in enumerate(self._placements):
            if p.is_shard():
                n = self._mesh.size(mesh_dim)
                st = [s * n if i != p.dim and s >= st[p.dim] else s for i, s in enumerate(st)]
        return tuple(st)

    @property
    def grad(self) -> "DTensor | None":
        """The gradient, a DTensor laid out as this tensor (its local piece's gradient)."""
        g = self._grad
        if g is not None and not isinstance(g, DTensor):
            g = self._grad = self._same_layout(g._data)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        Tensor.grad.fset(self, value)

    def _add_grad(self, grad: Tensor, shared: bool, create_graph: bool) -> None:
        """The engine's ``.grad += grad`` for a DTensor leaf: a summand (``PartialGrad``)
        is kept as a ``Partial`` gradient, as PyTorch keeps it; a gradient of another
        layout than the one held is moved to it first."""
        old = self._grad
        held = old._placements if isinstance(old, DTensor) else self._placements
        layout = with_partial(self._placements, grad)
        if old is None and layout == self._placements or old is not None and layout == held:
            add_to_grad(
                self,
                Tensor._make(grad._data) if isinstance(grad, PartialGrad) else grad,
                shared,
                create_graph,
            )
        elif old is None:
            self._grad = DTensor._wrap(
                np.array(grad._data, copy=True), self._mesh, layout, self._global_shape
            )
        else:
            moved = redistribute_local(np.asarray(grad._data), self._mesh, layout, held, self._global_shape)
            add_to_grad(self, Tensor._make(moved), False, create_graph)

    def _hook_view(self, grad: Tensor) -> "DTensor":
        """The gradient as a tensor hook on this leaf sees it (see :func:`_as_hooks_see_it`)."""
        return _as_hooks_see_it(grad, self._mesh, self._placements, self._global_shape)

    def _from_hook_view(self, grad: Tensor) -> Tensor:
        """What the hooks handed back, as :meth:`_add_grad` takes it."""
        return _piece_from_hook(grad, self._mesh, self._placements, self._global_shape)

    def register_hook(self, hook: Any) -> Any:
        """As ``Tensor.register_hook``; the hook sees the gradient as a DTensor laid out as this
        tensor (``Partial`` where it is a summand), as PyTorch's hooks do."""
        if self.grad_fn is None:  # a leaf: the engine asks _hook_view / _from_hook_view
            return super().register_hook(hook)
        layout = (self._mesh, self._placements, self._global_shape)

        def laid_out(grad: Tensor) -> Tensor | None:
            out = hook(_as_hooks_see_it(grad, *layout))
            return None if out is None else _piece_from_hook(out, *layout)

        return super().register_hook(laid_out)

    @staticmethod
    def _joint_norm(tensors: Sequence["DTensor"], norm_type: float) -> float:
        """The ``norm_type``-norm of the whole tensors together, every element counted once:
        each rank's part of its pieces (a ``Partial`` piece reduced first), then one
        all-reduce per mesh dimension that shards them, as PyTorch's ``clip_grad_norm_``
        reduces its partial norms once (tensors sharded alike share the collectives)."""
        inf = math.isinf(norm_type)
        parts: list[list] = []  # [mesh, sharding mesh dims, part] per layout family
        for t in tensors:
            layout = tuple(Replicate() if p.is_partial() else p for p in t._placements)
            piece = redistribute_local(t._data, t._mesh, t._placements, layout, t._global_shape)
            piece = np.abs(piece).astype(np.float64, copy=False)
            if inf:
                value = float(piece.max()) if piece.size else 0.0
            else:
                value = float(np.count_nonzero(piece)) if norm_type == 0 else float((piece**norm_type).sum())
            dims = tuple(m for m, p in enumerate(layout) if p.is_shard())
            entry = next((e for e in parts if e[0] == t._mesh and e[1] == dims), None)
            if entry is None:
                entry = [t._mesh, dims, 0.0]
                parts.append(entry)
            entry[2] = max(entry[2], value) if inf else entry[2] + value
        total = 0.0
        for mesh, dims, value in parts:
            box = np.asarray([value], np.float64)
            for m in dims:
                with counted_as("c10d_functional.all_reduce"):
                    collectives.all_reduce(
                        box, op=ReduceOp.MAX if inf else ReduceOp.SUM, group=mesh.get_group(m)
                    )
            total = max(total, float(box[0])) if inf else total + float(box[0])
        return total if inf or norm_type == 0 else total ** (1.0 / norm_type)

    def _replicated_scalar(self, value: np.ndarray) -> "DTensor":
        """``value`` (0-d) as a DTensor replicated over this tensor's mesh (a total norm)."""
        return DTensor._wrap(np.asarray(value), self._mesh, (Replicate(),) * self._mesh.ndim, ())

    def _piece_laid_out_as(self, other: Tensor) -> np.ndarray:
        """This tensor's piece relaid as ``other`` (a parameter of the same global shape) is
        laid out: a ``Partial`` gradient reduced for the optimiser's step; no autograd."""
        want = getattr(other, "_placements", self._placements)
        if want == self._placements:
            return self._data
        return redistribute_local(self._data, self._mesh, self._placements, want, self._global_shape)

    @property
    def data(self) -> "DTensor":
        """This DTensor's piece and layout, detached from the graph (shares memory), as
        PyTorch's ``.data`` of a DTensor (a DTensor parameter's ``.data`` is a DTensor)."""
        out = DTensor._wrap(self._data, self._mesh, self._placements, self._global_shape)
        out._global_stride = self._global_stride
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        Tensor.data.fset(self, value)
        if isinstance(value, DTensor):
            self._set_spec(value._mesh, value._placements, value._global_shape)
            self._global_stride = value._global_stride

    def detach(self) -> "DTensor":
        """A DTensor sharing this one's piece and layout, outside the graph."""
        out = DTensor._wrap(self._data, self._mesh, self._placements, self._global_shape)
        out._version_box = self._version_box
        out._global_stride = self._global_stride
        return out

    def _same_layout(self, local: np.ndarray) -> "DTensor":
        """A DTensor laid out as this one (mesh, placements, global shape) holding ``local``,
        an array of this one's local shape (an optimiser's state of a DTensor parameter)."""
        return DTensor._wrap(local, self._mesh, self._placements, self._global_shape)

    # ------------------------------------------------------------------ layouts
    def to_local(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """This rank's piece, as a plain tensor sharing memory; differentiable. The gradient
        that reaches the piece is read as laid out by ``grad_placements`` (default: this
        tensor's placements) and moved to this tensor's layout."""
        if grad_placements is not None:
            grad_placements = normalize_placements(self._mesh, grad_placements, len(self._global_shape))
            if grad_placements == self._placements:
                grad_placements = None
        with dispatch_disabled():
            return _ToLocal.apply(self, grad_placements)

    def redistribute(
        self,
        device_mesh: DeviceMesh | None = None,
        placements: Sequence[Placement] | None = None,
        *,
        async_op: bool = False,
        forward_dtype: Any = None,
        backward_dtype: Any = None,
    ) -> "DTensor":
        """This tensor laid out by ``placements`` on the same mesh (a collective: every rank
        of the mesh calls it); differentiable, the gradient moves back the reverse way."""
        if device_mesh is not None and device_mesh != self._mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        dst = normalize_placements(self._mesh, placements, len(self._global_shape))
        for p in dst:
            if p.is_partial() and p not in self._placements:
                raise RuntimeError(
                    f"Can not redistribute from {self._placements} to {dst}, redistributing to Partial is for "
                    "internal use only!"
                )
        with dispatch_disabled():
            out = Redistribute.apply(self, self._mesh, self._placements, dst, self._global_shape)
        return DTensor._share(out, self._mesh, dst, self._global_shape)

    def _as_summand_of_self(self, other: Any) -> Any:
        """``other`` laid out as this tensor, to be added into it in place (PyTorch's strategy
        keeps the layout of the tensor written: a replicated operand becomes ``1/n`` summands
        of a ``Partial`` one; a shard cannot become a summand and raises PyTorch's error)."""
        if not isinstance(other, DTensor) or other._placements == self._placements:
            return other
        if other._global_shape != self._global_shape:
            return other  # broadcast: the pieces meet as they are
        for mine, theirs in zip(self._placements, other._placements):
            if mine.is_partial() and theirs.is_shard():
                raise RuntimeError(f"redistribute from {theirs} to {mine} not supported yet")
        with dispatch_disabled():
            out = Redistribute.apply(
                other, self._mesh, other._placements, self._placements, other._global_shape
            )
        return DTensor._share(out, self._mesh, self._placements, self._global_shape)

    def add_(self, other: Any, *args: Any, **kwargs: Any) -> "DTensor":
        return super().add_(self._as_summand_of_self(other), *args, **kwargs)

    def sub_(self, other: Any, *args: Any, **kwargs: Any) -> "DTensor":
        return super().sub_(self._as_summand_of_self(other), *args, **kwargs)

    subtract_ = sub_

    def __iadd__(self, other: Any) -> "DTensor":
        return self.add_(other)

    def __isub__(self, other: Any) -> "DTensor":
        return self.sub_(other)

    def full_tensor(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """The whole tensor on every rank (a collective); differentiable."""
        whole = self.redistribute(self._mesh, (Replicate(),) * self._mesh.ndim)
        return whole.to_local(grad_placements=grad_placements).reshape(self._global_shape)

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements: Sequence[Placement] | None = None,
        *,
        run_check: bool = False,
        shape: Sequence[int] | None = None,
        stride: Any = None,
        grad_placements: Any = None,
    ) -> "DTensor":
        """A DTensor whose piece on this rank is ``local_tensor`` (sharing memory);
        differentiable. Without ``shape`` the global shape assumes even shards (every
        ``Shard(d)`` multiplies dim ``d`` by its mesh dimension's size), as PyTorch does;
        pass ``shape`` and ``stride`` for uneven ones. ``run_check`` broadcasts the piece
        along the replicated mesh dimensions so that they agree."""
        if device_mesh is None:
            device_mesh = init_device_mesh("cpu", (groups.get_world_size(),))
        if (shape is None) != (stride is None):
            raise RuntimeError(
                f"Found shape:{shape}, stride:{stride}. Please pass both shape and stride at the same time."
            )
        ndim = local_tensor.dim()
        placements = normalize_placements(device_mesh, placements, ndim)
        if shape is None:
            shape = list(local_tensor._data.shape)
            for mesh_dim, p in enumerate(placements):
                if p.is_shard():
                    shape[p.dim] *= device_mesh.size(mesh_dim)
        if run_check:
            for mesh_dim, p in enumerate(placements):
                if p.is_replicate():
                    _broadcast_along(local_tensor._data, device_mesh, mesh_dim, 0)
        with dispatch_disabled():
            piece = _FromLocal.apply(local_tensor)
        out = DTensor._share(piece, device_mesh, placements, shape)
        if stride is not None:
            out._global_stride = tuple(int(s) for s in stride)
        return out

    def __repr__(self) -> str:
        return (
            f"DTensor(local_tensor={Tensor._make(self._data)!r}, device_mesh={self._mesh!r}, "
            f"placements={self._placements})"
        )


def _broadcast_along(array: np.ndarray, mesh: DeviceMesh, mesh_dim: int, index: int) -> None:
    """Overwrite ``array`` with that of the rank at ``index`` along ``mesh_dim`` (same
    coordinates elsewhere), in place."""
    if mesh.size(mesh_dim) == 1:
        return
    coordinate = list(mesh.get_coordinate())
    coordinate[mesh_dim] = index
    src = int(mesh._ranks[tuple(coordinate)])
    collectives.broadcast(array, src=src, group=mesh.get_group(mesh_dim))


def distribute_tensor(
    tensor: Tensor,
    device_mesh: DeviceMesh | None = None,
    placements: Sequence[Placement] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> DTensor:
    """Cut the whole ``tensor`` into this rank's piece laid out by ``placements``: the whole
    held by mesh index ``src_data_rank`` along every mesh dimension (broadcast first), or
    with ``None`` every rank's own (then it must be the same everywhere). ``device_mesh``
    defaults to a 1-D mesh over every rank. The result is a leaf that requires grad if
    ``tensor`` does."""
    if device_mesh is None:
        device_mesh = init_device_mesh("cpu", (groups.get_world_size(),))
    if isinstance(tensor, DTensor):
        raise ValueError(
            "distribute_tensor: the tensor is already a DTensor; use DTensor.redistribute to change its layout"
        )
    placements = normalize_placements(device_mesh, placements, tensor.dim())
    whole = np.array(tensor._data, copy=True)
    if src_data_rank is not None:
        for mesh_dim, p in enumerate(placements):  # PyTorch scatters the shards, broadcasts the rest
            with counted_as("c10d.scatter_" if p.is_shard() else "c10d.broadcast_"):
                _broadcast_along(whole, device_mesh, mesh_dim, src_data_rank)
    rows = whole.reshape(1) if whole.ndim == 0 else whole  # a 0-d tensor is cut as one row
    local = redistribute_local(rows, device_mesh, (Replicate(),) * device_mesh.ndim, placements, rows.shape)
    out = DTensor._wrap(np.array(local, copy=True), device_mesh, placements, whole.shape)
    out._global_stride = tuple(tensor.stride())
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out
