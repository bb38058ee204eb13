"""disttorch: a PyTorch-shaped deep-learning stack on NumPy, with data-parallel training
across processes and machines over ZeroMQ.

``import disttorch as torch`` gives tensors with autograd (this package), ``nn``,
``optim``, ``utils.data`` and ``distributed``; ``disttorch-launch`` starts the ranks.
"""

from ._malloc import tune_malloc as _tune_malloc
from ._native_warnings import quiet_numpy_float_errors as _quiet_numpy_float_errors

_tune_malloc()
_quiet_numpy_float_errors()

from . import _dtype  # noqa: E402
from . import _public_name  # noqa: E402
from ._dtype import (
    bfloat16,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    complex32,
    chalf,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._tensor import Size, Tensor, detach, device, is_floating_point, is_tensor, numel
from . import ops as _ops
from .ops._numpy_names import accept_numpy_names as _accept_numpy_names
from .ops.method_twins import route_to_method as _route_to_method
from .ops.out_arg import OUT_FUNCTIONS as _OUT_FUNCTIONS
from .ops.out_arg import accept_out as _accept_out
from .ops.tensor_only import TENSOR_ONLY as _TENSOR_ONLY
from .ops.tensor_only import NO_ARRAYS as _NO_ARRAYS
from .ops.tensor_only import refuse_arrays as _refuse_arrays
from .ops.tensor_only import require_tensors as _require_tensors
from ._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._repr import set_printoptions
from ._type_info import finfo, iinfo
from ._dtype import promote_types
from ._layout import jagged, layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .ops.mathfns import e, inf, nan, newaxis, pi
from ._random import (
    Generator,
    bernoulli,
    binomial,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from . import autograd
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .serialization import load, save
from .utils.dlpack import from_dlpack
from ._threads import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from ._runtime_flags import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._legacy_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from .autograd.autocast_state import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .amp import autocast
from . import __future__  # noqa: E402  (torch.__future__: module conversion switches)
from .autograd.autocast_state import set_autocast_gpu_dtype
from .autograd.grad_mode import is_inference_mode_enabled
from .autograd import backprop as _backprop


def _batched_grad(*args: object, **kwargs: object) -> tuple:
    """``autograd.grad(..., is_grads_batched=True)``'s batched pass (``func``, loaded on first use)."""
    from .func._batched_backward import batched_grad

    return batched_grad(*args, **kwargs)


_backprop.BATCHED_GRAD.append(_batched_grad)
from ._threads import init_num_threads
from ._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
)
from ._torch_function import _assert  # torch._assert: an assert that fx can record
from . import _function_dispatch  # noqa: F401  (a dispatching Tensor subclass installs it)
from . import _subclass  # noqa: F401  (Tensor._make_subclass, Tensor._make_wrapper_subclass)
from ._checks import (
    _assert_async,
    _check,
    _check_index,
    _check_is_size,
    _check_not_implemented,
    _check_tensor_all,
    _check_tensor_all_with,
    _check_type,
    _check_value,
    _check_with,
)
from ._debug_flags import (
    get_deterministic_debug_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_warn_always_enabled,
    set_anomaly_enabled,
    set_deterministic_debug_mode,
    set_flush_denormal,
    set_warn_always,
)
from ._streams import AcceleratorError, Event, OutOfMemoryError, Stream
from ._storage import TypedStorage, UntypedStorage, is_storage
from ._legacy_storage import (
    BFloat16Storage,
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
)
from ._qscheme import (
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
)
from ._dtype import qint8, qint32, quint8
from ._quantize import (
    dequantize,
    int_repr,
    q_per_channel_axis,
    q_per_channel_scales,
    q_per_channel_zero_points,
    q_scale,
    q_zero_point,
    quantize_per_channel,
    quantize_per_tensor,
)
from ._buffers import asarray, empty_permuted, empty_strided, frombuffer, is_inference, to_dlpack, typename


def _export_ops() -> None:
    """Export every op family's public functions at the top level (``disttorch.add``); give
    ``out=`` to those PyTorch gives it (the factories imported above included)."""
    g = globals()
    outside_ops = {name for name in _OUT_FUNCTIONS if name in g}  # zeros, arange, rand, ...
    names: dict[int, list[str]] = {}  # an op under all its names (atan, arctan): one object
    ops: dict[int, object] = {}
    seen: set[str] = set()  # a name two families export: the first family's wins
    for mod in _ops.FAMILIES:
        exported = getattr(mod, "__all__", None)  # [] (Tensor methods only) exports nothing
        for name in exported if exported is not None else [n for n in vars(mod) if not n.startswith("_")]:
            obj = getattr(mod, name)
            if callable(obj) and not isinstance(obj, type) and name not in g and name.islower():
                if name not in seen:
                    seen.add(name)
                    names.setdefault(id(obj), []).append(name)
                    ops[id(obj)] = obj
    for key, aliases in names.items():
        obj = ops[key]
        with_out = [name for name in aliases if name in _OUT_FUNCTIONS]
        if with_out:
            obj = _accept_out(obj, with_out[0])  # torch.add(a, b, out=c)
        obj = _accept_numpy_names(obj)  # torch.sum(x, axis=0) as PyTorch accepts
        method = next((name for name in aliases if callable(getattr(Tensor, name, None))), aliases[0])
        obj = _route_to_method(obj, method)  # torch.reshape(dtensor, ...) as dtensor.reshape(...)
        for name in aliases:
            if name in _TENSOR_ONLY:
                g[name] = _require_tensors(obj, name)
            else:
                g[name] = _refuse_arrays(obj, name) if name in _NO_ARRAYS else obj
    for name in outside_ops:
        g[name] = _accept_out(g[name], name)


_export_ops()
__version__ = "0.1.0"


_LAZY = (
    "nn",
    "types",
    "optim",
    "utils",
    "distributed",
    "datasets",
    "viz",
    "cuda",
    "accelerator",
    "backends",
    "mps",
    "xpu",
    "mtia",
    "types",
    "version",
    "multiprocessing",
    "jit",
    "onnx",
    "testing",
    "as_torch",
    "distributions",
    "cpu",
    "profiler",
    "sparse",
    "linalg",
    "special",
    "fft",
    "func",
    "functional",
    "random",
    "overrides",
    "futures",
    "masked",
    "nested",
    "signal",
    "hub",
    "library",
    "export",
    "fx",
    "compiler",
    "return_types",
    "torch_version",
    "quasirandom",
    "_C",
    "_utils",
    "_tensor_str",
    "__config__",
    "storage",
    "_dynamo",
    "_inductor",
    "ao",
    "quantization",
    "numa",
)
#: other lazily resolved names: ``torch.<name>`` -> (module, attribute)
_LAZY_ATTRS = {
    "compile": ("compiler", "compile"),
    "ModuleDict": ("nn", "ModuleDict"),
    "ParameterDict": ("nn", "ParameterDict"),
    "GradScaler": ("amp", "GradScaler"),
    "vmap": ("func", "vmap"),
    "windows": ("signal", "windows"),
    "get_device_module": ("accelerator", "get_device_module"),
    "PyTorchFileReader": ("serialization.file_reader", "PyTorchFileReader"),
    "PyTorchFileWriter": ("serialization.file_writer", "PyTorchFileWriter"),
    "ScriptModule": ("jit", "ScriptModule"),
    "ScriptFunction": ("jit", "ScriptFunction"),
    "_standard_gamma": ("distributions.gamma", "_standard_gamma"),
    "_sample_dirichlet": ("distributions.dirichlet", "_sample_dirichlet"),
    "_segment_reduce": ("ops.segments", "_segment_reduce"),
    "_softmax_backward_data": ("ops.softmax", "_softmax_backward_data"),
    "_convert_indices_from_coo_to_csr": ("ops.segments", "_convert_indices_from_coo_to_csr"),
    "_convert_indices_from_csr_to_coo": ("ops.segments", "_convert_indices_from_csr_to_coo"),
    "cond": ("_higher_order_ops", "cond"),
    "while_loop": ("_higher_order_ops", "while_loop"),
    "Future": ("futures", "Future"),
    "fork": ("jit", "fork"),
    "wait": ("jit", "wait"),
    **{name: ("_sym", name) for name in ("SymInt", "SymFloat", "SymBool", "sym_int", "sym_float")},
    **{name: ("_sym", name) for name in ("sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum")},
    **{name: ("_build_info", name) for name in ("has_mkl", "has_openmp", "has_lapack", "has_spectral")},
    "compiled_with_cxx11_abi": ("_build_info", "compiled_with_cxx11_abi"),
}

#: PyTorch's deprecated build flags (``torch.has_mps``...): each warns and answers as the
#: function it names (module under the package, function)
_DEPRECATED_FLAGS = {
    "has_mps": ("backends.mps", "is_built"),
    "has_cuda": ("backends.cuda", "is_built"),
    "has_cudnn": ("backends.cudnn", "is_available"),
    "has_mkldnn": ("backends.mkldnn", "is_available"),
}

_public_name.name_top_level_classes(_public_name.package_name())


def __getattr__(name: str):
    """Subpackages (``nn``, ``optim``, ``utils``, ``distributed``, ...) are imported on
    first use, so ``import disttorch`` stays quick for every rank a launcher starts."""
    import importlib

    if name == "torch":  # ``torch.torch is torch`` in PyTorch (transformers' UVDoc annotates with it)
        import sys

        return sys.modules[__name__]
    if name in _DEPRECATED_FLAGS:
        import warnings

        module, function = _DEPRECATED_FLAGS[name]
        warnings.warn(
            f"'{name}' is deprecated, please use '{_public_name.package_name()}.{module}.{function}()'",
            stacklevel=2,
        )
        return getattr(importlib.import_module(f".{module}", __name__), function)()

    from .kernels.jit import fork_waits  # (a fork waits for a first import on another thread)

    if name in _LAZY:
        with fork_waits():
            return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        with fork_waits():
            return getattr(importlib.import_module(f".{module}", __name__), attr)
    if name.startswith("_foreach_"):  # torch._foreach_add_(params, ...): ops over tensor lists
        from .ops import foreach

        if hasattr(foreach, name):
            return getattr(foreach, name)
    if name.endswith("_copy") and not name.startswith("_"):  # torch.expand_copy: a view's copy
        from .ops import view_copies

        try:
            return view_copies.resolve(name)
        except AttributeError:
            pass
    if not name.startswith("_"):  # torch.conv2d, torch.layer_norm, ...: nn.functional's ops
        from .nn.functional import torch_aliases

        try:
            return torch_aliases.resolve(name)
        except AttributeError:
            pass
    raise AttributeError(f"module '{_public_name.package_name()}' has no attribute '{name}'")
