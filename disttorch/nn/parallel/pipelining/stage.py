"""``PipelineStage``: one piece of a model, on one rank, and the messages between pieces.

Stage ``i`` of ``n`` runs on rank ``i % ranks`` of its process group (one stage per rank,
or several for the interleaved schedule). For each microbatch:

* forward: stage 0 takes the schedule's input, any other stage receives the previous
  stage's activations (``dist.irecv`` through ``batch_isend_irecv``), runs its module, and
  sends its outputs to the next stage (``isend``; the last stage keeps them for the loss);
* backward: the last stage runs backward from the microbatch's loss, any other stage
  receives the gradients of its outputs from the next stage and runs backward from its
  outputs; every stage but the first sends the gradients of its inputs to the previous one.

Parameter gradients accumulate in ``.grad`` over the microbatches; the schedule then
divides them by the number of microbatches (``scale_grads``), so they equal the gradients
of the unpipelined model on the whole batch for a loss that averages over it.

Activations are tensors (or tuples of tensors). Their shapes and dtypes travel once, before
the first activation, as a small header message (as PyTorch's dynamic metadata inference);
``input_args`` may give them instead. A later microbatch of another shape is reported by
the receive (it names both sides). A peer that dies is reported by the process group.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import _dtype as dtypes
from ...._creation import empty, zeros
from ...._tensor import Tensor
from ....autograd import backward as autograd_backward
from ....distributed import P2POp, batch_isend_irecv, get_global_rank, get_rank, get_world_size, irecv, isend

__all__ = ["PipelineStage"]

# message tags: activations, gradients and the one-time shape header travel apart, each
# tagged with the receiving stage (two ranks may exchange messages for several stage pairs)
_FWD_TAG, _BWD_TAG, _META_TAG = 0x50000, 0x60000, 0x70000
_META_LEN = 64
_DTYPES = (
    dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16, dtypes.int64, dtypes.int32,
    dtypes.int16, dtypes.int8, dtypes.uint8, dtypes.bool, dtypes.complex64, dtypes.complex128,
)  # fmt: skip


def _as_tuple(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _metas(tensors: tuple) -> list[tuple[tuple, Any]]:
    metas = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"a pipeline stage passes on tensors only, got {type(t).__name__}")
        metas.append((tuple(t.shape), t.dtype))
    return metas


def _encode(metas: list[tuple[tuple, Any]]) -> Tensor:
    """The shape header: count, then (dtype code, ndim, *shape) per tensor."""
    words = [len(metas)]
    for shape, dtype in metas:
        words += [_DTYPES.index(dtype), len(shape), *shape]
    if len(words) > _META_LEN:
        raise ValueError(f"a pipeline stage's activations have too many tensors or dimensions: {metas}")
    header = zeros(_META_LEN, dtype=dtypes.int64)
    header._data[: len(words)] = words
    return header


def _decode(header: Tensor) -> list[tuple[tuple, Any]]:
    words = header._data.tolist()
    metas, at = [], 1
    for _ in range(words[0]):
        code, ndim = words[at], words[at + 1]
        metas.append((tuple(words[at + 2 : at + 2 + ndim]), _DTYPES[code]))
        at += 2 + ndim
    return metas


class PipelineStage:
    """One stage of a pipeline: ``submodule`` on this rank, stage ``stage_index`` of ``num_stages``.

    Args:
        submodule: the module this stage runs.
        stage_index: this stage's index (stage ``i`` runs on rank ``i % size`` of ``group``).
        num_stages: how many stages the pipeline has.
        device: the device of this stage (``cpu``).
        input_args: an example microbatch input of this stage (a tensor or tuple), giving
            the shapes of the activations it receives; inferred at the first step if omitted.
        output_args: accepted as in PyTorch (outputs are inferred).
        group: the process group of the pipeline (default: the default group).
        dw_builder: not supported (zero-bubble schedules); must be ``None``.
    """

    def __init__(
        self,
        submodule: Any,
        stage_index: int,
        num_stages: int,
        device: Any,
        input_args: Tensor | tuple[Tensor, ...] | None = None,
        output_args: Tensor | tuple[Tensor, ...] | None = None,
        group: Any = None,
        dw_builder: Any = None,
    ) -> None:
        if stage_index >= num_stages:
            raise ValueError(f"Stage index {stage_index} is out of range of {num_stages}")
        if dw_builder is not None:
            raise NotImplementedError("PipelineStage: dw_builder (zero-bubble schedules) is not supported")
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.device = device
        self.group = group
        self.group_rank = get_rank(group)
        self.group_size = get_world_size(group)
        if self.group_size > num_stages:
            raise RuntimeError(
                f"Pipeline group size {self.group_size} cannot be larger than number of stages {num_stages}"
            )
        if num_stages % self.group_size != 0 or self.group_rank != stage_index % self.group_size:
            raise RuntimeError(
                f"PipelineStage: stage {stage_index} of {num_stages} runs on group rank "
                f"{stage_index} % {self.group_size} (the stages are dealt round the ranks, the "
                f"same number to each), not on group rank {self.group_rank}"
            )
        self._in_metas = _metas(_as_tuple(input_args)) if input_args is not None and stage_index > 0 else None
        self._sent_metas = False
        self.has_backward = False
        self.clear_runtime_states()

    @property
    def is_first(self) -> bool:
        return self.stage_index == 0

    @property
    def is_last(self) -> bool:
        return self.stage_index == self.num_stages - 1

    def clear_runtime_states(self) -> None:
        """Forget the previous step's microbatches (the schedule calls it at each step)."""
        self.fwd_cache: dict[int, tuple[tuple, tuple]] = {}
        self.output_chunks: list = []
        self._sends: list = []

    def _rank_of(self, stage: int) -> int:
        group_rank = stage % self.group_size
        return group_rank if self.group is None else get_global_rank(self.group, group_rank)

    def _receive(self, shapes: list[tuple[tuple, Any]], stage: int, tag: int) -> list[Tensor]:
        bufs = [empty(shape, dtype=dtype) for shape, dtype in shapes]
        ops = [P2POp(irecv, b, self._rank_of(stage), self.group, tag + self.stage_index) for b in bufs]
        for work in batch_isend_irecv(ops):
            work.wait()
        return bufs

    def _send(self, tensors: list[Tensor], stage: int, tag: int) -> None:
        ops = [P2POp(isend, t, self._rank_of(stage), self.group, tag + stage) for t in tensors]
        self._sends += batch_isend_irecv(ops)

    def wait_sends(self) -> None:
        """Wait until every message this step sent has left."""
        for work in self._sends:
            work.wait()
        self._sends = []

    # ------------------------------------------------------------------ one microbatch
    def forward_one_chunk(self, mb: int, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Forward of microbatch ``mb``: receive (or take ``args``), run, send on."""
        if self.is_first:
            inputs = tuple(args)
        else:
            if self._in_metas is None:
                (header,) = self._receive([((_META_LEN,), dtypes.int64)], self.stage_index - 1, _META_TAG)
                self._in_metas = _decode(header)
            inputs = tuple(self._receive(self._in_metas, self.stage_index - 1, _FWD_TAG))
            if self.has_backward:
                for t in inputs:
                    if t.is_floating_point():
                        t.requires_grad_(True)
        out = self.submod(*inputs, **((kwargs or {}) if self.is_first else {}))
        outputs = _as_tuple(out)
        if self.has_backward:
            self.fwd_cache[mb] = (inputs, outputs)
        if self.is_last:
            self.output_chunks.append(out)
        else:
            if not self._sent_metas:
                self._send([_encode(_metas(outputs))], self.stage_index + 1, _META_TAG)
                self._sent_metas = True
            self._send([o.detach() for o in outputs], self.stage_index + 1, _FWD_TAG)
        return out

    def backward_one_chunk(self, mb: int, loss: Tensor | None = None) -> None:
        """Backward of microbatch ``mb``: from its loss (last stage) or from the gradients of
        its outputs (received from the next stage); then send the inputs' gradients back."""
        inputs, outputs = self.fwd_cache.pop(mb)
        if self.is_last:
            if loss is None:
                raise RuntimeError("the last pipeline stage needs a loss_fn to run backward")
            autograd_backward([loss])
        else:
            grads = self._receive(_metas(outputs), self.stage_index + 1, _BWD_TAG)
            pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
            if pairs:
                autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        if not self.is_first:
            input_grads = [t.grad if t.grad is not None else zeros(t.shape, dtype=t.dtype) for t in inputs]
            self._send(input_grads, self.stage_index - 1, _BWD_TAG)

    def scale_grads(self, divisor: int) -> None:
        """Divide the parameters' gradients by ``divisor`` (the number of microbatches)."""
        for p in self.submod.parameters():
            if p.grad is not None:
                np.divide(p.grad._data, divisor, out=p.grad._data, casting="unsafe")
                p.grad._bump_version()
