"""Ops with several results return PyTorch's named tuples (``torch.return_types.<name>``):
fields by name, the type's name and the repr, for the legacy and the ``linalg`` forms."""

import numpy as np
import pytest

import disttorch as dt

RNG = np.random.default_rng(11)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = A @ A.T
B = RNG.standard_normal((3, 2))
V = RNG.standard_normal(5)


def calls(lib):
    a, s, b, v = lib.tensor(A), lib.tensor(SPD), lib.tensor(B), lib.tensor(V)
    return {
        "svd": lambda: lib.svd(a),
        "Tensor.svd": lambda: a.svd(),
        "qr": lambda: lib.qr(a),
        "slogdet": lambda: lib.slogdet(a),
        "aminmax": lambda: lib.aminmax(v),
        "Tensor.aminmax": lambda: a.aminmax(dim=0),
        "frexp": lambda: lib.frexp(v),
        "lu_unpack": lambda: lib.lu_unpack(*lib.linalg.lu_factor(a)),
        "triangular_solve": lambda: lib.triangular_solve(b, a.triu()),
        "histogram": lambda: lib.histogram(v, 3),
        "histogramdd": lambda: lib.histogramdd(b, bins=[2, 2]),
        "linalg.svd": lambda: lib.linalg.svd(a),
        "linalg.qr": lambda: lib.linalg.qr(a),
        "linalg.slogdet": lambda: lib.linalg.slogdet(a),
        "linalg.eigh": lambda: lib.linalg.eigh(s),
        "linalg.eig": lambda: lib.linalg.eig(a),
        "linalg.lu_factor": lambda: lib.linalg.lu_factor(a),
        "linalg.lu_factor_ex": lambda: lib.linalg.lu_factor_ex(a),
        "linalg.lu": lambda: lib.linalg.lu(a),
        "linalg.lstsq": lambda: lib.linalg.lstsq(a, b),
        "linalg.cholesky_ex": lambda: lib.linalg.cholesky_ex(s),
        "linalg.inv_ex": lambda: lib.linalg.inv_ex(a),
        "linalg.solve_ex": lambda: lib.linalg.solve_ex(a, b),
        "linalg.ldl_factor": lambda: lib.linalg.ldl_factor(s),
        "linalg.ldl_factor_ex": lambda: lib.linalg.ldl_factor_ex(s),
    }


def test_results_are_named_and_listed_in_return_types():
    u, s, v = dt.svd(dt.tensor(A))
    res = dt.svd(dt.tensor(A))
    assert res.U is res[0] and res.S is res[1] and res.V is res[2]
    np.testing.assert_allclose((u * s) @ v.mT, A, atol=1e-12)
    assert repr(res).startswith("disttorch.return_types.svd(\nU=tensor(")
    mm = dt.aminmax(dt.tensor(V))
    assert (mm.min.item(), mm.max.item()) == (V.min(), V.max())
    assert type(dt.linalg.svd(dt.tensor(A))) is dt.return_types.linalg_svd
    assert dt.histogram(dt.tensor(V), 3).bin_edges.shape == (4,)
    assert isinstance(dt.histogramdd(dt.tensor(B), bins=[2, 2]).bin_edges, tuple)
    for name, call in calls(dt).items():
        assert type(call()) is getattr(dt.return_types, type(call()).__name__), name


@pytest.mark.parity
def test_result_types_and_reprs_match_pytorch(torch):
    ours, theirs = calls(dt), calls(torch)
    for name in ours:
        r, t = ours[name](), theirs[name]()
        assert type(r).__name__ == type(t).__name__, name
        assert repr(r).split("(", 1)[0].replace("disttorch.", "torch.") == repr(t).split("(", 1)[0], name
        for field in (
            f
            for f in dir(t)
            if not f.startswith("_")
            and f not in ("count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields")
        ):
            assert hasattr(r, field), (name, field)
