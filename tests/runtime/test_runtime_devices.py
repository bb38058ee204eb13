"""torch.cuda / accelerator / backends / mps / xpu / version, devices and tensor/module device
methods answer as PyTorch's CPU build does (compared with the installed PyTorch)."""

from __future__ import annotations

import warnings

import pytest

import disttorch

# expressions evaluated with `torch` bound to each library: same value, or same exception type
CALLS = [
    "torch.cuda.is_available()",
    "torch.cuda.device_count()",
    "torch.cuda.is_initialized()",
    "torch.cuda._initialized",
    "torch.cuda.current_device()",
    "torch.cuda.set_device(0)",
    "torch.cuda.set_device(-1)",
    "torch.cuda.set_device('cpu')",
    "torch.cuda.manual_seed(1)",
    "torch.cuda.manual_seed_all(1)",
    "torch.cuda.seed()",
    "torch.cuda.seed_all()",
    "torch.cuda.synchronize()",
    "torch.cuda.is_bf16_supported()",
    "torch.cuda.empty_cache()",
    "torch.cuda.memory_allocated()",
    "torch.cuda.max_memory_allocated()",
    "torch.cuda.memory_reserved()",
    "torch.cuda.max_memory_reserved()",
    "dict(torch.cuda.memory_stats())",
    "torch.cuda.get_device_name()",
    "torch.cuda.get_device_properties(0)",
    "torch.cuda.get_device_capability()",
    "torch.cuda.init()",
    "torch.cuda.get_rng_state()",
    "torch.cuda.get_rng_state_all()",
    "torch.cuda.set_rng_state_all([])",
    "torch.cuda.get_arch_list()",
    "torch.cuda.current_stream()",
    "torch.cuda.Stream()",
    "torch.cuda.Event()",
    "torch.cuda.mem_get_info()",
    "torch.cuda.initial_seed()",
    "torch.cuda.reset_peak_memory_stats()",
    "torch.cuda.reset_max_memory_allocated()",
    "torch.cuda.reset_accumulated_memory_stats()",
    "torch.cuda.memory_cached()",
    "torch.cuda.max_memory_cached()",
    "torch.cuda.memory_summary()",
    "torch.cuda.memory_stats_as_nested_dict()",
    "dict(torch.cuda.host_memory_stats())",
    "torch.cuda.memory_snapshot()",
    "torch.cuda.memory._record_memory_history()",
    "torch.cuda.memory._snapshot()",
    "torch.cuda.memory.empty_cache is torch.cuda.empty_cache",
    "torch.cuda.set_per_process_memory_fraction(0.5)",
    "torch.cuda.list_gpu_processes()",
    "torch.cuda.utilization()",
    "torch.cuda.is_tf32_supported()",
    "torch.cuda.get_gencode_flags()",
    "torch.cuda.is_current_stream_capturing()",
    "torch.cuda.set_stream(None)",
    "torch.cuda.can_device_access_peer(0, 1)",
    "torch.cuda.get_sync_debug_mode()",
    "(torch.cuda.has_half, torch.cuda.has_magma)",
    "torch.cuda.OutOfMemoryError is torch.OutOfMemoryError",
    "torch.cuda.FloatTensor(2)",
    "torch.cuda.device(0).__enter__()",
    "torch.accelerator.is_available()",
    "torch.accelerator.current_accelerator()",
    "torch.accelerator.current_accelerator(check_available=True)",
    "torch.accelerator.device_count()",
    "torch.accelerator.current_device_index()",
    "torch.accelerator.set_device_index(0)",
    "torch.accelerator.synchronize()",
    "torch.accelerator.empty_cache()",
    "torch.accelerator.memory_allocated()",
    "torch.backends.cudnn.enabled",
    "torch.backends.cudnn.benchmark",
    "torch.backends.cudnn.deterministic",
    "torch.backends.cudnn.is_available()",
    "torch.backends.cudnn.version()",
    "torch.backends.cudnn.allow_tf32",
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "torch.backends.cuda.is_built()",
    "torch.backends.cuda.flash_sdp_enabled()",
    "torch.backends.cuda.math_sdp_enabled()",
    "torch.backends.cuda.mem_efficient_sdp_enabled()",
    "torch.backends.mps.is_available()",
    "torch.backends.mps.is_built()",
    "torch.backends.mkldnn.enabled",
    "torch.backends.cpu.get_cpu_capability()",
    "torch.backends.opt_einsum.is_available()",
    "torch.backends.fp32_precision",
    "torch.mps.is_available()",
    "torch.mps.device_count()",
    "torch.mps.manual_seed(1)",
    "torch.mps.synchronize()",
    "torch.mps.empty_cache()",
    "torch.mps.current_allocated_memory()",
    "torch.mps.seed()",
    "torch.xpu.is_available()",
    "torch.xpu.device_count()",
    "torch.xpu.manual_seed(1)",
    "torch.xpu.manual_seed_all(1)",
    "torch.xpu.synchronize()",
    "torch.xpu.empty_cache()",
    "torch.xpu.current_device()",
    "torch.xpu.set_device(0)",
    "torch.xpu.memory_allocated()",
    "torch.version.cuda",
    "torch.version.hip",
    "torch.version.xpu",
    "torch.version.debug",
    "str(torch.device('cuda'))",
    "repr(torch.device('cuda:1'))",
    "str(torch.device('cuda', 1))",
    "torch.device('cpu:0').index",
    "torch.device('mps').type",
    "torch.device('foo')",
    "torch.device(0)",
    "torch.device('cuda:1') == torch.device('cuda', 1)",
    "torch.device('cuda') == torch.device('cpu')",
    "torch.zeros(2, device='cuda')",
    "torch.zeros(2, device='xpu')",
    "torch.zeros(2, device=0)",
    "torch.zeros(2, device=torch.device('cpu')).shape",
    "torch.zeros(2).cuda()",
    "torch.zeros(2).cuda(0)",
    "torch.zeros(2).cuda('cpu')",  # RuntimeError: Invalid device, must be cuda device
    "torch.zeros(2).cuda(torch.device('meta'))",
    "torch.zeros(2).to(0)",
    "torch.zeros(2).to('cuda:0')",
    "torch.zeros(2).to(device=0)",
    "torch.zeros(2).to('cpu', torch.float64).dtype == torch.float64",
    "torch.zeros(2).is_cuda",
    "torch.zeros(2).is_mps",
    "torch.zeros(2).is_xpu",
    "torch.zeros(2).is_meta",
    "torch.zeros(2).pin_memory()",
    "torch.zeros(2).is_pinned()",
    "torch.nn.Linear(2, 2).to(0)",
    "torch.nn.Linear(2, 2).to('cuda')",
    "torch.nn.Linear(2, 2).cuda()",
    "torch.nn.Linear(2, 2).cuda('cpu')",
    "type(torch.nn.ReLU().cuda()).__name__",  # nothing to move: no error
    "type(torch.nn.Linear(2, 2).to('cpu')).__name__",
    "torch.distributed.get_default_backend_for_device('cpu')",
    "torch.distributed.get_default_backend_for_device('cuda')",
    "torch.distributed.get_default_backend_for_device(torch.device('cpu'))",
    "torch.distributed.get_default_backend_for_device('mps')",
    "torch.distributed.is_torchelastic_launched()",
]


def _answer(torch, expr: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "value", eval(expr, {"torch": torch})
        except Exception as e:  # noqa: BLE001 (the exception type is the answer)
            return "raises", type(e)


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("expr", CALLS)
def test_answers_as_the_cpu_build(real_torch, expr, monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    if expr == "torch.backends.opt_einsum.is_available()":
        pytest.importorskip("opt_einsum", reason="compare only where both would find opt_einsum")
    ours, theirs = _answer(disttorch, expr), _answer(real_torch, expr)
    if expr in ("torch.cuda.set_device(0)", "torch.cuda.reset_peak_memory_stats()"):
        assert ours == ("raises", AttributeError)  # the CPU build fails inside its C module
        return
    if expr == "torch.backends.cpu.get_cpu_capability()":  # NumPy's view of the CPU vs ATen's
        assert ours[1] in ("AVX512", "AVX2", "DEFAULT")
        return
    if ours[0] == "raises" and theirs[0] == "raises" and issubclass(theirs[1], NotImplementedError):
        assert issubclass(ours[1], NotImplementedError)
        return
    assert ours == theirs, f"{expr}: disttorch {ours}, PyTorch {theirs}"


def test_errors_say_what_to_do():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled.*use device='cpu'"):
        disttorch.ones(2).cuda()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device.*use device='cpu'"):
        disttorch.nn.Linear(2, 2).to(0)
    with pytest.raises(RuntimeError, match="pin_memory"):
        disttorch.ones(2).pin_memory()
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        disttorch.cuda.set_device("cpu")


def test_flags_are_kept_and_tied_like_pytorch():
    from disttorch.backends import cudnn

    old = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert disttorch.backends.cudnn.benchmark is True
        with cudnn.flags(enabled=False, deterministic=True):
            assert cudnn.deterministic and not cudnn.enabled
        assert cudnn.enabled and not cudnn.deterministic
    finally:
        cudnn.benchmark = old
    try:
        disttorch.set_float32_matmul_precision("high")
        assert disttorch.backends.cuda.matmul.allow_tf32 is True
        disttorch.backends.cuda.matmul.allow_tf32 = False
        assert disttorch.get_float32_matmul_precision() == "highest"
    finally:
        disttorch.set_float32_matmul_precision("highest")
    with disttorch.backends.cuda.sdp_kernel(enable_flash=False):
        assert not disttorch.backends.cuda.flash_sdp_enabled()
    assert disttorch.backends.cuda.flash_sdp_enabled()


def test_device_pickles_and_hashes():
    import pickle

    d = disttorch.device("cuda", 1)
    assert pickle.loads(pickle.dumps(d)) == d and hash(d) == hash(disttorch.device("cuda:1"))
    assert disttorch.device("cpu") == "cpu" and disttorch.zeros(1).device == disttorch.device("cpu")


def test_device_as_a_context_manager():
    with disttorch.device("cpu") as d:
        assert d == disttorch.device("cpu") and disttorch.zeros(1).device == d
    with (
        pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"),
        disttorch.device("cuda"),
    ):
        pass


def test_renamed_cuda_memory_calls_warn_at_the_callers_line():
    with pytest.warns(FutureWarning, match="`torch.cuda.memory_cached` has been renamed") as rec:
        assert disttorch.cuda.memory_cached() == 0
    assert rec[0].filename == __file__
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls") as rec:
        with pytest.raises(AttributeError):
            disttorch.cuda.reset_max_memory_allocated()
    assert rec[0].filename == __file__
