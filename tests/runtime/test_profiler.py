"""torch.profiler: ops and record_function ranges recorded with self/total times, tables,
Chrome traces that load as JSON with named traceEvents, schedules and on_trace_ready,
tensorboard_trace_handler, the legacy torch.autograd.profiler API."""

import gzip
import json
import os
import warnings

import pytest

import disttorch as dt
from disttorch import nn
from disttorch.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def _step(model, opt, x):
    with record_function("forward_pass"):
        loss = model(x).relu().sum()
    loss.backward()
    opt.step()
    opt.zero_grad()


@pytest.fixture
def setup():
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    return model, dt.optim.SGD(model.parameters(), lr=0.1), dt.randn(32, 8)


def test_records_ops_ranges_and_spans(setup):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        _step(*setup)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::linear"].count == 2 and avg["AddmmBackward0"].count == 2  # PyTorch's node name
    assert {
        "forward_pass",
        "Optimizer.step#SGD.step",
        "Optimizer.zero_grad#SGD.zero_grad",
        "aten::tanh",
    } <= set(avg)
    assert not {"backward", "optimizer.step"} & set(avg)  # spans of a trace directory's timeline only
    fwd = avg["forward_pass"]
    assert fwd.cpu_time_total >= avg["aten::linear"].cpu_time_total > 0
    assert fwd.self_cpu_time_total < fwd.cpu_time_total  # ops inside are its children
    events = prof.events()
    lin = next(e for e in events if e.name == "aten::linear")
    assert lin.cpu_parent is not None and lin.cpu_parent.name == "forward_pass"
    assert lin.input_shapes == [[32, 8], [16, 8], [16]]
    shaped = prof.key_averages(group_by_input_shape=True)
    assert sum(e.key == "aten::linear" for e in shaped) == 2  # two input shapes


def _conv_block_shapes(lib):
    """Each op's ``input_shapes`` for a convolution, pooling and norm block (as PyTorch lists them)."""
    lib.manual_seed(0)
    block = lib.nn.Sequential(
        lib.nn.Conv2d(3, 4, 3, bias=False), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.MaxPool2d(2)
    )
    x = lib.randn(2, 3, 8, 8)
    with lib.profiler.profile(record_shapes=True) as prof:
        lib.nn.functional.layer_norm(block(x), (3,)).softmax(1)
    wanted = {"aten::conv2d", "aten::convolution", "aten::_convolution", "aten::batch_norm"}
    wanted |= {"aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::layer_norm", "aten::softmax"}
    return {e.name: e.input_shapes for e in prof.events() if e.name in wanted}


@pytest.mark.parity
def test_record_shapes_lists_one_entry_per_schema_input_as_pytorch(torch):
    ours = _conv_block_shapes(dt)
    assert ours["aten::conv2d"] == [[2, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]
    assert ours == _conv_block_shapes(torch)


def test_table_sort_and_row_limit(setup):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _step(*setup)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    rows = lines[3:-2]
    assert len(rows) == 5 and lines[-1].startswith("Self CPU time total:")
    top_key = max(prof.key_averages(), key=lambda e: e.cpu_time_total).key  # (may hold spaces)
    longest = max(len(e.key) for e in prof.key_averages())  # of every row, shown or not (PyTorch's)
    name_w = min(longest + 4, 55)
    shown = top_key if len(top_key) <= name_w else top_key[: name_w - 3] + "..."  # cut as PyTorch
    assert rows[0].lstrip().startswith(shown + " ")
    self_sorted = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    assert len(self_sorted.splitlines()) == 3 + 3 + 2
    top = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1).splitlines()[1]
    assert top.index("Self CPU %") == name_w + 4  # then two spaces, a 12-wide column
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="bogus")


def test_chrome_trace_is_valid_json(setup, tmp_path):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _step(*setup)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["name"] for e in events}
    assert {"forward_pass", "aten::linear", "AddmmBackward0"} <= names
    for e in events:
        assert {"name", "ph", "pid", "tid"} <= set(e)
        if e["ph"] == "X":
            assert e["dur"] >= 0 and isinstance(e["ts"], float)
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    assert json.loads(gzip.decompress(gz.read_bytes()))["traceEvents"]


def test_schedule_actions_match_pytorch():
    with pytest.warns(UserWarning, match="warmup"):
        schedule(wait=1, warmup=0, active=1)
    s = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    got = [s(i) for i in range(10)]
    A = ProfilerAction
    assert got == [
        A.NONE,
        A.NONE,
        A.WARMUP,
        A.RECORD,
        A.RECORD_AND_SAVE,
        A.NONE,
        A.WARMUP,
        A.RECORD,
        A.RECORD_AND_SAVE,
        A.NONE,
    ]
    with pytest.raises(ValueError, match="active"):
        schedule(wait=0, warmup=0, active=0)


@pytest.mark.parity
def test_schedule_parity_with_pytorch():
    torch = pytest.importorskip("torch")
    for kw in (
        {"wait": 1, "warmup": 1, "active": 3, "repeat": 2, "skip_first": 2},
        {"wait": 2, "warmup": 1, "active": 1, "skip_first_wait": 1},
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")  # its second window (tested below)
def test_schedule_windows_and_tensorboard_handler(setup, tmp_path):
    ready = []
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w0")
    with profile(
        schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
        on_trace_ready=lambda p: (ready.append(p.step_num), handler(p)),
    ) as prof:
        for _ in range(10):
            _step(*setup)
            prof.step()
    assert ready == [4, 8]  # windows of steps 2-3 and 6-7, reported as step() moves on (PyTorch)
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files)
    names = {e["name"] for e in json.loads((tmp_path / files[1]).read_text())["traceEvents"]}
    assert {"ProfilerStep#6", "ProfilerStep#7"} <= names and "ProfilerStep#5" not in names


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")
def test_tensorboard_handler_keeps_windows_exported_in_one_millisecond(tmp_path):
    # one-step windows on a tiny op are exported well within a millisecond of each other:
    # each must keep its own file (PyTorch names them by time.time_ns())
    x = dt.ones(2)
    with profile(
        schedule=schedule(wait=0, warmup=0, active=1, repeat=5),
        on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w"),
    ) as prof:
        for _ in range(5):
            x = x + 1
            prof.step()
    assert len(os.listdir(tmp_path)) == 5


@pytest.mark.parametrize("acc_events", [False, True])
def test_a_second_window_clears_events_unless_accumulated(setup, acc_events, monkeypatch):
    from disttorch.profiler import profiler as module

    monkeypatch.setattr(module, "_warned", set())
    sched = schedule(wait=0, warmup=1, active=1, repeat=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with profile(schedule=sched, acc_events=acc_events) as prof:
            for _ in range(4):
                _step(*setup)
                prof.step()
    steps = [(e.key, e.count) for e in prof.key_averages() if e.key.startswith("ProfilerStep")]
    assert steps == [("ProfilerStep*", 2 if acc_events else 1)]  # one name for every step, as PyTorch's
    cleared = [w for w in caught if str(w.message).startswith("Warning: Profiler clears events")]
    assert len(cleared) == (0 if acc_events else 1)


def test_no_overhead_and_nothing_recorded_outside(setup):
    from disttorch.autograd import function
    from disttorch.utils import trace

    apply_before = function.Function.__dict__["apply"]
    with profile():
        pass
    assert function.Function.__dict__["apply"].__func__ is apply_before.__func__
    assert not trace._sinks
    with record_function("outside"):  # no profiler: a no-op
        pass
    with profile() as outer, pytest.raises(RuntimeError, match="already running"), profile():
        pass
    assert outer is not None


def test_profiler_enabled_and_disable_profiler():
    """Lightning's PyTorchProfiler closes a profiler left open with these, and falls back to
    ``profiler._default_schedule_fn`` (record every step)."""
    from disttorch.autograd import function
    from disttorch.profiler import ProfilerAction
    from disttorch.profiler.profiler import _default_schedule_fn

    assert not dt.autograd._profiler_enabled()
    apply_before = function.Function.__dict__["apply"].__func__
    prof = profile()
    prof.__enter__()
    assert dt.autograd._profiler_enabled()
    dt.autograd._disable_profiler()
    assert not dt.autograd._profiler_enabled()
    assert function.Function.__dict__["apply"].__func__ is apply_before
    dt.autograd._disable_profiler()  # none running: nothing to do
    assert _default_schedule_fn(7) is ProfilerAction.RECORD


def test_legacy_autograd_profiler(setup):
    with (
        dt.autograd.profiler.profile(record_shapes=True) as prof,
        dt.autograd.profiler.record_function("block"),
    ):
        _step(*setup)
    keys = {e.key for e in prof.key_averages()}
    assert {"block", "aten::linear"} <= keys
    assert "Self CPU time total" in prof.key_averages().table(sort_by="self_cpu_time_total")
    with dt.autograd.profiler.profile() as empty:  # nothing recorded: an empty table, as PyTorch's
        pass
    assert empty.key_averages().table() == "" and empty.table() == ""

    @record_function("decorated")
    def f(x):
        return x * 2

    with profile() as p2:
        f(dt.ones(2))
    assert "decorated" in {e.key for e in p2.key_averages()}


def test_with_flops_counts_matrix_products():
    lin, conv = nn.Linear(8, 4), nn.Conv2d(3, 5, 3)
    x, im = dt.randn(16, 8), dt.randn(2, 3, 6, 6)
    with profile(with_flops=True) as prof:
        lin(x)
        conv(im)
        _ = x @ x.t()
        _ = x + 1
        _ = dt.cat([x, x], 1)  # an op whose first argument is not a tensor
    flops = {e.key: e.flops for e in prof.key_averages()}
    assert flops["aten::linear"] == 2 * 16 * 4 * 8
    assert flops["aten::conv2d"] == 2 * (2 * 5 * 4 * 4) * (3 * 3 * 3)
    assert flops["aten::matmul"] == 2 * 16 * 16 * 8 and flops["aten::add"] == 0
    assert "Total MFLOPs" in prof.key_averages().table()


@pytest.mark.parity
def test_flops_match_pytorch():
    torch = pytest.importorskip("torch")
    counts = []
    for lib, names in (
        (dt, ("aten::linear", "aten::conv2d", "aten::matmul")),
        (torch, ("aten::addmm", "aten::conv2d", "aten::mm")),
    ):
        lib.manual_seed(0)
        lin, conv = lib.nn.Linear(8, 4), lib.nn.Conv2d(3, 5, 3, padding=1, stride=2)
        x, im = lib.randn(16, 8), lib.randn(2, 3, 7, 7)
        with lib.profiler.profile(with_flops=True) as prof:
            lin(x)
            conv(im)
            _ = lib.mm(x, x.t())
        got = {e.key: e.flops for e in prof.key_averages()}
        counts.append([got[n] for n in names])
    assert counts[0] == counts[1]


def test_record_function_operators_open_and_close_a_range():
    """``torch.ops.profiler._record_function_enter``/``_exit``, which code traced through
    ``record_function`` calls, label a range as ``record_function`` does."""
    with dt.autograd.profiler.profile() as prof:
        handle = dt.ops.profiler._record_function_enter("labelled")
        dt.randn(8) * 2
        dt.ops.profiler._record_function_exit(handle)
    assert [e.name for e in prof.function_events].count("labelled") == 1
    with pytest.raises(TypeError, match="expected the handle"):
        dt.ops.profiler._record_function_exit(3)


def test_operators_called_on_fx_proxies_are_recorded():
    """``torch.ops`` operators hand fx proxies to ``__torch_function__``, as PyTorch's do: a
    traced call becomes a node whose target is the operator."""

    def f(x):
        return dt.ops.aten.relu(x) + 1

    gm = dt.fx.symbolic_trace(f)
    assert dt.ops.aten.relu in [n.target for n in gm.graph.nodes if n.op == "call_function"]
    x = dt.randn(5)
    assert dt.equal(gm(x), f(x))


@pytest.mark.parity
def test_forward_ops_carry_the_names_pytorch_records():
    """A script that reads ``key_averages()`` rows by name (``aten::linear``) finds them."""
    torch = pytest.importorskip("torch")
    names = []
    for lib in (dt, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(64, 5)
        )
        x = lib.randn(2, 3, 6, 6)
        with lib.profiler.profile() as prof:
            out = model(x).tanh().softmax(1)
            lib.nn.functional.cross_entropy(out, lib.tensor([0, 1]))
        names.append({e.key for e in prof.key_averages() if e.key.startswith("aten::")})
    ours, theirs = names
    assert {"aten::conv2d", "aten::linear", "aten::relu", "aten::tanh", "aten::softmax"} <= ours
    assert "aten::cross_entropy_loss" in ours
    assert ours <= theirs


#: what PyTorch's kernels call inside that disttorch has no event for: allocations, views
_UNSEEN = {
    "aten::empty",
    "aten::empty_like",
    "aten::empty_strided",
    "aten::resize_",
    "aten::as_strided_",
    "aten::view",
}


def _op_trees(lib):
    """Each top-level op event of a small CNN's forward, with the ops under it (allocations
    and views left out), as nested names."""

    def tree(e):
        # PyTorch's calls inside branch (dropout's), or pick a kernel by CPU and state (the
        # convolution's mkldnn or slow path): disttorch shows one row
        if e.name.endswith("dropout") or e.name == "aten::_convolution":
            return e.name
        kids = [tree(c) for c in e.cpu_children if c.name not in _UNSEEN]
        return e.name + (f"({','.join(kids)})" if kids else "")

    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.GroupNorm(2, 4),
        nn.AdaptiveAvgPool2d(2),
        nn.ConvTranspose2d(4, 4, 1),
        nn.LayerNorm(2),
    ).eval()
    x, y = lib.randn(2, 3, 6, 6), lib.zeros(2, 2, 2, dtype=lib.long)
    with lib.profiler.profile() as prof:
        F.nll_loss(F.dropout2d(F.dropout(model(x)).log_softmax(1)), y)
    return [tree(e) for e in prof.events() if e.cpu_parent is None and e.name.startswith("aten::")]


def test_ops_nest_the_operators_pytorch_calls():
    trees = _op_trees(dt)
    assert "aten::relu(aten::clamp_min)" in trees
    assert "aten::batch_norm(aten::_batch_norm_impl_index(aten::native_batch_norm))" in trees


@pytest.mark.parity
def test_op_trees_match_pytorch():
    torch = pytest.importorskip("torch")
    assert _op_trees(dt) == _op_trees(torch)


_BACKWARD_NODE = ("Backward0", "Backward1", "torch::autograd::AccumulateGrad")
_EVALUATE = "autograd::engine::evaluate_function: "


def _step_rows(lib):
    """``{name: count}`` of the events of two training steps (a small MLP, then a CNN with
    conv, pooling, dropout and flatten; nll_loss of log_softmax, SGD with momentum) that are
    neither inside a backward node (nor the engine's ops after one) nor inside the optimiser's
    step: the ops a backward node runs, and the optimiser's per-parameter updates, are
    disttorch's own."""
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    cnn = nn.Sequential(
        nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(8, 3)
    )
    steps = [
        (mlp, lib.optim.SGD(mlp.parameters(), lr=0.1), lib.randn(5, 4)),
        (cnn, lib.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9), lib.randn(5, 1, 6, 6)),
    ]
    y = lib.tensor([0, 1, 2, 1, 0])
    with lib.profiler.profile() as prof:
        for model, opt, x in steps:
            opt.zero_grad()
            F.nll_loss(model(x).log_softmax(1), y).backward()
            opt.step()
    rows: dict = {}
    for e in prof.events():
        above, up = [], e.cpu_parent
        while up is not None:
            above.append(up.name)
            up = up.cpu_parent
        in_node = any(n.endswith(_BACKWARD_NODE) and not n.startswith(_EVALUATE) for n in above)
        engine_op = bool(above) and above[0].startswith(_EVALUATE) and not above[0].endswith(e.name)
        if not (in_node or engine_op or any(n.startswith("Optimizer.step#") for n in above)):
            rows[e.name] = rows.get(e.name, 0) + 1
    return rows


def test_training_step_rows_are_pytorchs():
    rows = _step_rows(dt)
    assert rows["autograd::engine::evaluate_function: AddmmBackward0"] == rows["AddmmBackward0"] == 3
    assert rows["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"] == 8
    assert rows["torch::autograd::AccumulateGrad"] == 8 and rows["aten::ones_like"] == 2
    assert rows["Optimizer.step#SGD.step"] == rows["Optimizer.zero_grad#SGD.zero_grad"] == 2
    assert rows["aten::flatten"] == 1 and rows["aten::nll_loss_forward"] == 2
    assert "backward" not in rows and "optimizer.step" not in rows


@pytest.mark.parity
def test_training_step_rows_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _step_rows(dt), _step_rows(torch)
    assert {name: theirs.get(name) for name in ours} == ours  # every row disttorch records, by count


def _inplace_rows(lib):
    """``{name: count}`` of in-place methods and operators, recorded and not, and a batch
    norm layer's count of batches (``num_batches_tracked.add_(1)`` in PyTorch)."""
    lib.manual_seed(0)
    leaf, b = lib.randn(3, requires_grad=True), lib.randn(3)
    bn = lib.nn.BatchNorm1d(3)
    with lib.profiler.profile() as prof:
        a = leaf * 1
        a.add_(1)
        a += b
        a.mul_(2).relu_()
        with lib.no_grad():
            b.zero_()
            b.clamp_(0, 1)
        bn(lib.ones(2, 3))
    rows: dict = {}
    for e in prof.events():
        if e.cpu_parent is None:  # an in-place op with the operators it dispatches to
            kids = [c.name for c in e.cpu_children if c.name != "aten::to"]  # PyTorch's scalars made tensors
            kids = ",".join(kids) if e.name.endswith("_") else ""
            key = f"{e.name}({kids})" if kids else e.name
            rows[key] = rows.get(key, 0) + 1
    return rows


def test_inplace_methods_are_one_row_each():
    rows = _inplace_rows(dt)
    assert rows["aten::add_"] == 3 and rows["aten::mul_"] == rows["aten::clamp_"] == rows["aten::zero_"] == 1
    assert rows["aten::relu_(aten::clamp_min_)"] == 1
    assert "aten::add" not in rows and "aten::relu" not in rows  # the computation is the in-place op's


@pytest.mark.parity
def test_inplace_rows_match_pytorch(torch):
    ours, theirs = _inplace_rows(dt), _inplace_rows(torch)
    assert {name: theirs.get(name) for name in ours} == ours


def test_cuda_activity_warns_and_is_dropped_as_on_a_cpu_build():
    with pytest.warns(UserWarning, match="^CUDA is not available, disabling CUDA profiling$"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            _ = dt.ones(2) + 1
    assert "aten::add" in {e.key for e in prof.key_averages()}
    with (
        pytest.warns(UserWarning, match="disabling CUDA"),
        pytest.raises(AssertionError, match="No activities"),
    ):
        with profile(activities=[ProfilerActivity.CUDA]):
            pass


def test_cuda_activity_warns_when_warm_up_readies_the_window():
    sched = schedule(wait=1, warmup=1, active=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched) as prof:
            assert not seen
            prof.step()  # entering warm-up: PyTorch's prepare_trace warns here
            assert [str(w.message) for w in seen] == ["CUDA is not available, disabling CUDA profiling"]
            prof.step()
    assert len(seen) == 1
