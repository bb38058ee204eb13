"""``torch.distributed.tensor.debug.CommDebugMode`` on real processes: collectives counted by
PyTorch's operator names, in total, by kind and by module (forward and backward), and the
tracing table, log file and JSON dump as PyTorch 2.13 prints them for a tensor-parallel MLP."""

import contextlib
import importlib.util
import io
import json
import os

import pytest

from dist_helpers import run_ranks


def comm_debug_run(rank: int, world: int, lib: str, out_dir: str) -> dict:
    """What rank 0 sees of CommDebugMode around a tensor-parallel MLP's forward and backward,
    plain collectives, functional collectives and DTensor layouts."""
    if lib == "torch":
        import torch
        import torch.distributed as dist
        import torch.distributed._functional_collectives as funcol
        from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
        from torch.distributed.tensor.debug import CommDebugMode, visualize_sharding
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

        dist.init_process_group("gloo")
    else:
        import disttorch as torch
        import disttorch.distributed as dist
        import disttorch.distributed._functional_collectives as funcol
        from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
        from disttorch.distributed.tensor.debug import CommDebugMode, visualize_sharding
        from disttorch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

        dist.init_process_group()
    nn = torch.nn

    class MLPModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.net1 = nn.Linear(10, 16)
            self.relu = nn.ReLU()
            self.net2 = nn.Linear(16, 10)

        def forward(self, x):
            return self.net2(self.relu(self.net1(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(10, 10)
            self.mlp = MLPModule()

        def forward(self, x):
            return self.mlp(self.proj(x))

    mesh = dist.init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = parallelize_module(Net(), mesh, {"mlp.net1": ColwiseParallel(), "mlp.net2": RowwiseParallel()})
    x = torch.rand(8, 10)
    seen = {}
    comm_mode = CommDebugMode()
    with comm_mode as entered:
        model(x).sum().backward()
    seen["entered"] = entered is comm_mode
    seen["table0"] = comm_mode.generate_comm_debug_tracing_table(noise_level=0)
    seen["table1"] = comm_mode.generate_comm_debug_tracing_table(noise_level=1)
    seen["counts"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    seen["counts_repr"] = repr(comm_mode.get_comm_counts())
    seen["key"] = comm_mode.get_comm_counts()[torch.ops.c10d_functional.all_reduce]
    seen["total"], seen["repr"] = comm_mode.get_total_counts(), repr(comm_mode)
    seen["sharding"] = str(comm_mode.get_sharding_info())
    seen["params"] = {
        m: {n: type(p).__name__ for n, p in d.items()} for m, d in comm_mode.get_parameter_info().items()
    }
    log, dump = os.path.join(out_dir, f"log{rank}.txt"), os.path.join(out_dir, f"dump{rank}.json")
    comm_mode.log_comm_debug_tracing_table_to_file(file_name=log, noise_level=0)
    comm_mode.generate_json_dump(file_name=dump, noise_level=1)
    with open(log) as f:
        seen["log"] = f.read()
    with open(dump) as f:
        seen["json"] = json.load(f)

    t = torch.ones(4)
    with comm_mode:
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        dist.all_gather([torch.zeros(4) for _ in range(world)], t)
        dist.all_gather_into_tensor(torch.zeros(4 * world), t)
        dist.reduce_scatter_tensor(torch.zeros(4), torch.ones(4 * world))
        dist.all_gather_object([None] * world, {"rank": rank})
        dist.barrier()
    seen["c10d"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    with comm_mode:
        funcol.all_reduce(t, "sum", mesh)
        funcol.all_gather_tensor(t, 0, mesh)
        funcol.reduce_scatter_tensor(torch.ones(4 * world), "sum", 0, mesh)
        funcol.all_to_all_single(torch.ones(2 * world), None, None, mesh)
    seen["funcol"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    layouts = {}
    with comm_mode:
        d = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)])
    layouts["distribute Shard(0)"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    with comm_mode:
        distribute_tensor(torch.ones(4, 4), mesh, [Replicate()])
    layouts["distribute Replicate()"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    with comm_mode:
        d.redistribute(mesh, [Shard(1)]).redistribute(mesh, [Replicate()])
    layouts["S(0) -> S(1) -> R"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    with comm_mode:
        DTensor.from_local(torch.ones(4, 4), mesh, [Partial()]).redistribute(mesh, [Shard(0)])
    layouts["P -> S(0)"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
    seen["layouts"] = layouts
    shown = io.StringIO()
    columns, rows = (
        distribute_tensor(torch.ones(8, 6), mesh, [Shard(1)]),
        distribute_tensor(torch.ones(5), mesh, [Shard(0)]),
    )
    try:  # PyTorch's table with the tabulate package (rank 0 prints); without it, its ValueError
        with contextlib.redirect_stdout(shown):
            visualize_sharding(columns)
            visualize_sharding(rows)
        seen["visualize"] = shown.getvalue()
    except ValueError as e:
        seen["visualize"] = str(e)
    try:  # as in PyTorch, the second forward in one block unwinds the module stack twice
        with comm_mode:
            model(x)
            model(x)
    except IndexError as e:
        seen["twice"] = type(e).__name__
    dist.destroy_process_group()
    return seen


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    return run_ranks(comm_debug_run, 2, args=("disttorch", str(tmp_path_factory.mktemp("comm"))), timeout=60)[
        0
    ]


# PyTorch 2.13's log of the run above (noise level 0); the table is the same with colours
LOG = """Global
  FORWARD PASS
    *c10d_functional.all_reduce: 1
  BACKWARD PASS
    *c10d_functional.all_reduce: 1
    Net
      FORWARD PASS
        *c10d_functional.all_reduce: 1
      BACKWARD PASS
        *c10d_functional.all_reduce: 1
        Net.proj
        Net.mlp
          FORWARD PASS
            *c10d_functional.all_reduce: 1
          BACKWARD PASS
            *c10d_functional.all_reduce: 1
            Net.mlp.net1
              BACKWARD PASS
                *c10d_functional.all_reduce: 1
            Net.mlp.relu
            Net.mlp.net2
              FORWARD PASS
                *c10d_functional.all_reduce: 1
"""
ALL_REDUCE = [["c10d_functional.all_reduce", 1]]


def _colour(log: str) -> str:
    return "".join(
        f"\033[1;33m{line}\033[0m\n" if line.lstrip().startswith("*") else f"{line}\n"
        for line in log.splitlines()
    )


@pytest.mark.timeout(90)
def test_counts_by_kind_and_total_as_pytorch(seen):
    assert seen["entered"] and seen["total"] == 2 and seen["key"] == 2
    assert seen["counts"] == {"c10d_functional.all_reduce": 2}
    assert seen["counts_repr"] == (
        "defaultdict(<class 'int'>, {<OpOverloadPacket(op='c10d_functional.all_reduce')>: 2})"
    )
    assert seen["repr"] == "CommDebugMode(get_total_counts()=2)"
    assert seen["c10d"] == {
        "c10d.allreduce_": 1,
        "c10d.broadcast_": 1,
        "c10d.allgather_": 3,  # all_gather, and all_gather_object's two
        "c10d._allgather_base_": 1,
        "c10d._reduce_scatter_base_": 1,
    }
    assert seen["funcol"] == {
        f"c10d_functional.{op}": 1
        for op in ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all_single")
    }
    assert seen["layouts"] == {
        "distribute Shard(0)": {"c10d.scatter_": 1},
        "distribute Replicate()": {"c10d.broadcast_": 1},
        "S(0) -> S(1) -> R": {"c10d_functional.all_gather_into_tensor": 2},
        "P -> S(0)": {"c10d_functional.reduce_scatter_tensor": 1},
    }
    assert seen["twice"] == "IndexError"


@pytest.mark.timeout(90)
def test_visualize_sharding_prints_pytorchs_table(seen):
    if importlib.util.find_spec("tabulate") is None:
        assert seen["visualize"] == "`visualize_sharding` requires either `rich` or `tabulate`."
        return
    assert seen["visualize"] == (
        "         Col 0-2    Col 3-5\n-------  ---------  ---------\nRow 0-7  cpu:0      cpu:1\n"
        "         Col 0-0\n-------  ---------\nRow 0-2  cpu:0\nRow 3-4  cpu:1\n"
    )


@pytest.mark.timeout(90)
def test_module_tracing_table_log_and_parameter_info_as_pytorch(seen):
    assert seen["log"] == LOG
    assert seen["table0"] == _colour(LOG)
    assert seen["sharding"] == (
        "{'Net.mlp.net1.weight': (Shard(dim=0),), 'Net.mlp.net1.bias': (Shard(dim=0),), "
        "'Net.mlp.net2.weight': (Shard(dim=1),), 'Net.mlp.net2.bias': (Replicate(),)}"
    )
    assert seen["params"] == {
        "Net.proj": {"weight": "Tensor", "bias": "Tensor"},
        "Net.mlp.net1": {"weight": "DTensor", "bias": "DTensor"},
        "Net.mlp.net2": {"weight": "DTensor", "bias": "DTensor"},
    }
    table1 = seen["table1"]  # noise level 1: module types and DTensor parameters' placements
    assert "    Net\n    *module type: class '_dist_test_0.comm_debug_run.locals.Net'\n" in table1
    assert (
        "            Net.mlp.net2\n            *module type: class 'disttorch.nn.modules.linear.Linear'\n"
        "            *Parameter List\n             *weight: (Shard(dim=1),)\n             *bias: (Replicate(),)\n"
    ) in table1
    assert (  # and each DTensor operation, with its arguments' shapes and placements
        "\033[1;33m                **aten.addmm.default\033[0m\n"
        "\033[1;31m                  shape: [disttorch.Size([10]), disttorch.Size([8, 16]), disttorch.Size([16, 10])]\033[0m\n"
        "\033[1;31m                  sharding: [(Replicate(),), (Shard(dim=1),), (Shard(dim=0),)]\033[0m\n"
    ) in table1


def _module(fqn, module_type="", parameters=(), children=(), forward=(), backward=(), ops=((), ())):
    return {
        "fqn": fqn,
        "module_type": module_type,
        "parameters": [list(p) for p in parameters],
        "children": list(children),
        "collectives_forward": list(forward),
        "collectives_backward": list(backward),
        "operations_forward": list(ops[0]),
        "operations_backward": list(ops[1]),
        "operations_checkpointing": [],
    }


def _op(name, is_bw, *args):
    """One DTensor operation as PyTorch's JSON dump lists it: (shape, placements) per argument."""
    return {
        "name": f"aten.{name}",
        "input_shape": [f"disttorch.Size({list(shape)})" for shape, _ in args],
        "input_sharding": [placements for _, placements in args],
        "device_mesh": "DeviceMesh((2,), 'cpu', stride=(1,))",
        "is_bw": is_bw,
        "is_activation_checkpointing": False,
    }


S0, S1, R = "(Shard(dim=0),)", "(Shard(dim=1),)", "(Replicate(),)"
# PyTorch 2.13's operations of the column- and row-parallel layers at noise level 1: addmm
# forward; backward the input's mm, the weight's mm and the bias's sum
NET1_OPS = (
    [_op("addmm.default", False, ((16,), S0), ((8, 10), R), ((10, 16), S1))],
    [
        _op("mm.default", True, ((8, 16), S1), ((16, 10), S0)),
        _op("mm.default", True, ((16, 8), S0), ((8, 10), R)),
        _op("sum.dim_IntList", True, ((8, 16), S1)),
    ],
)
NET2_OPS = (
    [_op("addmm.default", False, ((10,), R), ((8, 16), S1), ((16, 10), S0))],
    [
        _op("mm.default", True, ((8, 10), R), ((10, 16), S1)),
        _op("mm.default", True, ((10, 8), R), ((8, 16), S1)),
        _op("sum.dim_IntList", True, ((8, 10), R)),
    ],
)


@pytest.mark.timeout(90)
def test_json_dump_holds_pytorchs_module_tree(seen):
    linear = "class 'disttorch.nn.modules.linear.Linear'"
    mlp = _module(
        "Net.mlp",
        "class '_dist_test_0.comm_debug_run.locals.MLPModule'",
        children=[
            _module(
                "Net.mlp.net1",
                linear,
                [("weight", "(Shard(dim=0),)"), ("bias", "(Shard(dim=0),)")],
                backward=ALL_REDUCE,
                ops=NET1_OPS,
            ),
            _module("Net.mlp.relu", "class 'disttorch.nn.modules.activation.ReLU'"),
            _module(
                "Net.mlp.net2",
                linear,
                [("weight", "(Shard(dim=1),)"), ("bias", "(Replicate(),)")],
                forward=ALL_REDUCE,
                ops=NET2_OPS,
            ),
        ],
        forward=ALL_REDUCE,
        backward=ALL_REDUCE,
    )
    net = _module(
        "Net",
        "class '_dist_test_0.comm_debug_run.locals.Net'",
        children=[_module("Net.proj", linear), mlp],
        forward=ALL_REDUCE,
        backward=ALL_REDUCE,
    )
    assert seen["json"] == _module("Global", children=[net], forward=ALL_REDUCE, backward=ALL_REDUCE)
