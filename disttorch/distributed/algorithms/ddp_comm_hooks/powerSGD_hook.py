"""``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook``: PowerSGD gradient
compression (low-rank approximations of each gradient matrix, with error feedback), as
PyTorch's hooks compute it.

For the first ``start_powerSGD_iter`` iterations the hooks run the plain averaging
all-reduce. From then on ``powerSGD_hook``, for each bucket:

1. adds the bucket's error of the previous iteration (``use_error_feedback``);
2. views every gradient as a matrix ``n x m`` (its first dimension by the rest) and compresses
   those where ``(n + m) * rank * min_compression_rate < n * m``; the others (biases, small
   matrices) are all-reduced as one flat buffer and averaged;
3. for each compressed matrix ``M``: ``P = M Q`` (``Q``: random normal numbers from
   ``random_seed`` the first time, the previous iteration's ``Q`` with ``warm_start``, made
   orthonormal), all-reduces the ``P``s, orthonormalises them, ``Q = M^T P``, all-reduces
   and averages the ``Q``s and writes ``P Q^T`` over the gradient;
4. keeps the difference between the local gradients it started from and what it wrote as the
   next iteration's error.

The three all-reduces run one after another in the calling thread (no overlap with the rest
of backward); the results are PyTorch's up to the rounding of the matrix products.

``batched_powerSGD_hook`` (one square matrix per bucket) fails in PyTorch 2.13 at its first
compressed iteration (its orthogonalisation gets a 2-D matrix where it expects a batch of
them): disttorch raises the same ``AssertionError`` there.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import numpy as np

from ...._tensor import Tensor
from ....futures import Future

__all__ = ["PowerSGDState", "batched_powerSGD_hook", "powerSGD_hook"]

logger = logging.getLogger(__name__)


class PowerSGDState:
    """``PowerSGDState(process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
    min_compression_rate=2, use_error_feedback=True, warm_start=True,
    orthogonalization_epsilon=0, random_seed=0, compression_stats_logging_frequency=10_000,
    batch_tensors_with_same_shape=False)``: PowerSGD's settings and, per bucket index, its
    error feedback (``error_dict``) and low-rank factors (``p_memory_dict``,
    ``q_memory_dict``). ``rng`` is ``numpy.random.RandomState(random_seed)``: it seeds the
    random initial ``Q``s."""

    __slots__ = [
        "process_group",
        "matrix_approximation_rank",
        "start_powerSGD_iter",
        "min_compression_rate",
        "orthogonalization_epsilon",
        "use_error_feedback",
        "warm_start",
        "batch_tensors_with_same_shape",
        "rng",
        "error_dict",
        "p_memory_dict",
        "q_memory_dict",
        "iter",
        "total_numel_before_compression",
        "total_numel_after_compression",
        "compression_stats_logging_frequency",
        "next_stats_report",
    ]

    def __init__(
        self,
        process_group: Any,
        matrix_approximation_rank: int = 1,
        start_powerSGD_iter: int = 1_000,  # noqa: N803 (PyTorch's name)
        min_compression_rate: float = 2,
        use_error_feedback: bool = True,
        warm_start: bool = True,
        orthogonalization_epsilon: float = 0,
        random_seed: int = 0,
        compression_stats_logging_frequency: int = 10_000,
        batch_tensors_with_same_shape: bool = False,
    ) -> None:
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError(
                "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                "because PowerSGD can only be applied after the first two iterations in DDP."
            )
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict: dict[int, Tensor] = {}
        self.p_memory_dict: dict[int, Tensor] = {}
        self.q_memory_dict: dict[int, Tensor] = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the process group (which cannot be pickled)."""
        logger.warning("NOTE: Process group is not serializable and excluded from a saved state.")
        return {slot: getattr(self, slot) for slot in self.__slots__ if slot != "process_group"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled state; its process group becomes the default group."""
        from ...groups import resolve_group

        self.process_group = resolve_group(None)
        logger.warning(
            "NOTE: Process group will be set to a default group (i.e. the world size). If a different "
            "group is desired, please set `self.process_group` after PowerSGD state is loaded."
        )
        for slot, value in state.items():
            setattr(self, slot, value)

    def maybe_increase_iter(self, bucket: Any) -> None:
        """Count an iteration when its last bucket is reduced."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self) -> tuple[float, int, int]:
        """``(compression rate, elements before compression, elements after)`` so far."""
        before, after = self.total_numel_before_compression, self.total_numel_after_compression
        return (before / after if after > 0 else 0, before, after)


def _orthogonalize(matrices: np.ndarray, epsilon: float = 0) -> None:
    """Make the columns of each matrix of the batch ``matrices`` (``b x n x r``, ``r <= n``)
    orthonormal, in place: Gram-Schmidt for ``r <= 2`` or half precision, else QR."""
    if not (matrices.ndim == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError(
            f"PowerSGD orthogonalizes a batch of matrices (b x n x r with r <= n), got shape {matrices.shape}"
        )
    if matrices.shape[2] <= 2 or matrices.dtype == np.float16:
        _orthogonalize_gram_schmidt(matrices, epsilon)
    else:
        matrices[...] = np.linalg.qr(matrices)[0]


def _orthogonalize_gram_schmidt(matrices: np.ndarray, epsilon: float) -> None:
    """Gram-Schmidt on each matrix's columns, in place; ``epsilon`` is added to each norm (an
    all-zero column gives NaNs without it, as in PyTorch)."""
    num_cols = matrices.shape[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(num_cols):
            col = matrices[:, :, i : i + 1]
            norm = np.sqrt(np.sum(col * col, axis=1, keepdims=True, dtype=matrices.dtype))
            col /= norm + np.asarray(epsilon, matrices.dtype) if epsilon else norm
            if i + 1 < num_cols:
                rest = matrices[:, :, i + 1 :]
                rest -= np.sum(col * rest, axis=1, keepdims=True) * col


def _should_compress(n: int, m: int, rank: int, min_compression_rate: float) -> tuple[bool, int, int]:
    """``(worth compressing, n * m, (n + m) * rank)`` for an ``n x m`` gradient matrix."""
    uncompressed, compressed = n * m, (n + m) * rank
    return compressed * min_compression_rate < uncompressed, uncompressed, compressed


def _report_compression_stats(bucket: Any, state: PowerSGDState) -> None:
    if bucket.is_last() and state.iter >= state.next_stats_report:
        rate, before, after = state.compression_stats()
        logger.info(
            "Compression stats: iter %s, total before compression %s, total after compression %s, rate %s",
            state.iter,
            before,
            after,
            rate,
        )
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


def _group_and_size(state: PowerSGDState) -> tuple[Any, int]:
    from ... import get_world_size
    from ...groups import resolve_group

    group = resolve_group(state.process_group)
    return group, get_world_size(group)


def _all_reduce_sum(values: np.ndarray, group: Any) -> None:
    """Sum ``values`` over the group's ranks, in place."""
    from ... import all_reduce

    all_reduce(Tensor._make(values), group=group)


def _random_normal(
    shapes: list[tuple[int, ...]], dtype: np.dtype, rng: np.random.RandomState
) -> list[np.ndarray]:
    """Standard normal numbers of each shape, drawn (as PyTorch's CPU ``randn``) after seeding
    the global generator with ``rng``'s next integer; the global generator's state is kept."""
    from .... import random
    from ...._dtype import from_numpy
    from ...._random import randn

    with random.fork_rng(devices=[]):
        random.manual_seed(int(rng.randint(1_000_000_000)))
        return [randn(*shape, dtype=from_numpy(dtype))._data for shape in shapes]


def _done(value: Tensor) -> Future:
    fut: Future = Future()
    fut.set_result(value)
    return fut


def _warm_up(state: PowerSGDState, bucket: Any) -> Future | None:
    """The plain averaging all-reduce while ``state.iter < start_powerSGD_iter``, else ``None``."""
    if state.iter >= state.start_powerSGD_iter:
        return None
    from . import default_hooks

    state.maybe_increase_iter(bucket)
    return default_hooks.allreduce_hook(state.process_group, bucket)


def _add_error_feedback(state: PowerSGDState, index: int, flat: np.ndarray) -> np.ndarray | None:
    """Add the bucket's last error to ``flat`` (its first use: start from zero); return a copy
    of the corrected gradients, or ``None`` without error feedback."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        flat += state.error_dict[index]._data
    else:
        logger.info("A zero tensor of length %s that represents local error is created.", flat.size)
        state.error_dict[index] = Tensor._make(np.zeros(flat.size, flat.dtype))
    return flat.copy()


def powerSGD_hook(state: PowerSGDState, bucket: Any) -> Future:  # noqa: N802 (PyTorch's name)
    """Average the bucket's gradients with PowerSGD compression once ``state.iter`` has reached
    ``state.start_powerSGD_iter`` (plainly before); see the module's description."""
    warm = _warm_up(state, bucket)
    if warm is not None:
        return warm
    group, world_size = _group_and_size(state)
    input_tensor = bucket.buffer()
    flat = input_tensor._data
    dtype, index = flat.dtype, bucket.index()
    local = _add_error_feedback(state, index, flat)

    to_compress, uncompressed = [], []
    total_p = total_q = 0
    for grad in bucket.gradients():
        matrix = grad._data.reshape(grad._data.shape[0], -1)
        n, m = matrix.shape
        rank = min(n, m, state.matrix_approximation_rank)
        worth, before, after = _should_compress(n, m, rank, state.min_compression_rate)
        state.total_numel_before_compression += before
        if worth:
            to_compress.append(matrix)
            total_p, total_q = total_p + n * rank, total_q + m * rank
            state.total_numel_after_compression += after
        else:
            uncompressed.append(grad._data)
            state.total_numel_after_compression += before
    _report_compression_stats(bucket, state)

    need_random_qs = not state.warm_start or index not in state.p_memory_dict
    if need_random_qs:
        if state.warm_start:
            logger.info(
                "Allocating contiguous memory of length %s for Ps, and of length %s for Qs, respectively.",
                total_p,
                total_q,
            )
        state.p_memory_dict[index] = Tensor._make(np.empty(total_p, dtype))
        state.q_memory_dict[index] = Tensor._make(np.empty(total_q, dtype))
    p_memory, q_memory = state.p_memory_dict[index]._data, state.q_memory_dict[index]._data

    by_shape: dict[tuple[int, int], list[np.ndarray]] = defaultdict(list)
    for matrix in to_compress:
        by_shape[matrix.shape].append(matrix)
    batches = [
        np.stack(group_) if state.batch_tensors_with_same_shape and len(group_) > 1 else m[None]
        for group_ in by_shape.values()
        for m in (group_[:1] if state.batch_tensors_with_same_shape else group_)
    ]
    ps, qs, p_at, q_at = [], [], 0, 0
    for batch in batches:
        b, n, m = batch.shape
        rank = min(n, m, state.matrix_approximation_rank)
        ps.append(p_memory[p_at : p_at + b * n * rank].reshape(b, n, rank))
        qs.append(q_memory[q_at : q_at + b * m * rank].reshape(b, m, rank))
        p_at, q_at = p_at + b * n * rank, q_at + b * m * rank
    if need_random_qs:
        for q, values in zip(qs, _random_normal([q.shape for q in qs], dtype, state.rng)):
            q[...] = values
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for batch, q, p in zip(batches, qs, ps):
        np.matmul(batch, q, out=p)

    flat_uncompressed = (
        np.concatenate([g.reshape(-1) for g in uncompressed]) if uncompressed else np.empty(0, dtype)
    )
    _all_reduce_sum(flat_uncompressed, group)
    flat_uncompressed /= np.asarray(world_size, dtype)
    at = 0
    for grad in uncompressed:
        grad[...] = flat_uncompressed[at : at + grad.size].reshape(grad.shape)
        at += grad.size

    _all_reduce_sum(p_memory, group)
    for p in ps:
        _orthogonalize(p, state.orthogonalization_epsilon)
    for batch, p, q in zip(batches, ps, qs):
        np.matmul(batch.transpose(0, 2, 1), p, out=q)
    _all_reduce_sum(q_memory, group)
    q_memory /= np.asarray(world_size, dtype)

    for p, q, batch in zip(ps, qs, batches):
        approximation = p @ q.transpose(0, 2, 1)
        if batch.shape[0] == 1:  # a view of the gradient
            batch[...] = approximation
        else:  # a stack of same-shaped gradients: write each back
            for matrix, values in zip(by_shape[batch.shape[1:]], approximation):
                matrix[...] = values
    if local is not None:
        state.error_dict[index] = Tensor._make(local - flat)
    if not state.warm_start:
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
    state.maybe_increase_iter(bucket)
    return _done(input_tensor)


def batched_powerSGD_hook(state: PowerSGDState, bucket: Any) -> Future:  # noqa: N802 (PyTorch's name)
    """The plain averaging all-reduce for the first ``state.start_powerSGD_iter`` iterations;
    then, as PyTorch 2.13's, ``AssertionError`` (it orthogonalises a 2-D matrix)."""
    warm = _warm_up(state, bucket)
    if warm is not None:
        return warm
    raise AssertionError(
        "batched_powerSGD_hook: PowerSGD orthogonalizes a batch of matrices (3-D), but this hook "
        "passes it the bucket's 2-D square matrix (PyTorch 2.13 fails here too); use powerSGD_hook"
    )
