"""Which ``ReduceOp`` applies to which dtype, and the error otherwise: every op x dtype pair
of every reducing collective, against a table of PyTorch's (gloo) answers and, when PyTorch is
installed, against PyTorch itself (a one-rank gloo group in this process)."""

from __future__ import annotations

import numpy as np
import pytest

OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
DTYPES = [
    "float32",
    "float64",
    "float16",
    "complex64",
    "complex128",
    "int8",
    "uint8",
    "int32",
    "int64",
    "bool",
]
COLLECTIVES = ["all_reduce", "reduce", "reduce_scatter_tensor"]


def pytorch_rule(collective: str, dtype: str, op: str) -> type | None:
    """The error PyTorch 2.13 with gloo raises for ``op`` on ``dtype`` (None: accepted)."""
    if dtype.startswith("complex") and op not in ("SUM", "AVG"):
        return ValueError if collective == "all_reduce" else RuntimeError
    if op == "AVG" and not dtype.startswith(("float", "complex")):
        return RuntimeError
    if op in ("BAND", "BOR", "BXOR") and dtype.startswith(("float", "complex")):
        return RuntimeError
    return None


def call(dist, collective: str, dtype, op) -> type | None:
    """Run ``collective`` on a one-rank group; the type of the error it raises, or None."""
    try:
        if hasattr(dtype, "is_complex"):  # a torch dtype
            import torch

            t, out = torch.ones(2, dtype=dtype), torch.empty(2, dtype=dtype)
        else:
            t, out = np.ones(2, dtype), np.empty(2, dtype)
        if collective == "all_reduce":
            dist.all_reduce(t, op=op)
        elif collective == "reduce":
            dist.reduce(t, 0, op=op)
        else:
            dist.reduce_scatter_tensor(out, t, op=op)
    except Exception as e:  # noqa: BLE001 - the error type is the answer
        return type(e)
    return None


@pytest.fixture
def one_rank_group():
    import disttorch.distributed as dist
    from disttorch.distributed.store import HashStore

    dist.init_process_group(store=HashStore(), rank=0, world_size=1)
    yield dist
    dist.destroy_process_group()


def test_every_op_and_dtype_answers_as_pytorch_with_gloo(one_rank_group):
    dist = one_rank_group
    wrong = []
    for collective in COLLECTIVES:
        for dtype in DTYPES:
            for op in OPS:
                got = call(dist, collective, np.dtype(dtype), getattr(dist.ReduceOp, op))
                want = pytorch_rule(collective, dtype, op)
                if got is not want:
                    wrong.append(f"{collective} {op} {dtype}: {got} where PyTorch gives {want}")
    assert not wrong, "\n".join(wrong)


def test_max_on_complex_names_the_op_and_the_dtype(one_rank_group):
    dist = one_rank_group
    with pytest.raises(
        ValueError, match=r"all_reduce does not support ReduceOp.MAX on complex tensors \(complex64\)"
    ):
        dist.all_reduce(np.ones(3, np.complex64), op=dist.ReduceOp.MAX)
    with pytest.raises(RuntimeError, match=r"reduce does not support ReduceOp.MIN on complex tensors"):
        dist.reduce(np.ones(3, np.complex128), 0, op=dist.ReduceOp.MIN)


@pytest.mark.parity
def test_the_table_is_what_pytorch_answers(torch):
    import torch.distributed as tdist

    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0, world_size=1)
    try:
        for collective in COLLECTIVES:
            for dtype in DTYPES:
                for op in OPS:
                    got = call(tdist, collective, getattr(torch, dtype), getattr(tdist.ReduceOp, op))
                    assert got is pytorch_rule(collective, dtype, op), (collective, dtype, op, got)
    finally:
        tdist.destroy_process_group()


def test_reduce_op_prints_and_has_its_deprecated_name():
    """``ReduceOp.SUM`` prints as PyTorch's ``RedOpType.SUM``; the tutorials' deprecated
    ``dist.reduce_op.SUM`` is ``ReduceOp.SUM`` with PyTorch's ``FutureWarning``."""
    import disttorch.distributed as dist

    assert (str(dist.ReduceOp.SUM), repr(dist.ReduceOp.MAX)) == ("RedOpType.SUM", "<RedOpType.MAX: 4>")
    with pytest.warns(FutureWarning, match="`torch.distributed.reduce_op` is deprecated") as caught:
        assert dist.reduce_op.SUM is dist.ReduceOp.SUM
    assert caught[0].filename == __file__
    with pytest.warns(FutureWarning), pytest.raises(AttributeError, match="NOPE"):
        dist.reduce_op.NOPE


def test_reduce_op_prints_as_pytorchs(torch):
    import disttorch.distributed as dist

    for op in ("SUM", "MAX", "BXOR"):
        ours, theirs = getattr(dist.ReduceOp, op), getattr(torch.distributed.ReduceOp, op)
        assert (str(ours), repr(ours), f"{ours}") == (str(theirs), repr(theirs), f"{theirs}")
