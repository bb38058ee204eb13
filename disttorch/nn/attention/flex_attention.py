"""``torch.nn.attention.flex_attention``: attention whose scores a user function modifies.

``flex_attention(q, k, v, score_mod, block_mask)`` computes ``softmax(mod(q @ k^T * scale)) @ v``
where ``score_mod(score, b, h, q_idx, kv_idx)`` rewrites each score and the block mask's
``mask_mod(b, h, q_idx, kv_idx)`` says which scores take part. PyTorch calls the two functions
on scalars under ``vmap``; here they are called once on index tensors that broadcast against
each other (``b`` of shape ``(B, 1, 1, 1)``, ``h`` ``(1, H, 1, 1)``, ``q_idx`` ``(1, 1, L, 1)``,
``kv_idx`` ``(1, 1, 1, S)``), which gives the same values for every function made of
elementwise ops and indexing. Everything is built from differentiable tensor ops, so
gradients reach ``q``, ``k``, ``v`` and whatever tensors ``score_mod`` uses (PyTorch's CPU
build refuses backward through ``flex_attention``). As PyTorch's eager CPU implementation,
the result applies ``mask_mod`` to every score (the block structure is metadata that fused GPU
kernels use to skip blocks); rows where every score is masked give zeros.

``create_block_mask`` evaluates ``mask_mod`` and records, per ``BLOCK_SIZE`` tile, which tiles
have some (partial) or all (full) scores kept, in PyTorch's layout (:class:`BlockMask`).
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypedDict

from ... import _creation, _dtype, accelerator
from ..._tensor import Tensor
from ..functional import pad

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "FlexKernelOptions",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]


class FlexKernelOptions(TypedDict, total=False):
    """Options of PyTorch's generated kernels; accepted, and without effect here."""


class AuxRequest(NamedTuple):
    """Which extra outputs ``flex_attention(..., return_aux=AuxRequest(...))`` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The extra outputs: per query row, the log-sum-exp and the maximum of the modified scores."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask that keeps every score."""
    return batch.new_ones((), dtype=_dtype.bool)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask: the slice's indices no longer match the "
        "original mask_mod's; create a new BlockMask for the slice"
    )


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask keeping a score when any of ``mask_mods`` keeps it."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=_dtype.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask keeping a score when all of ``mask_mods`` keep it."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=_dtype.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _indices(B: int, H: int, L: int, S: int, device: Any = None) -> tuple[Tensor, ...]:
    """``b, h, q_idx, kv_idx`` as int64 index tensors that broadcast to ``(B, H, L, S)``."""
    return tuple(
        _creation.arange(n, device=device).view(*[n if i == axis else 1 for i in range(4)])
        for axis, n in enumerate((B, H, L, S))
    )


def create_mask(
    mod_fn: Callable, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int, device: Any = None
) -> Tensor:
    """The dense ``(B, H, Q_LEN, KV_LEN)`` boolean mask of a ``mask_mod`` (four arguments) or of
    a ``score_mod`` (five: False where it gives ``-inf`` for a zero score)."""
    device = device if device is not None else (accelerator.current_accelerator() or "cpu")
    B, H = B or 1, H or 1
    idx = _indices(B, H, Q_LEN, KV_LEN, device)
    if _arity(mod_fn) == 5:
        out = mod_fn(_creation.zeros(B, H, Q_LEN, KV_LEN, device=device), *idx)
        return ~out.isneginf().expand(B, H, Q_LEN, KV_LEN)
    return _as_mask(mod_fn(*idx), (B, H, Q_LEN, KV_LEN))


def _arity(fn: Callable) -> int:
    """How many positional arguments ``fn`` takes (5: a score_mod, 4: a mask_mod)."""
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(params)


def _as_mask(value: Any, shape: tuple[int, ...]) -> Tensor:
    """What a mask_mod returned, as a boolean tensor of ``shape``."""
    if not isinstance(value, Tensor):
        value = _creation.tensor(bool(value))
    return value.to(_dtype.bool).expand(*shape)


def _round_up(x: int, multiple: int) -> int:
    return (x + multiple - 1) // multiple * multiple


def _dense_to_ordered(dense: Tensor) -> tuple[Tensor, Tensor]:
    """Per row of tiles: how many are kept, and their column indices first (kept ones in order)."""
    dense = dense.to(_dtype.int32)
    order = dense.argsort(dim=-1, descending=True, stable=True)
    return dense.sum(dim=-1).to(_dtype.int32), order.to(_dtype.int32)


def _ordered_to_dense(num_blocks: Tensor, indices: Tensor, num_cols: int) -> Tensor:
    """The 0/1 tile matrix (int32) that ``(num_blocks, indices)`` describes."""
    entries = _creation.arange(indices.shape[-1])
    # indices past each row's count go to a spare column, dropped at the end
    cols = indices.long().masked_fill(entries >= num_blocks.unsqueeze(-1), num_cols)
    dense = _creation.zeros(*indices.shape[:-1], num_cols + 1, dtype=_dtype.int32)
    dense.scatter_(-1, cols, 1)
    return dense[..., :num_cols].contiguous()


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    return _dense_to_ordered(_ordered_to_dense(num_blocks, indices, indices.shape[-1]).transpose(-2, -1))


class BlockMask:
    """Which ``BLOCK_SIZE`` tiles of the score matrix attention computes, in PyTorch's layout:
    ``kv_num_blocks``/``kv_indices`` (per row of tiles, the partial tiles' columns),
    ``full_kv_num_blocks``/``full_kv_indices`` (the tiles kept whole), their transposes
    ``q_*`` and the ``mask_mod`` that decides within tiles."""

    def __init__(
        self,
        seq_lengths: tuple[int, int],
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None,
        full_kv_indices: Tensor | None,
        q_num_blocks: Tensor | None,
        q_indices: Tensor | None,
        full_q_num_blocks: Tensor | None,
        full_q_indices: Tensor | None,
        BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
        mask_mod: _mask_mod_signature = noop_mask,
    ) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None = None,
        full_kv_indices: Tensor | None = None,
        BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod: _mask_mod_signature | None = None,
        seq_lengths: tuple[int, int] | None = None,
        compute_q_blocks: bool = True,
    ) -> BlockMask:
        """A BlockMask from its kv tiles; the q tiles are their transposes."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q = _transpose_ordered(kv_num_blocks, kv_indices) if compute_q_blocks else (None, None)
        full_q = (
            _transpose_ordered(full_kv_num_blocks, full_kv_indices)
            if compute_q_blocks and full_kv_num_blocks is not None
            else (None, None)
        )
        block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * block[0], kv_indices.shape[-1] * block[1])
        return cls(
            seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, *q, *full_q,
            BLOCK_SIZE=block, mask_mod=mask_mod if mask_mod is not None else noop_mask,
        )  # fmt: skip

    _TENSOR_ATTRS = (
        "kv_num_blocks",
        "kv_indices",
        "full_kv_num_blocks",
        "full_kv_indices",
        "q_num_blocks",
        "q_indices",
        "full_q_num_blocks",
        "full_q_indices",
    )

    def as_tuple(self, flatten: bool = True) -> tuple:
        """``(*seq_lengths, the tile tensors..., *BLOCK_SIZE, mask_mod)`` (``flatten=False``
        keeps the two pairs as tuples)."""
        seq, block = (
            (self.seq_lengths, self.BLOCK_SIZE) if flatten else ((self.seq_lengths,), (self.BLOCK_SIZE,))
        )
        return (*seq, *(getattr(self, a) for a in self._TENSOR_ATTRS), *block, self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(*batch dims, Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self) -> int:
        """The number of scores the mask covers (sparsity not counted)."""
        return math.prod(self.shape)

    def sparsity(self) -> float:
        """The percentage of the score matrix in tiles that are not computed (PyTorch's
        formula: whole tiles count, so padding can make it negative)."""
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self) -> Tensor:
        """The int32 tile matrix ``(*batch dims, Q tiles, KV tiles)``: 1 where a tile is computed."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(
                self.full_kv_num_blocks, self.full_kv_indices, self.full_kv_indices.shape[-1]
            )
        return dense

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """The tiles drawn per batch and head: ``█`` computed, ``░`` partly, blank not."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if grid_size == -1:
            max_rows, max_cols = rows, cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step, col_step = max(1, -(-rows // max_rows)), max(1, -(-cols // max_cols))
        drawings = []
        for n, index in enumerate(itertools.product(*[range(d) for d in batch_dims])):
            if n == limit:
                drawings += [
                    "...",
                    "To print out more, set BlockMask.to_string(limit=N)",
                    "You can also index (BlockMask[batch, head]) to choose a specific batch or head",
                ]
                break
            tiles = dense[index] if index else dense
            lines = [f"{index}"]
            for r in range(0, rows, row_step):
                line = ""
                for c in range(0, cols, col_step):
                    share = tiles[r : r + row_step, c : c + col_step].float().mean().item()
                    line += ("█" if share == 1 else " " if share == 0 else "░") * 2
                lines.append(line)
            drawings.append("\n".join(lines) + "\n")
        return "\n".join(drawings)

    def __str__(self) -> str:
        return (
            f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"
        )

    def __repr__(self) -> str:
        def shape_of(t: Tensor | None) -> Any:
            return None if t is None else t.shape

        fields = "".join(f"    {a}={shape_of(getattr(self, a))},\n" for a in self._TENSOR_ATTRS)
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (
            f"BlockMask(\n{fields}    BLOCK_SIZE={self.BLOCK_SIZE},\n    shape={self.shape},\n"
            f"    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)"
        )

    def __getitem__(self, index: Any) -> BlockMask:
        """The mask of some batches/heads/rows of tiles; its ``mask_mod`` cannot be used any
        more (the indices it would see are the slice's)."""
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
            for i, n in zip(padded, self.kv_num_blocks.shape[:3])
        )
        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = (self.full_kv_num_blocks[index], self.full_kv_indices[index])
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], *full, BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )  # fmt: skip

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cropped (or cut) to ``new_q_len`` x ``new_kv_len`` from its upper-left corner."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])

        def crop(num: Tensor, idx: Tensor) -> tuple[Tensor, Tensor]:
            idx = idx[:, :, :rows, :cols]
            num = num[:, :, :rows].clamp(max=cols)
            return (idx < num[:, :, :, None]).sum(dim=-1).to(_dtype.int32), idx

        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = crop(self.full_kv_num_blocks, self.full_kv_indices)
        return self.from_kv_blocks(
            *crop(self.kv_num_blocks, self.kv_indices), *full, BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
            compute_q_blocks=self.q_indices is not None,
        )  # fmt: skip

    def to(self, device: Any) -> BlockMask:
        """This mask with its tensors on ``device`` (only the CPU exists here)."""
        tensors = [
            None if t is None else t.to(device) for t in (getattr(self, a) for a in self._TENSOR_ATTRS)
        ]
        return BlockMask(self.seq_lengths, *tensors, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod)


def create_block_mask(
    mask_mod: _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device: Any = None,
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
    _compile: bool = False,
    separate_full_blocks: bool = True,
) -> BlockMask:
    """Evaluate ``mask_mod(b, h, q_idx, kv_idx)`` on the ``(B, H, Q_LEN, KV_LEN)`` grid (``B``/``H``
    None: 1, broadcast over any) and record its tiles: partial ones, and (with
    ``separate_full_blocks``) the fully kept ones apart."""
    if _arity(mask_mod) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    mask = pad(mask, (0, _round_up(KV_LEN, kv_block) - KV_LEN, 0, _round_up(Q_LEN, q_block) - Q_LEN))
    b, h, q, kv = mask.shape
    tiles = mask.view(b, h, q // q_block, q_block, kv // kv_block, kv_block).permute(0, 1, 2, 4, 3, 5)
    kept = tiles.sum(dim=[-2, -1])
    if separate_full_blocks:
        full = kept == q_block * kv_block
        partial_tiles, full_tiles = (kept > 0) & ~full, full
        full_pair = _dense_to_ordered(full_tiles)
    else:
        partial_tiles, full_pair = kept > 0, (None, None)
    return BlockMask.from_kv_blocks(
        *_dense_to_ordered(partial_tiles), *full_pair, BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
        seq_lengths=(Q_LEN, KV_LEN),
    )  # fmt: skip


def _check_inputs(
    query: Tensor, key: Tensor, value: Tensor, block_mask: BlockMask | None, enable_gqa: bool
) -> None:
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"Expect query and key/value to have the same embedding dimension but got E={query.size(-1)} "
            f"and E={key.size(-1)}."
        )
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: {query.dtype}, "
            f"key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead."
        )
    Hq, Hkv = query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(
            f"Expect query and key/value to have the same number of heads but got Hq={Hq} and Hkv={Hkv}. "
            "Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError(
            f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} and Hkv={Hkv}."
        )
    if query.size(0) != key.size(0) and (block_mask is None or key.size(0) != 1):
        raise ValueError(
            "Expect query and key/value to have the same batch size, or non-none block_mask, "
            f"but got block_mask={block_mask is not None and 'given' or None}, Bq={query.size(0)}, "
            f"and Bkv={key.size(0)}."
        )
    if block_mask is None:
        return
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    q_len, kv_len = block_mask.shape[-2:]
    if query.size(-2) > q_len or key.size(-2) > kv_len:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={query.size(-2)} "
            f"and kv_len={key.size(-2)}. As the block mask was created for a smaller length than you're using "
            "it for, you likely need to create a new block mask."
        )
    if query.size(-2) < q_len or key.size(-2) < kv_len:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={query.size(-2)} "
            f"and kv_len={key.size(-2)}. As the block mask was created for a larger length than you're using "
            "it for, you can either 1. create a new block mask with the correct length, or 2. 'adjust' the "
            "existing block mask to the correct length by calling block_mask._adjust(q_len, kv_len)."
        )


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: _score_mod_signature | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
) -> Tensor | tuple[Tensor, Any]:
    """Attention of ``query`` ``(B, Hq, L, E)`` over ``key`` ``(B, Hkv, S, E)`` and ``value``
    ``(B, Hkv, S, Ev)`` with scores ``score_mod(q·k * scale, b, h, q_idx, kv_idx)`` where
    ``block_mask.mask_mod`` keeps them; returns ``(B, Hq, L, Ev)``, and with ``return_lse`` or
    ``return_aux`` the per-row log-sum-exp of the modified scores (their maximum, as on PyTorch's
    CPU build, is not supported)."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
            "return_aux=AuxRequest(lse=True) instead."
        )
    if return_aux is not None and return_aux.max_scores:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")
    group = query.size(1) // key.size(1)
    if group > 1:
        key, value = key.repeat_interleave(group, dim=1), value.repeat_interleave(group, dim=1)
    B, H, L, S = query.size(0), query.size(1), query.size(2), key.size(2)
    key, value = key.expand(B, *key.shape[1:]), value.expand(B, *value.shape[1:])
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    work = _dtype.float64 if query.dtype == _dtype.float64 else _dtype.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    idx = _indices(B, H, L, S)
    if score_mod is not None:
        scores = score_mod(scores, *idx).expand(B, H, L, S).to(work)
    if block_mask is not None:
        keep = _as_mask(block_mask.mask_mod(*idx), (B, H, L, S))
        scores = scores.masked_fill(~keep, -math.inf)
    dead = (scores == -math.inf).all(dim=-1, keepdim=True)  # rows with every score masked
    probs = scores.masked_fill(dead, 0.0).softmax(dim=-1).masked_fill(dead, 0.0)
    out = probs.to(query.dtype) @ value.to(query.dtype)
    if not (return_lse or return_aux is not None):
        return out
    lse = scores.logsumexp(dim=-1).masked_fill(dead.squeeze(-1), -math.inf)
    if return_aux is None:
        return out, lse
    return out, AuxOutput(lse=lse if return_aux.lse else None)
