"""0-d tensors with ``dim=0`` / ``dim=-1``: PyTorch treats a scalar's dim as the one dim of a
1-element vector (reductions, scans, sorts, flips, gathers answer with a 0-d result), and
``dim=1`` is out of range. Checked op by op over the whole class."""

import math

import numpy as np
import pytest

import disttorch as dt

OPS = {
    "sum": lambda L, x, d, k: L.sum(x, d, keepdim=k),
    "mean": lambda L, x, d, k: L.mean(x, d, keepdim=k),
    "nansum": lambda L, x, d, k: L.nansum(x, d, keepdim=k),
    "nanmean": lambda L, x, d, k: L.nanmean(x, d, keepdim=k),
    "prod": lambda L, x, d, k: L.prod(x, d, keepdim=k),
    "amax": lambda L, x, d, k: L.amax(x, d, keepdim=k),
    "amin": lambda L, x, d, k: L.amin(x, d, keepdim=k),
    "max": lambda L, x, d, k: L.max(x, d, keepdim=k),
    "min": lambda L, x, d, k: L.min(x, d, keepdim=k),
    "argmax": lambda L, x, d, k: L.argmax(x, d, keepdim=k),
    "argmin": lambda L, x, d, k: L.argmin(x, d, keepdim=k),
    "var": lambda L, x, d, k: L.var(x, d, keepdim=k),
    "std": lambda L, x, d, k: L.std(x, d, keepdim=k),
    "std_biased": lambda L, x, d, k: L.std(x, d, unbiased=False, keepdim=k),
    "var_mean": lambda L, x, d, k: L.var_mean(x, d, keepdim=k),
    "std_mean": lambda L, x, d, k: L.std_mean(x, d, keepdim=k),
    "logsumexp": lambda L, x, d, k: L.logsumexp(x, d, keepdim=k),
    "norm": lambda L, x, d, k: L.norm(x, dim=d, keepdim=k),
    "norm1": lambda L, x, d, k: L.norm(x, p=1, dim=d, keepdim=k),
    "vector_norm": lambda L, x, d, k: L.linalg.vector_norm(x, dim=d, keepdim=k),
    "count_nonzero": lambda L, x, d, k: L.count_nonzero(x, d),
    "any": lambda L, x, d, k: L.any(x, d, keepdim=k),
    "all": lambda L, x, d, k: L.all(x, d, keepdim=k),
    "median": lambda L, x, d, k: L.median(x, d, keepdim=k),
    "nanmedian": lambda L, x, d, k: L.nanmedian(x, d, keepdim=k),
    "mode": lambda L, x, d, k: L.mode(x, d, keepdim=k),
    "kthvalue": lambda L, x, d, k: L.kthvalue(x, 1, d, keepdim=k),
    "aminmax": lambda L, x, d, k: L.aminmax(x, dim=d, keepdim=k),
    "quantile": lambda L, x, d, k: L.quantile(x, 0.5, dim=d, keepdim=k),
    "nanquantile": lambda L, x, d, k: L.nanquantile(x, 0.5, dim=d, keepdim=k),
    "cumsum": lambda L, x, d, k: L.cumsum(x, d),
    "cumprod": lambda L, x, d, k: L.cumprod(x, d),
    "cummax": lambda L, x, d, k: L.cummax(x, d),
    "cummin": lambda L, x, d, k: L.cummin(x, d),
    "logcumsumexp": lambda L, x, d, k: L.logcumsumexp(x, d),
    "flip": lambda L, x, d, k: L.flip(x, (d,)),
    "softmax": lambda L, x, d, k: L.softmax(x, d),
    "log_softmax": lambda L, x, d, k: L.log_softmax(x, d),
    "sort": lambda L, x, d, k: L.sort(x, d),
    "argsort": lambda L, x, d, k: L.argsort(x, d),
    "topk": lambda L, x, d, k: L.topk(x, 1, d),
    "gather": lambda L, x, d, k: L.gather(x, d, L.tensor(0)),
    "index_select": lambda L, x, d, k: L.index_select(x, d, L.tensor([0])),
    "movedim": lambda L, x, d, k: L.movedim(x, d, d),
    "squeeze": lambda L, x, d, k: L.squeeze(x, d),
    "split": lambda L, x, d, k: L.split(x, 1, d),
    "chunk": lambda L, x, d, k: L.chunk(x, 1, d),
    "cat": lambda L, x, d, k: L.cat([x, x], d),
    "renorm": lambda L, x, d, k: L.renorm(x, 2, d, 1.0),
}


def _run(lib, name, d, keepdim):
    x = lib.tensor(2.5)
    try:
        out = OPS[name](lib, x, d, keepdim)
    except Exception as e:  # noqa: BLE001 - the error is the answer being compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    outs = out if isinstance(out, tuple) else (out,)
    return tuple((str(o.dtype).split(".")[-1], tuple(o.shape), o.detach().numpy().tolist()) for o in outs)


def _same(a, b):
    if a[0] == "raises" or b[0] == "raises":
        return a[:2] == b[:2]
    return len(a) == len(b) and all(
        x[:2] == y[:2] and (x[2] == y[2] or (math.isnan(x[2]) and math.isnan(y[2]))) for x, y in zip(a, b)
    )


@pytest.mark.parametrize(
    "name", ["sum", "nansum", "flip", "norm", "count_nonzero", "amax", "cummax", "gather"]
)
@pytest.mark.parametrize("d", [0, -1])
def test_scalar_dim_names_the_one_element(name, d):
    (dtype, shape, value), *_ = _run(dt, name, d, False)
    assert shape == () and value == (1 if name == "count_nonzero" else 2.5)


@pytest.mark.parametrize("name", ["var", "std", "var_mean"])
def test_scalar_variance_over_its_dim_is_nan_unbiased_and_zero_biased(name):
    out = OPS[name](dt, dt.tensor(2.5), 0, False)
    assert np.isnan((out[0] if isinstance(out, tuple) else out).item())
    assert dt.var(dt.tensor(2.5), 0, correction=0).item() == 0.0


def test_scalar_dim_one_is_out_of_range_and_joins_refuse_scalars():
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        dt.sum(dt.tensor(1.0), 1)
    with pytest.raises(
        RuntimeError, match="zero-dimensional tensor \\(at position 1\\) cannot be concatenated"
    ):
        dt.cat([dt.ones(1), dt.tensor(1.0)])
    with pytest.raises(RuntimeError, match="split expects at least a 1-dimensional tensor"):
        dt.tensor(1.0).split(1)


def test_scalar_reductions_keep_their_gradient():
    x = dt.tensor(2.5, requires_grad=True)
    (dt.sum(x, 0) + dt.flip(x, (0,)) + dt.cummax(x, -1)[0] + dt.gather(x, 0, dt.tensor(0))).backward()
    assert x.grad.item() == 4.0


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(OPS))
def test_scalar_dims_match_pytorch(torch, name):
    for d in (0, -1, 1):
        for keepdim in (False, True):
            ours, theirs = _run(dt, name, d, keepdim), _run(torch, name, d, keepdim)
            assert _same(ours, theirs), (name, d, keepdim, ours, theirs)


def test_low_precision_zero_dim_keeps_its_dtype():
    x = dt.tensor(1.5, dtype=dt.float16)
    assert dt.logcumsumexp(x, 0).dtype == dt.float16 and dt.logcumsumexp(x, 0).item() == 1.5
