"""PyTorch's CPU flash attention kernel on bfloat16/float16 inputs, step by step on their
float32 copies, so that ``scaled_dot_product_attention`` gives its bits.

Forward: the keys go in blocks of :data:`KV_BLOCK`; per block the row maximum is updated,
``exp(s - max)`` computed with the kernel's fast exponential (:func:`fexp_u20`) on whole
vectors and the C library's ``expf`` on the rest, summed in the vector's float32 lanes (then
the lanes pairwise, then the rest in order; 16 lanes with PyTorch's AVX512 kernels, 8 with
its AVX2 ones, :func:`.cpu_features.float_lanes`), rounded to the 16-bit dtype before the product
with V; earlier blocks' sums and products are rescaled by ``exp(old max - new max)``. The
output is the product times ``1 / sum``. Backward: the weights come back as SLEEF's
``exp(s - logsumexp)``; the queries go in blocks (:func:`query_block`) and the key and
value gradients are summed over them in the 16-bit dtype (the kernel's gradient buffers
have the inputs' dtype), the query gradient likewise over key blocks.
"""

from __future__ import annotations

import numpy as np

from .cpu_features import float_lanes
from .threads import matmul
from .vec_exp import sleef_exp

__all__ = ["KV_BLOCK", "fexp_u20", "flash_backward", "flash_forward", "query_block", "weights"]

KV_BLOCK = 512  # keys per block, at every query length
# float32 lanes of the kernel's vectors: 16 with PyTorch's AVX512 kernels, 8 with its AVX2 ones
_LANES = float_lanes()
_F = np.float32
_LOG2E = np.array(0x3FB8AA3B, np.uint32).view(_F)
_LN_MIN = np.array(0xC2AEAC50, np.uint32).view(_F)  # below: 0
_LN_MAX = np.array(0x42B17218, np.uint32).view(_F)  # above: inf
_POLY = (_F(-0.079204240219773236), _F(-0.22433836478672356), _F(0.30354260500649682))
_POLY_0 = _F(0.00010703434948458272)


def query_block(queries: int) -> int:
    """Queries per block of the kernel, by the query length."""
    return 256 if queries >= 768 else 64 if queries >= 192 else 32


def _fma(a: np.ndarray, b: np.ndarray | np.floating, c: np.ndarray | np.floating) -> np.ndarray:
    """Float32 ``a * b + c`` rounded once (the product is exact in float64)."""
    return (np.multiply(a, b, dtype=np.float64) + c).astype(_F)


def fexp_u20(x: np.ndarray) -> np.ndarray:
    """The kernel's fast float32 ``exp``: ``2**(x log2 e)`` from a cubic in the fraction,
    written into the exponent bits (1 ulp of bfloat16/float16 at most); 0 below
    ``ln(FLT_MIN)``, inf above ``ln(FLT_MAX)``."""
    with np.errstate(invalid="ignore"):  # (-inf: inf - inf; set to 0 below)
        t = x * _LOG2E
        frac = t - np.floor(t)
        poly = _fma(frac, _POLY[0], _POLY[1])
        poly = _fma(frac, poly, _POLY[2])
        poly = _fma(frac, poly, _POLY_0)
        bits = _fma(_F(2**23), t - poly, _F(2**23 * 127))
        out = np.trunc(bits).astype(np.int64).astype(np.uint32).view(_F)
    out[x < _LN_MIN] = 0.0
    out[x > _LN_MAX] = np.inf
    return out


def _c_exp(x: np.ndarray) -> np.ndarray:
    """The C library's ``expf`` (correctly rounded float32)."""
    return np.exp(x, dtype=np.float64).astype(_F)


def _exp_and_sums(shifted: np.ndarray) -> tuple:
    """``exp`` of a block of shifted scores as the kernel computes it, and its row sums
    ``(..., 1)``: whole vectors through :func:`fexp_u20` summed lane by lane, the lanes
    reduced pairwise, then the remaining keys one by one (``expf``)."""
    n = shifted.shape[-1]
    cut = n - n % _LANES
    e = np.empty_like(shifted)
    e[..., :cut] = fexp_u20(shifted[..., :cut])
    e[..., cut:] = _c_exp(shifted[..., cut:])
    lanes = np.zeros(shifted.shape[:-1] + (_LANES,), _F)
    for start in range(0, cut, _LANES):
        lanes += e[..., start : start + _LANES]
    lanes = _lane_tree(lanes)
    for j in range(cut, n):
        lanes += e[..., j : j + 1]
    return e, lanes


def flash_forward(s: np.ndarray, v: np.ndarray, low: np.dtype) -> tuple:
    """``softmax(s) @ v`` as the kernel computes it for the 16-bit dtype ``low``, from the
    float32 scores ``s`` (``(..., L, S)``, scaled and masked) and values. Returns
    ``(output, logsumexp (..., L, 1))`` in float32 (a row with every key masked out gives 0)."""
    rows = s.shape[:-1] + (1,)
    row_max = np.full(rows, -np.inf, _F)
    total = np.zeros(rows, _F)
    dst = None
    for start in range(0, s.shape[-1], KV_BLOCK):
        block = s[..., start : start + KV_BLOCK]
        new_max = np.maximum(row_max, block.max(axis=-1, keepdims=True))
        live = new_max != -np.inf
        e, sums = _exp_and_sums(block - np.where(live, new_max, _F(0)))
        with np.errstate(invalid="ignore"):
            rescale = _c_exp(row_max - new_max)
        total = np.where(live, sums + rescale * total, total)
        row_max = new_max
        part = matmul(e.astype(low).astype(_F), v[..., start : start + KV_BLOCK, :])
        dst = part if dst is None else np.where(live, dst * rescale, dst) + part
    total[total == 0] = 1.0
    out = dst * (_F(1) / total)
    row_max[row_max == -np.inf] = 0.0
    lse = row_max + np.log(total, dtype=np.float64).astype(_F)
    return out, lse


def _lane_tree(lanes: np.ndarray) -> np.ndarray:
    """The sum of the float32 lanes ``(..., _LANES)`` as the kernel reduces a vector: halves
    added pairwise (with 16 lanes lane i to lane i + 8, then + 4, + 2, + 1); ``(..., 1)``."""
    width = _LANES
    while width > 1:
        width //= 2
        lanes = lanes[..., :width] + lanes[..., width : 2 * width]
    return lanes


def _vector_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row dot products ``(..., 1)`` of float32 rows as PyTorch's 16-bit ``map2_reduce_all``
    sums them: the products of ``_LANES``-element chunks go to two accumulators in turn
    (even chunks, odd chunks), which are added, then reduced by :func:`_lane_tree`."""
    n = a.shape[-1]
    padded = -(-n // _LANES) * _LANES
    prods = np.zeros(a.shape[:-1] + (max(padded, _LANES),), _F)
    np.multiply(a, b, out=prods[..., :n])
    chunks = [prods[..., c : c + _LANES] for c in range(0, prods.shape[-1], _LANES)]
    even, odd = chunks[0].copy(), chunks[1].copy() if len(chunks) > 1 else None
    for c, chunk in enumerate(chunks[2:], start=2):
        if c % 2:
            odd += chunk
        else:
            even += chunk
    return _lane_tree(even if odd is None else even + odd)


def weights(s: np.ndarray, lse: np.ndarray) -> np.ndarray:
    """The attention weights as the kernel's backward recomputes them from the scores and
    ``logsumexp``: SLEEF's ``exp(s - lse)``."""
    return sleef_exp(s - lse)


def flash_backward(
    attn: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    g: np.ndarray,
    out: np.ndarray,
    scale: float,
    low: np.dtype,
    groups: int = 1,
) -> tuple:
    """The gradients ``(dq, dk, dv, ds)`` of :func:`flash_forward` as the kernel computes
    them (``groups`` > 1: ``k`` and ``v`` have each head repeated that many times, and their
    gradients come back per original head), from the weights ``attn`` (:func:`weights`), the inputs, the output gradient ``g``
    and the 16-bit output ``out`` (float32 copies; ``ds``, the scores' gradient, unrounded)."""

    def rounded(a: np.ndarray) -> np.ndarray:
        return a.astype(low).astype(_F)

    rowsum = _vector_dot(g, out)
    ds = attn * (matmul(g, v.swapaxes(-1, -2)) - rowsum)
    ds16, attn16 = rounded(ds), rounded(attn)
    scale = _F(scale)
    L, S = attn.shape[-2:]
    step = query_block(L)
    gk = gv = None
    for head in range(groups):  # grouped-query heads: each adds into its key/value head's sums
        for m in range(0, L, step):
            rows = slice(m, m + step)
            pk = scale * matmul(ds16[..., rows, :].swapaxes(-1, -2), q[..., rows, :])
            pv = matmul(attn16[..., rows, :].swapaxes(-1, -2), g[..., rows, :])
            if groups > 1:
                pk, pv = (_group_member(a, groups, head) for a in (pk, pv))
            gk = rounded(pk) if gk is None else rounded(gk + pk)
            gv = rounded(pv) if gv is None else rounded(gv + pv)
    gq = None
    for n in range(0, S, KV_BLOCK):
        keys = slice(n, n + KV_BLOCK)
        pq = scale * matmul(ds16[..., keys], k[..., keys, :])
        gq = rounded(pq) if gq is None else rounded(gq + pq)
    return gq, gk, gv, ds


def _group_member(a: np.ndarray, groups: int, member: int) -> np.ndarray:
    """Of ``(..., heads * groups, S, E)`` with each head repeated ``groups`` times in a row,
    the ``member``-th copy of every head: ``(..., heads, S, E)``."""
    shape = a.shape[:-3] + (a.shape[-3] // groups, groups) + a.shape[-2:]
    return a.reshape(shape)[..., member, :, :]
