"""Bad arguments to collectives raise what PyTorch 2.13's gloo process groups raise (the
exception class and the message's words, taken from a 2-rank ``torchrun`` job), on every rank
before anything is sent, and the group goes on working."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

# (what the call does, its exception class, the start of PyTorch's message)
EXPECTED = [
    ("broadcast src=3", "RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: 3"),
    ("broadcast src=-1", "RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: -1"),
    ("broadcast group_src=3", "RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: 3"),
    ("subgroup broadcast src=3", "ValueError", "Global rank 3 is not part of group"),
    ("reduce dst=3", "RuntimeError", "ProcessGroupGloo::reduce: invalid root rank: 3"),
    (
        "all_gather of 3 outputs",
        "RuntimeError",
        "ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length 2, got 3)",
    ),
    (
        "all_gather of a wrong size",
        "RuntimeError",
        "ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (3), got (4))",
    ),
    ("all_gather of a tensor", "TypeError", "Invalid function argument. Expected parameter `tensor_list`"),
    ("all_gather of float64", "ValueError", "Invalid usage of tensors with different dtypes"),
    (
        "gather of 3 outputs",
        "RuntimeError",
        "ProcessGroupGloo::gather: Incorrect output list size 3. Output list size should be 1, "
        "same as size of the process group.",
    ),
    (
        "scatter of 3 inputs",
        "RuntimeError",
        "ProcessGroupGloo::scatter: Incorrect input list size 3. Input list size should be 1, "
        "same as size of the process group.",
    ),
    ("reduce_scatter of 3 inputs", "RuntimeError", "invalid input tensor list size, must be world size"),
    (
        "all_to_all of 3 inputs",
        "RuntimeError",
        "ProcessGroupGloo::alltoall: input tensor list size 3 does not match world size 2",
    ),
    ("broadcast_object_list src=3", "RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: 3"),
    ("gather_object dst=3", "RuntimeError", "ProcessGroupGloo::gather: invalid root rank: 3"),
    ("scatter_object_list src=3", "RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: 3"),
    ("all_gather_object into 1 entry", "IndexError", "list assignment index out of range"),
]


def argument_errors(rank: int, ws: int) -> tuple[list, list, list]:
    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    sub = dist.new_group([0, 1])
    alone = [dist.new_group([r]) for r in range(ws)][rank]  # the root's list is checked on the root only
    t = np.zeros(3, np.float32)

    def zeros(n: int, k: int = 3, dtype=np.float32) -> list:
        return [np.zeros(k, dtype) for _ in range(n)]

    calls = {
        "broadcast src=3": lambda: dist.broadcast(t, src=3),
        "broadcast src=-1": lambda: dist.broadcast(t, src=-1),
        "broadcast group_src=3": lambda: dist.broadcast(t, group_src=3, group=sub),
        "subgroup broadcast src=3": lambda: dist.broadcast(t, src=3, group=sub),
        "reduce dst=3": lambda: dist.reduce(t, dst=3),
        "all_gather of 3 outputs": lambda: dist.all_gather(zeros(3), t),
        "all_gather of a wrong size": lambda: dist.all_gather(zeros(2, 4), t),
        "all_gather of a tensor": lambda: dist.all_gather(np.zeros(3, np.float32), t),
        "all_gather of float64": lambda: dist.all_gather(zeros(2, 3, np.float64), t),
        "gather of 3 outputs": lambda: dist.gather(t, zeros(3), group=alone, group_dst=0),
        "scatter of 3 inputs": lambda: dist.scatter(t, zeros(3), group=alone, group_src=0),
        "reduce_scatter of 3 inputs": lambda: dist.reduce_scatter(t, zeros(3)),
        "all_to_all of 3 inputs": lambda: dist.all_to_all(zeros(3), zeros(3)),
        "broadcast_object_list src=3": lambda: dist.broadcast_object_list([None], src=3),
        "gather_object dst=3": lambda: dist.gather_object(rank, None, dst=3),
        "scatter_object_list src=3": lambda: dist.scatter_object_list([None], None, src=3),
        "all_gather_object into 1 entry": lambda: dist.all_gather_object([None], rank),
    }
    errors = []
    for name, call in calls.items():
        try:
            call()
            errors.append((name, "no error", ""))
        except Exception as e:  # noqa: BLE001 - the test compares every kind
            errors.append((name, type(e).__name__, str(e)))
    longer = [None, None, "kept"]
    dist.all_gather_object(longer, rank)  # a longer list keeps its extra entries, as PyTorch's
    out = np.zeros(3, np.float32) + rank
    dist.broadcast(out, src=1)  # the group still works after every refusal
    dist.destroy_process_group()
    return errors, longer, out.tolist()


@pytest.mark.timeout(60)
def test_collective_argument_errors_are_those_of_gloo():
    for rank, (errors, longer, out) in enumerate(run_ranks(argument_errors, 2, timeout=45)):
        assert [(n, kind) for n, kind, _ in errors] == [(n, kind) for n, kind, _ in EXPECTED], rank
        for (name, _, message), (_, _, want) in zip(errors, EXPECTED):
            assert message.startswith(want), (rank, name, message)
        assert longer == [0, 1, "kept"] and out == [1.0] * 3
