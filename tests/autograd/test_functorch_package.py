"""``functorch`` (PyTorch's package merged into ``torch.func``), which the alias maps to
``disttorch._functorch``: the deprecated transforms warn as PyTorch's, and modules become
functions of their parameters (``make_functional[_with_buffers]``, ``combine_state_for_ensemble``)."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import _functorch as ft
from disttorch.as_torch._finder import _real_name


def test_the_alias_maps_functorch_to_this_package():
    assert _real_name("functorch") == "disttorch._functorch"
    assert _real_name("functorch.make_functional") == "disttorch._functorch.make_functional"
    assert _real_name("torch.nn") == "disttorch.nn" and _real_name("functorchx") is None


def _run(lib, functorch):
    """A module's jvp w.r.t. its parameters, an ensemble through vmap, the warnings raised."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    model.eval()
    x = lib.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func, params, buffers = functorch.make_functional_with_buffers(model)
        tangents = tuple(lib.ones_like(p) for p in params)
        out, jvp_out = functorch.jvp(lambda p: func(p, buffers, x), (params,), (tangents,))
        fmodel, eparams, ebuffers = functorch.combine_state_for_ensemble([model, model])
        ens = functorch.vmap(fmodel, (0, 0, None))(eparams, ebuffers, x)
        plain, pparams = functorch.make_functional(lib.nn.Linear(3, 2))
    texts = [(str(w.message), w.filename == __file__) for w in caught if w.category is FutureWarning]
    shapes = [tuple(p.shape) for p in eparams], [tuple(b.shape) for b in ebuffers]
    values = [t.detach().numpy() for t in (out, jvp_out, ens, plain(pparams, x))]
    return values, shapes, func.param_names, func.buffer_names, texts, params[0].requires_grad


def test_functorch_api_runs_modules_as_functions():
    values, shapes, names, buffer_names, texts, requires = _run(dt, ft)
    assert names == ("0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias") and requires
    assert shapes[0][0] == (2, 4, 3) and buffer_names == (
        "1.running_mean",
        "1.running_var",
        "1.num_batches_tracked",
    )
    np.testing.assert_allclose(values[2][0], values[0], rtol=1e-6)
    assert len(texts) == 5 and all(here for _, here in texts)
    with (
        pytest.warns(FutureWarning, match="functorch.make_functional"),
        pytest.raises(RuntimeError, match="has buffers"),
    ):
        ft.make_functional(dt.nn.BatchNorm1d(2))


@pytest.mark.parity
def test_functorch_api_matches_pytorch(torch):
    functorch = pytest.importorskip("functorch")
    ours, theirs = _run(dt, ft), _run(torch, functorch)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[1:] == theirs[1:]
