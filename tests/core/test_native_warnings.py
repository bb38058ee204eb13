"""Warnings PyTorch raises from C++ (and softmax's implicit dim): at the program's line,
with PyTorch's text, once per process where PyTorch warns once."""

import os
import warnings

import pytest

import disttorch as dt
from disttorch import _native_warnings


def _per_line_warnings(lib):
    """(first words, file) of each warning of calls that PyTorch warns about at every line."""
    x, out = lib.ones(3), lib.empty(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.add(x, x, out=out)
        lib.ones(1).std(), lib.ones(1).var(), lib.var_mean(lib.ones(1)), lib.std_mean(lib.ones(2, 1), 1)
        lib.ones(2).std()  # two elements: no warning
        lib.nn.functional.softmax(x)
    return [(str(w.message), os.path.basename(w.filename)) for w in caught]


def test_per_line_warnings_name_the_callers_line():
    got = _per_line_warnings(dt)
    assert [m.split("(")[0] for m, _ in got] == [
        "An output with one or more elements was resized since it had shape [2], which does not "
        "match the required output shape [3]. This behavior is deprecated, and in a future PyTorch "
        "release outputs will not be resized unless they have zero elements. You can explicitly "
        "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_",
        "std",
        "var",
        "var_mean",
        "std_mean",
        "Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an argument.",
    ]
    assert {f for _, f in got} == {"test_native_warnings.py"}


@pytest.mark.parity
def test_per_line_warnings_as_pytorch(torch):
    assert _per_line_warnings(dt) == _per_line_warnings(torch)


def test_transposing_other_than_matrices_warns_once_per_kind(monkeypatch):
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            dt.ones(3).T, dt.ones(2, 3, 4).T, dt.tensor(1.0).T, dt.ones(2, 3).T
    assert [str(w.message).split(" ")[:3] for w in caught] == [
        ["The", "use", "of"],
        ["Tensor.T", "is", "deprecated"],
    ]
    assert dt.ones(2, 3, 4).T.shape == (4, 3, 2)


def _python_warnings(lib):
    """(text, file) of the warnings PyTorch raises in Python for legacy calls and arguments."""
    theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = lib.nn.functional.affine_grid(theta, (1, 1, 2, 2))
        lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), grid)
        lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]), size_average=False)
        lib.nn.MSELoss(reduce=False)
        lib.nn.functional.mse_loss(lib.ones(3, 1), lib.ones(3))
        lib.range(0, 2)
        lib.nn.functional.upsample(lib.ones(1, 1, 2, 2), scale_factor=2)
        lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        lib.meshgrid(lib.arange(2), lib.arange(2))
        lib.nn.Linear(1, 1).state_dict(None, "x.")
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        lib.optim.lr_scheduler.StepLR(opt, 1).step()
        lib.utils.data.DataLoader([1], num_workers=os.cpu_count() + 1)
        q, pad = lib.ones(2, 1, 4), lib.tensor([[False, True]])
        lib.nn.MultiheadAttention(4, 2)(q, q, q, key_padding_mask=pad, attn_mask=lib.zeros(2, 2))
    return [(str(w.message), os.path.basename(w.filename)) for w in caught]


@pytest.mark.parity
def test_python_warnings_of_legacy_calls_as_pytorchs(torch):
    ours, theirs = _python_warnings(dt), _python_warnings(torch)
    assert [m.replace("disttorch.Size", "torch.Size") for m, _ in ours] == [m for m, _ in theirs]
    here = os.path.basename(__file__)
    at_caller = [i for i, (_, f) in enumerate(theirs) if f == here]
    assert at_caller == [i for i, (_, f) in enumerate(ours) if f == here] and len(at_caller) == 8


def _deprecated_once(lib):
    """The texts of the once-per-process warnings of deprecated calls, each call made twice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            lib.chain_matmul(lib.ones(2, 2), lib.ones(2, 2))
            lib.lu(lib.eye(2))
            lib.stft(lib.ones(64), 16, return_complex=True)
            lib.set_default_tensor_type(lib.FloatTensor)
            lib.cholesky(lib.eye(2)), lib.qr(lib.eye(2))
            float(lib.ones(1, requires_grad=True))
    return [str(w.message) for w in caught if w.category is UserWarning]


def test_deprecated_calls_warn_once_with_pytorchs_text(monkeypatch):
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    monkeypatch.setattr(dt._tensor, "_scalar_warning", [True])
    got = _deprecated_once(dt)
    assert [m.split(" ")[0] for m in got] == [
        "torch.chain_matmul",
        "torch.lu",
        "A",
        "torch.set_default_tensor_type()",
        "torch.cholesky",
        "torch.qr",
        "Converting",
    ]
    assert all("(Triggered internally at /__w/pytorch/pytorch/" in m for m in got)


@pytest.mark.parity
def test_deprecated_call_warnings_as_pytorch(torch, monkeypatch):
    """PyTorch's are once per process: those it still gives here must be ours word for word."""
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    monkeypatch.setattr(dt._tensor, "_scalar_warning", [True])  # (an earlier test may have used it)
    theirs = [m.replace("torch.", "") for m in _deprecated_once(torch)]
    ours = [m.replace("torch.", "") for m in _deprecated_once(dt)]
    assert set(theirs) <= set(ours)


def _sparse_warnings(lib):
    """The warnings of the first sparse constructions: COO and CSR without ``check_invariants``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            lib.sparse_coo_tensor(lib.tensor([[0], [1]]), lib.tensor([1.0]), (2, 2))
            lib.sparse_csr_tensor(lib.tensor([0, 1, 1]), lib.tensor([0]), lib.tensor([1.0]), (2, 2))
    return [str(w.message) for w in caught]


@pytest.fixture
def unchosen_invariant_checks():
    """The sparse-invariants setting as at start-up (never chosen), restored afterwards."""
    from disttorch.ops import sparse

    saved = list(sparse.INVARIANT_CHECKS)
    sparse.INVARIANT_CHECKS[:] = [False, False]
    yield
    sparse.INVARIANT_CHECKS[:] = saved


@pytest.mark.usefixtures("unchosen_invariant_checks")
def test_sparse_constructors_warn_once_until_the_program_chooses(monkeypatch):
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    got = _sparse_warnings(dt)
    assert [m.split(" ")[:2] for m in got] == [["Sparse", "invariant"], ["Sparse", "CSR"]]
    assert not dt.sparse.check_sparse_tensor_invariants.is_enabled()
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    with dt.sparse.check_sparse_tensor_invariants():
        assert dt.sparse.check_sparse_tensor_invariants.is_enabled()
    assert not dt.sparse.check_sparse_tensor_invariants.is_enabled()
    assert [m.split(" ")[:2] for m in _sparse_warnings(dt)] == [["Sparse", "CSR"]]  # chosen: no warning


@pytest.mark.parity
@pytest.mark.usefixtures("unchosen_invariant_checks")
def test_sparse_constructor_warnings_as_pytorch(torch, monkeypatch):
    """PyTorch's are once per process: those it still gives here must be ours word for word."""
    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    monkeypatch.setattr(dt._tensor, "_scalar_warning", [True])  # (an earlier test may have used it)
    assert set(_sparse_warnings(torch)) <= set(_sparse_warnings(dt))


@pytest.mark.parity
def test_checkpoint_without_use_reentrant_warns_pytorchs_text(torch):
    def texts(lib):
        x = lib.ones(1, 4, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint(lib.nn.Linear(4, 4), x)
            lib.utils.checkpoint.checkpoint_sequential(lib.nn.Sequential(lib.nn.Linear(4, 4)), 1, x)
        return [str(w.message) for w in caught if "use_reentrant" in str(w.message)]

    assert texts(dt) == texts(torch) and len(texts(dt)) == 2


def test_checkpoint_warning_points_at_one_line_for_every_caller():
    # PyTorch's points into its compiler's disable wrapper: shown once per process, not
    # once per calling line (a DenseNet checkpointing each layer from one line showed it once)
    import linecache

    x = dt.ones(1, 4, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt.utils.checkpoint.checkpoint(dt.nn.Linear(4, 4), x)
        dt.utils.checkpoint.checkpoint(dt.nn.Linear(4, 4), x)
    places = {(w.filename, w.lineno) for w in caught if "use_reentrant" in str(w.message)}
    assert len(caught) == 2 and len(places) == 1
    ((file, line),) = places
    assert linecache.getline(file, line).strip() == "return fn(*args, **kwargs)"


def test_numba_holding_its_lock_keeps_the_record_of_shown_warnings():
    # numba's compiles and cache loads (its first imports SciPy) set warning filters and put
    # them back: a warning the program has shown at a line (a loop's deprecation) is not
    # shown again after a kernel compiles, as under PyTorch; a lasting change still counts
    pytest.importorskip("numba")
    from disttorch.kernels import jit

    jit.njit()  # installs the compiler-lock listener
    (guard,) = jit._guard

    def scipy_import():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "unrelated")

    seen: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for under_lock, shown in ((scipy_import, 1), (lambda: warnings.filterwarnings("ignore", "x"), 2)):
            warnings.warn_explicit("loop warning", UserWarning, "prog.py", 7, registry=seen)
            guard.on_start(None)
            under_lock()
            guard.on_end(None)
            warnings.warn_explicit("loop warning", UserWarning, "prog.py", 7, registry=seen)
            assert len(caught) == shown


def test_a_kernel_builder_keeps_the_record_of_shown_warnings(monkeypatch):
    # numba.vectorize (a module of loops imported by a builder) sets and restores filters
    # outside numba's compiler lock: a DataLoader's warning shown before the first compiled
    # kernel was shown again after it, where PyTorch shows it once
    from disttorch.kernels import jit

    def build():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "unrelated")
        return "loops"

    monkeypatch.setenv("DISTTORCH_JIT", "1")
    monkeypatch.setattr(jit, "_built", {})
    seen: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        warnings.warn_explicit("loop warning", UserWarning, "prog.py", 7, registry=seen)
        assert jit.compiled(build) == "loops"
        warnings.warn_explicit("loop warning", UserWarning, "prog.py", 7, registry=seen)
    assert len(caught) == 1
