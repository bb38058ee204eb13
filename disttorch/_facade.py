"""The names of ``disttorch`` itself (``disttorch.Tensor``, ``disttorch.add``, ...), defined
in the order they always load in.

``disttorch/__init__.py`` runs this module on the first use of one of its names, or on the
first import of a submodule that needs tensors, and then takes its names as the package's
own: ``import disttorch`` alone loads no NumPy, so a program that needs no tensors (the
launcher) starts quickly.
"""

from ._malloc import tune_malloc as _tune_malloc
from ._native_warnings import quiet_numpy_float_errors as _quiet_numpy_float_errors

_tune_malloc()
_quiet_numpy_float_errors()

from . import _dtype
from . import _public_name
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
from . import __future__  # torch.__future__: module conversion switches
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

_public_name.name_top_level_classes(_public_name.package_name())
