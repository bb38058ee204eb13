"""PyTorch's CPU sampling kernels on an :class:`MT19937Engine`: the same draws, in the same
order, turned into numbers by the same arithmetic, so a seed gives PyTorch's values.

Every function fills a whole array from bulk engine output, with no Python loop per
number except where PyTorch's algorithm is itself sequential: the tail of ``randperm``'s
Fisher-Yates swaps, ``multinomial`` with replacement (one step per row) and ``poisson``'s
rejection sampler (one step per draw). ``dtype`` arguments are NumPy dtypes;
float16/bfloat16 compute in float32 like PyTorch's ``opmath``.
"""

from __future__ import annotations

import math

import numpy as np

from .cephes_f32 import fma_f32, log_f32, sincos_f32
from .jit import compiled, njit
from .mt19937 import MT19937Engine

__all__ = [
    "digits",
    "uniform",
    "normal",
    "random_from_to",
    "random_full_64",
    "random_default",
    "randperm",
    "bernoulli_tensor",
    "bernoulli_scalar",
    "exponential",
    "cauchy",
    "geometric",
    "log_normal",
    "multinomial",
    "poisson",
    "UniformTape",
]

_CHUNK = 1 << 15  # elements per block of the multi-pass float kernels
_U24 = np.uint64((1 << 24) - 1)


_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def digits(dt: np.dtype) -> int:
    """Mantissa bits (with the implicit one) of a floating dtype, bfloat16 included."""
    return _DIGITS[np.dtype(dt).name]


def _opmath(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


def _unit(engine: MT19937Engine, n: int, op: np.dtype) -> np.ndarray:
    """``uniform_real_distribution<op>(0, 1)``: 53 bits of ``random64()`` for double, 24 bits
    of ``random()`` for float, scaled by 2**-bits (exact)."""
    if op == np.float64:
        raw = engine.u32(2 * n)  # random64() = first draw high: keep its low 21 bits
        bits = ((raw[0::2] & np.uint64(0x1FFFFF)) << np.uint64(32)) | raw[1::2]
        out = bits.view(np.int64).astype(np.float64)  # from int64: NumPy's fast conversion
        out *= 2.0**-53
        return out
    out = (engine.u32(n) & _U24).view(np.int64).astype(np.float32)
    out *= np.float32(2.0**-24)
    return out


_BLOCK = 1 << 15  # elements per block of bernoulli_scalar (512 KiB of raw draws)
_SPLIT = 134217729.0  # 2**27 + 1, Dekker's splitting constant


def _fma64(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """``a * b + c`` of float64 values as a fused multiply-add (one rounding), which is how
    the compiled kernels evaluate it: Dekker's exact product ``a*b = p + e`` and Knuth's exact
    sum ``p + c = s + t``, then ``s + (t + e)``."""
    p = a * b
    ah = a * _SPLIT
    ah = ah - (ah - a)
    al = a - ah
    bh = b * _SPLIT
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _fma(a: np.ndarray, b: float, c: float, op: np.dtype) -> np.ndarray:
    """``a * b + c`` with one rounding in ``op`` (float32: the product is exact in float64)."""
    if b == 1 and c == 0:
        return np.asarray(a, dtype=op)
    if op == np.float32:
        return fma_f32(a, np.float32(b), np.float32(c))
    return _fma64(np.asarray(a, dtype=np.float64), float(b), float(c))


def uniform(
    engine: MT19937Engine, n: int, dtype: np.dtype, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """``uniform_(low, high)``: ``x * (high - low) + low`` in opmath with one rounding (a fused
    multiply-add, as PyTorch's kernel is compiled), a value rounding to ``high`` replaced by
    ``low``."""
    dt = np.dtype(dtype)
    op = _opmath(dt)
    lo, hi = op.type(low), op.type(high)
    vals = _fma(_unit(engine, n, op), hi - lo, lo, op).astype(dt, copy=False)
    if not (lo == 0 and hi == 1 and dt == op):  # [0, 1) in opmath never rounds up to 1
        vals[vals == dt.type(high)] = dt.type(low)
    return vals


def normal(
    engine: MT19937Engine,
    n: int,
    dtype: np.dtype,
    mean: float = 0.0,
    std: float = 1.0,
    contiguous: bool = True,
) -> np.ndarray:
    """``normal_(mean, std)``: for 16 or more contiguous elements, Box-Muller over blocks of 16
    uniforms (pairs ``i`` and ``i+8``; the tail block redrawn over the last 16 slots); else
    one scalar Box-Muller per element in double, the spare sample cached on the engine."""
    dt = np.dtype(dtype)
    if n >= 16 and contiguous:
        return _normal_fill(engine, n, dt, mean, std)
    return _normal_scalar(engine, n, mean, std).astype(dt)


def _box_muller_16(u: np.ndarray, op: np.dtype, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 uniforms (rows of ``u``) to 16 normals each."""
    u1, u2 = op.type(1) - u[:, :8], u[:, 8:]
    if op == np.float32:
        radius = np.sqrt(np.float32(-2) * log_f32(u1))
        sin_t, cos_t = sincos_f32(np.float32(2.0 * math.pi) * u2)
    else:
        radius = np.sqrt(-2 * np.log(u1))
        theta = (2.0 * math.pi) * u2
        sin_t, cos_t = np.sin(theta), np.cos(theta)
    out = np.empty_like(u)
    out[:, :8] = _fma(radius * cos_t, std, mean, op)
    out[:, 8:] = _fma(radius * sin_t, std, mean, op)
    return out


def _normal_fill(engine: MT19937Engine, n: int, dt: np.dtype, mean: float, std: float) -> np.ndarray:
    op = _opmath(dt)
    mean, std = op.type(mean), op.type(std)
    full = n // 16 * 16
    # float32/float64 draw all n uniforms, then redraw the tail block; float16/bfloat16
    # (computed in float32) draw block by block: the tail block's 16 only
    u = _unit(engine, n if dt == op else full, op)
    out = np.empty(n, dtype=op)
    for lo in range(0, full, _CHUNK):  # blocks that stay in cache
        hi = min(lo + _CHUNK, full)
        out[lo:hi] = _box_muller_16(u[lo:hi].reshape(-1, 16), op, mean, std).reshape(-1)
    if n % 16:
        out[n - 16 :] = _box_muller_16(_unit(engine, 16, op).reshape(1, 16), op, mean, std).reshape(-1)
    return out.astype(dt, copy=False)


def _normal_scalar(engine: MT19937Engine, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_distribution<double>`` called ``n`` times: a cached sample first, then pairs
    ``(r cos t, r sin t)`` from two 53-bit uniforms (t from the first), the last odd ``sin``
    cached."""
    out = np.empty(n, dtype=np.float64)
    start = 0
    if n and engine.next_double_normal is not None:
        out[0] = engine.next_double_normal
        engine.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = _unit(engine, 2 * pairs, np.dtype(np.float64))
        r = np.sqrt(-2.0 * np.log1p(-u[1::2]))
        theta = (2.0 * math.pi) * u[0::2]
        z = np.empty(2 * pairs)
        z[0::2], z[1::2] = r * np.cos(theta), r * np.sin(theta)
        out[start:] = z[: n - start]
        if (n - start) % 2:
            engine.next_double_normal = float(z[-1])
    return _fma(out, std, mean, np.dtype(np.float64))


def random_from_to(engine: MT19937Engine, n: int, dtype: np.dtype, range_: int, base: int) -> np.ndarray:
    """``random_(from, to)``: ``base + draw % range``, the draw 64-bit when ``range >= 2**28``."""
    draws = engine.u64(n) if range_ >= 1 << 28 else engine.u32(n)
    vals = draws % np.uint64(range_)
    vals += np.uint64(base & 0xFFFFFFFFFFFFFFFF)  # two's complement: base + r as int64
    return _cast(vals.view(np.int64), dtype)


def _cast(vals: np.ndarray, dtype: np.dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return vals != 0
    return vals.astype(dt, copy=False)


def random_full_64(engine: MT19937Engine, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_(-2**63, None)``: a 64-bit draw read as a signed integer."""
    return _cast(engine.u64(n).view(np.int64), dtype)


def random_default(engine: MT19937Engine, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_()`` without bounds: ``[0, max]`` of an integer dtype (``draw % (max + 1)``),
    ``[0, 2**digits]`` of a floating dtype, ``draw & 1`` for bool; 64-bit draws for int64 and
    float64, 32-bit ones otherwise."""
    dt = np.dtype(dtype)
    wide = dt in (np.dtype(np.int64), np.dtype(np.float64))
    draws = engine.u64(n) if wide else engine.u32(n)
    if dt.kind == "b":
        return (draws & np.uint64(1)).astype(bool)
    if dt.kind in "iu":
        return (draws % np.uint64(int(np.iinfo(dt).max) + 1)).astype(dt)
    return (draws % np.uint64((1 << digits(dt)) + 1)).astype(dt)


_RANDPERM_WIDE = (2**32 - 1) // 20  # from here on PyTorch shuffles with 64-bit draws


def randperm(engine: MT19937Engine, n: int) -> np.ndarray:
    """PyTorch's CPU ``randperm``: Fisher-Yates from the front, swap ``i`` with
    ``i + random() % (n - i)``; for ``n >= (2**32 - 1) // 20`` the "inside-out" variant with
    ``random64() % (i + 1)``."""
    if n < _RANDPERM_WIDE:
        perm = np.arange(n, dtype=np.int64)
        if n > 1:
            targets = engine.u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
            targets = targets.astype(np.int64) + np.arange(n - 1, dtype=np.int64)
            _swap_forward(perm, targets)
        return perm
    picks = (engine.u64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    perm = np.empty(n, dtype=np.int64)
    for i, z in enumerate(picks):
        perm[i] = perm[z]
        perm[z] = i
    return perm


_SEQUENTIAL = 1 << 12  # below this many swaps left, one Python step per swap is cheaper


def _swap_forward(perm: np.ndarray, targets: np.ndarray) -> None:
    """Apply the swaps ``perm[i] <-> perm[targets[i]]`` (``targets[i] >= i``) for ``i = 0, 1,
    ...`` in order, in place. Runs of consecutive swaps that touch disjoint positions (each
    target beyond the run and no target twice) are independent and done as one NumPy
    assignment; a run of about ``sqrt(n - i)`` swaps qualifies, so the whole shuffle takes
    ``O(sqrt(n))`` NumPy calls, and the last few thousand swaps one Python step each."""
    n_swaps = len(targets)
    i = 0
    while n_swaps - i > _SEQUENTIAL:
        width = min(n_swaps - i, 3 * math.isqrt(len(perm) - i) + 16)
        idx = np.arange(i, i + width, dtype=np.int64)
        tgt = targets[i : i + width]
        lowest = np.minimum.accumulate(np.where(tgt == idx, len(perm), tgt))
        run = int(np.count_nonzero(lowest >= idx + 1))  # every target at or past the run's end
        order = np.argsort(tgt, kind="stable")
        repeats = order[1:][tgt[order[1:]] == tgt[order[:-1]]]
        if repeats.size:
            run = min(run, int(repeats.min()))  # stop before a target's second use
        idx, tgt = idx[:run], tgt[:run]
        perm[idx], perm[tgt] = perm[tgt], perm[idx]
        i += run
    values, rest = perm.tolist(), targets[i:].tolist()
    for k, j in enumerate(rest, start=i):
        values[k], values[j] = values[j], values[k]
    perm[i:] = values[i:]


def bernoulli_tensor(engine: MT19937Engine, p: np.ndarray) -> np.ndarray:
    """``bernoulli_(p_tensor)``: per element ``u < p`` with a 53-bit double uniform when ``p``
    is float64, a 24-bit float uniform otherwise (in ``p``'s C order)."""
    p = np.ascontiguousarray(p)
    op = np.dtype(np.float64) if p.dtype == np.float64 else np.dtype(np.float32)
    u = _unit(engine, p.size, op).reshape(p.shape)
    return u < p.astype(op)


def bernoulli_scalar(engine: MT19937Engine, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a number ``p`` (the masks of ``dropout``): ``u < p`` per element
    with a 53-bit double uniform. (PyTorch's source also has an MKL ``viRngBernoulli`` path
    for Intel CPUs; the 2.13 CPU wheel, checked on an Intel CPU, takes this one.)"""
    # u = bits * 2**-53 < p with ``bits`` a 53-bit integer  <=>  bits < ceil(p * 2**53):
    # one integer comparison instead of a conversion to double and a product per element.
    threshold = np.uint64(math.ceil(min(max(p, 0.0), 1.0) * 2.0**53))
    out = np.empty(n, dtype=bool)
    fused = compiled(_compile_bernoulli) if n >= _BLOCK else None
    if fused is not None:  # the twister and the comparison in one compiled loop
        key, pos = engine.twister_state()
        engine.set_twister_state(key, fused(key, pos, threshold, out))
        return out
    # Drawn in blocks that stay in cache: dropout masks run to millions of elements.
    bits = np.empty(min(n, _BLOCK), dtype=np.uint64)
    for lo in range(0, n, _BLOCK):
        m = min(_BLOCK, n - lo)
        pairs = engine.u32(2 * m).reshape(m, 2)  # random64(): the first draw is the high half
        b = bits[:m]
        np.bitwise_and(pairs[:, 0], np.uint64(0x1FFFFF), out=b)
        b <<= np.uint64(32)
        b |= pairs[:, 1]
        np.less(b, threshold, out=out[lo : lo + m])
    return out


def _compile_bernoulli():
    """``bernoulli_scalar``'s loop compiled (``kernels/jit.py``): mt19937's twist and tempering
    (the reference algorithm of Matsumoto and Nishimura, as NumPy's ``MT19937`` runs it) and the
    53-bit comparison per element, with no array of raw draws in between."""
    jit = njit()
    n_words, shift = 624, 397
    upper, lower, matrix = np.uint32(0x80000000), np.uint32(0x7FFFFFFF), np.uint32(0x9908B0DF)
    one = np.uint32(1)

    @jit
    def twist(key):  # pragma: no cover - compiled
        for i in range(n_words):  # split at the wrap-arounds, so no index needs a modulo
            nxt = key[i + 1] if i + 1 < n_words else key[0]
            y = (key[i] & upper) | (nxt & lower)
            mag = matrix if y & one else np.uint32(0)
            far = key[i + shift] if i + shift < n_words else key[i + shift - n_words]
            key[i] = far ^ (y >> one) ^ mag

    @jit
    def bernoulli(key, pos, threshold, out):  # pragma: no cover - compiled
        words = np.empty(n_words, dtype=np.uint32)  # tempered outputs of the current state
        low = np.uint32(0x1FFFFF)
        n, k, hi, carry = out.shape[0], 0, np.uint32(0), False
        while k < n:
            if pos == n_words:
                twist(key)
                pos = 0
            m = n_words - pos
            for i in range(m):
                y = key[pos + i]
                y ^= y >> np.uint32(11)
                y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
                y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
                words[i] = y ^ (y >> np.uint32(18))
            j = 0
            if carry:  # a 64-bit draw split over two twists: its high half came last time
                bits = (np.uint64(hi & low) << np.uint64(32)) | np.uint64(words[0])
                out[k] = bits < threshold
                k, j, carry = k + 1, 1, False
            pairs = min((m - j) // 2, n - k)
            for q in range(pairs):
                bits = (np.uint64(words[j + 2 * q] & low) << np.uint64(32)) | np.uint64(words[j + 2 * q + 1])
                out[k + q] = bits < threshold
            k += pairs
            j += 2 * pairs
            if k < n and j < m:
                hi, carry, j = words[j], True, j + 1
            pos += j
        return pos

    return bernoulli


def exponential(engine: MT19937Engine, n: int, dtype: np.dtype, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)`` with a 53-bit uniform, cast."""
    u = _unit(engine, n, np.dtype(np.float64))
    return ((-1.0 / lambd) * np.log1p(-u)).astype(dtype)


def cauchy(engine: MT19937Engine, n: int, dtype: np.dtype, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 1/2))``, 53-bit ``u``."""
    u = _unit(engine, n, np.dtype(np.float64))
    return (median + sigma * np.tan(math.pi * (u - 0.5))).astype(dtype)


def geometric(engine: MT19937Engine, n: int, dtype: np.dtype, p: float) -> np.ndarray:
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))``, 53-bit ``u``."""
    u = _unit(engine, n, np.dtype(np.float64))
    with np.errstate(divide="ignore"):
        return np.ceil(np.log(u) / math.log1p(-p)).astype(dtype)


def log_normal(engine: MT19937Engine, n: int, dtype: np.dtype, mean: float, std: float) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of the scalar (per element) normal path."""
    return np.exp(_normal_scalar(engine, n, mean, std)).astype(dtype)


def multinomial(engine: MT19937Engine, rows: np.ndarray, num_samples: int, replacement: bool) -> np.ndarray:
    """``multinomial`` of a 2-D array of non-negative weights (one distribution per row).

    Without replacement (or for one sample): the exponential race ``argmax``/``topk`` of
    ``w / q`` with ``q = exponential_(1)`` drawn in ``rows``' dtype over the whole array.
    With replacement: per row the sequential cumulative sum in the weights' dtype,
    normalised, its last entry set to 1, then per sample a 53-bit uniform located by
    binary search (the first slot whose cumulative weight is not below it)."""
    if not replacement or num_samples == 1:
        q = exponential(engine, rows.size, rows.dtype, 1.0).reshape(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        keys = np.where(np.isnan(keys), -np.inf, keys)
        if num_samples == 1:
            return np.argmax(keys, axis=1)[:, None]
        return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    acc = np.float64 if rows.dtype == np.float64 else np.float32
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i, w in enumerate(rows.astype(acc)):
        cdf = np.cumsum(w, dtype=acc)
        total = cdf[-1]
        if total > 0:
            cdf = cdf / total
        cdf[-1] = 1
        u = _unit(engine, num_samples, np.dtype(np.float64))
        out[i] = np.searchsorted(cdf.astype(np.float64), u, side="left")
    return out


class UniformTape:
    """53-bit uniforms for a sequential sampler that takes a data-dependent number of them:
    read ahead in blocks, then the engine is rewound to exactly the draws consumed."""

    def __init__(self, engine: MT19937Engine, block: int) -> None:
        self._engine, self._start = engine, engine.bit_generator.state
        self._block = max(int(block), 64)
        self._buf: list[float] = []
        self._used = 0
        self._fetched = 0

    def __call__(self) -> float:
        if self._used == self._fetched:
            self._buf.extend(_unit(self._engine, self._block, np.dtype(np.float64)).tolist())
            self._fetched += self._block
        self._used += 1
        return self._buf[self._used - 1]

    def close(self) -> None:
        self._engine.bit_generator.state = self._start
        self._engine.u32(2 * self._used)


def _poisson_one(lam: float, uniform: UniformTape) -> int:
    if lam >= 10:  # transformed rejection with squeeze (Hörmann 1993, "PTRS")
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            accept = -lam + k * loglam - math.lgamma(k + 1.0)
            if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= accept:
                return k
    if lam == 0:
        return 0
    count, prod, limit = 0, 1.0, math.exp(-lam)
    while True:
        prod *= uniform()
        if prod <= limit:
            return count
        count += 1


def poisson(engine: MT19937Engine, lam: np.ndarray) -> np.ndarray:
    """PyTorch's CPU ``poisson``: per rate in order, Hörmann's PTRS for ``lam >= 10``, else
    multiply uniforms until the product drops to ``exp(-lam)`` (one Python step per draw)."""
    tape = UniformTape(engine, 2 * lam.size + 16)
    try:
        out = np.array([_poisson_one(float(x), tape) for x in lam], dtype=np.float64)
    finally:
        tape.close()
    return out
