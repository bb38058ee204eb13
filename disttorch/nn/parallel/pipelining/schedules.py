"""Pipeline schedules: in which order a rank runs the forwards and backwards of the
microbatches of one step.

* ``ScheduleGPipe``: every forward, then every backward (fill, drain). Simple; holds the
  activations of all the microbatches at once.
* ``Schedule1F1B``: stage ``s`` of ``n`` first runs ``n - s`` forwards, then alternates one
  backward and one forward, then the remaining backwards: at most ``n - s`` microbatches'
  activations are held, and the pipeline is as full as GPipe's.
* ``ScheduleInterleaved1F1B``: ``v`` stages per rank (stage ``k`` on rank ``k % ranks``),
  the microbatches in rounds of ``ranks``: forwards cycle through the rank's stages round by
  round, backwards through them in reverse, one forward and one backward in the steady
  state after a warmup of ``(v - 1) * round + 2 * (ranks - 1 - rank)`` forwards. The
  bubble shrinks by ``v``.

``step(x)`` on the rank of the first stage, ``step(target=y, losses=losses)`` on the rank of
the last, ``step()`` elsewhere: the batch is split into ``n_microbatches``, the last stage
computes ``loss_fn(output, target)`` per microbatch (put into ``losses``) and returns the
outputs merged into one batch. With ``scale_grads`` (the default) the accumulated
gradients are divided by the number of microbatches at the end of the step. Sends never
wait; a receive waits right before the action that needs it, and every rank's order is a
slice of one timeline in which each message is sent before it is awaited, so the ranks
never wait on each other in a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....autograd import grad_mode
from .microbatch import merge_chunks, split_args_kwargs_into_chunks
from .stage import PipelineStage

__all__ = [
    "PipelineScheduleMulti",
    "PipelineScheduleSingle",
    "Schedule1F1B",
    "ScheduleGPipe",
    "ScheduleInterleaved1F1B",
]

#: one action of a rank: (position of the stage in the rank's list, "F" or "B", microbatch)
Action = tuple[int, str, int]


class _Schedule:
    """What every schedule shares: splitting, running the actions of :meth:`_order`,
    losses, scaling, merging."""

    def __init__(
        self,
        stages: list[PipelineStage],
        n_microbatches: int,
        loss_fn: Callable[..., Any] | None,
        args_chunk_spec: Any,
        kwargs_chunk_spec: Any,
        output_merge_spec: Any,
        scale_grads: bool,
    ) -> None:
        if args_chunk_spec is not None or kwargs_chunk_spec is not None or output_merge_spec is not None:
            raise NotImplementedError(
                "pipeline schedules: only the default chunk and merge specs are supported"
            )
        self._stages = stages
        self._num_stages = stages[0].num_stages
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self._has_backward = loss_fn is not None
        self.scale_grads = scale_grads
        self._internal_losses: list = []

    def step(
        self,
        *args: Any,
        target: Any = None,
        losses: list | None = None,
        return_outputs: bool = True,
        **kwargs: Any,
    ) -> Any:
        """One step over the whole batch (see the module's header); the rank of the last
        stage returns the merged outputs, the others ``None``."""
        if self._has_backward and not grad_mode.is_grad_enabled():
            raise RuntimeError(
                "step() requires gradients to be enabled for backward computation; "
                "it should not be used under torch.no_grad() context. "
                "Please call eval() instead."
            )
        if losses is not None and not isinstance(losses, list):
            raise TypeError(f"losses must be a list but got a {type(losses)}")
        n = self._n_microbatches
        for stage in self._stages:
            stage.has_backward = self._has_backward
            stage.clear_runtime_states()
        if args or kwargs:
            arg_mbs, kwarg_mbs = split_args_kwargs_into_chunks(args, kwargs, n)
        else:
            arg_mbs, kwarg_mbs = [()] * n, [{}] * n
        targets = split_args_kwargs_into_chunks((target,), None, n)[0] if target is not None else None
        self._internal_losses = []
        try:
            for position, action, mb in self._order():
                stage = self._stages[position]
                if action == "F":
                    output = stage.forward_one_chunk(mb, arg_mbs[mb], kwarg_mbs[mb])
                    if stage.is_last and self._has_backward:
                        if targets is None:
                            raise RuntimeError(
                                "the last pipeline stage needs step(target=...) to compute the loss"
                            )
                        self._internal_losses.append(self._loss_fn(output, targets[mb][0]))
                else:
                    stage.backward_one_chunk(mb, self._internal_losses[mb] if stage.is_last else None)
            for stage in self._stages:
                stage.wait_sends()
        except BaseException:
            for stage in self._stages:
                stage.clear_runtime_states()  # a failed step leaves no microbatch behind
            raise
        last = next((s for s in self._stages if s.is_last), None)
        if self._has_backward and self.scale_grads:
            for stage in self._stages:
                stage.scale_grads(n)
        if last is not None and losses is not None:
            losses[:] = self._internal_losses
        if last is not None and return_outputs:
            return merge_chunks(last.output_chunks)
        return None

    def eval(self, *args: Any, target: Any = None, losses: list | None = None, **kwargs: Any) -> Any:
        """A forward-only step (no backward, gradients untouched)."""
        has_backward, self._has_backward = self._has_backward, False
        try:
            return self.step(*args, target=target, losses=losses, **kwargs)
        finally:
            self._has_backward = has_backward

    def _order(self) -> list[Action]:
        """This rank's actions in the order to run them."""
        raise NotImplementedError


class PipelineScheduleSingle(_Schedule):
    """A schedule of one stage per rank (the base of :class:`ScheduleGPipe` and
    :class:`Schedule1F1B`).

    Args:
        stage: this rank's :class:`PipelineStage`.
        n_microbatches: how many microbatches a step splits the batch into.
        loss_fn: ``loss_fn(output, target)`` on the last stage; without it a step runs
            forward only.
        args_chunk_spec, kwargs_chunk_spec: only the default (split along dimension 0).
        output_merge_spec: only the default (concatenate along dimension 0).
        scale_grads: divide the gradients by ``n_microbatches`` at the end of the step.
    """

    def __init__(
        self,
        stage: PipelineStage,
        n_microbatches: int,
        loss_fn: Callable[..., Any] | None = None,
        args_chunk_spec: Any = None,
        kwargs_chunk_spec: Any = None,
        output_merge_spec: Any = None,
        scale_grads: bool = True,
    ) -> None:
        super().__init__(
            [stage],
            n_microbatches,
            loss_fn,
            args_chunk_spec,
            kwargs_chunk_spec,
            output_merge_spec,
            scale_grads,
        )
        self._stage = stage


class ScheduleGPipe(PipelineScheduleSingle):
    """Every microbatch's forward, then every backward."""

    def _order(self) -> list[Action]:
        mbs = range(self._n_microbatches)
        return [(0, "F", i) for i in mbs] + ([(0, "B", i) for i in mbs] if self._has_backward else [])


class Schedule1F1B(PipelineScheduleSingle):
    """One forward, one backward in the steady state (see the module's header)."""

    def __init__(self, stage: PipelineStage, n_microbatches: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(stage, n_microbatches, *args, **kwargs)
        if n_microbatches < self._num_stages:
            raise ValueError(
                f"Number of microbatches ({n_microbatches}) must be greater than "
                f"or equal to the number of stages ({self._num_stages})."
            )

    def _order(self) -> list[Action]:
        n = self._n_microbatches
        if not self._has_backward:
            return [(0, "F", i) for i in range(n)]
        warmup = min(n, self._num_stages - self._stage.stage_index)
        order = [(0, "F", i) for i in range(warmup)]
        for b in range(n):
            order.append((0, "B", b))
            if warmup + b < n:
                order.append((0, "F", warmup + b))
        return order


class PipelineScheduleMulti(_Schedule):
    """A schedule of several stages per rank (the base of :class:`ScheduleInterleaved1F1B`).

    Args:
        stages: this rank's stages (stage ``k`` runs on rank ``k % ranks``), in index order.
        n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
        scale_grads: as for :class:`PipelineScheduleSingle`.
    """

    def __init__(
        self,
        stages: list[PipelineStage],
        n_microbatches: int,
        loss_fn: Callable[..., Any] | None = None,
        args_chunk_spec: Any = None,
        kwargs_chunk_spec: Any = None,
        output_merge_spec: Any = None,
        scale_grads: bool = True,
    ) -> None:
        if not stages:
            raise ValueError("a pipeline schedule needs at least one stage")
        stages = sorted(stages, key=lambda s: s.stage_index)
        super().__init__(
            stages,
            n_microbatches,
            loss_fn,
            args_chunk_spec,
            kwargs_chunk_spec,
            output_merge_spec,
            scale_grads,
        )


class ScheduleInterleaved1F1B(PipelineScheduleMulti):
    """Interleaved 1F1B over ``v`` stages per rank (see the module's header)."""

    def __init__(self, stages: list[PipelineStage], n_microbatches: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(stages, n_microbatches, *args, **kwargs)
        ranks = self._stages[0].group_size
        self._rounds = max(1, n_microbatches // ranks)
        self._per_round = n_microbatches // self._rounds
        if n_microbatches % self._rounds != 0:
            raise ValueError(
                "Interleaved 1F1B requires the number of microbatches to be a "
                f"multiple of the number of rounds ({self._rounds}), "
                f"but got {n_microbatches}."
            )

    def _order(self) -> list[Action]:
        v, n, per_round = len(self._stages), self._n_microbatches, self._per_round
        ranks, rank = self._stages[0].group_size, self._stages[0].group_rank
        total = v * n
        warmup = min((v - 1) * per_round + 2 * (ranks - 1 - rank), total) if self._has_backward else total
        next_mb = {"F": [0] * v, "B": [0] * v}

        def take(kind: str, position: int) -> Action:
            mb = next_mb[kind][position]
            next_mb[kind][position] += 1
            return (position, kind, mb)

        order = []
        for op in range(total + warmup if self._has_backward else total):
            if op < total:  # the op-th forward: stages in turn, a round of microbatches each
                order.append(take("F", (op // per_round) % v))
            if op >= warmup:  # the (op - warmup)-th backward: stages in reverse
                order.append(take("B", v - 1 - ((op - warmup) // per_round) % v))
        return order
