"""Torch functions and Tensor methods hand dispatching arguments to their ``__torch_function__``.

disttorch's ops do not look for ``__torch_function__`` until a program needs them to.
Importing ``torch.fx`` (whose proxies must record ``torch.relu(proxy)``; ``import torch``
under the alias imports it) calls :func:`install`, which swaps the public functions of
``torch`` and ``torch.nn.functional`` and Tensor's binary operators; the first ``Tensor``
subclass that dispatches (a user's ``class MyT(torch.Tensor)``, PyG's ``EdgeIndex``) also
swaps every other public method, protocol and ``T``/``data``-like property of ``Tensor``.
Each is swapped for a twin that first looks for an argument that dispatches (see
:mod:`._torch_function`), directly or inside a list or tuple argument (``torch.cat([p,
q])``), and if they find one call :func:`~disttorch.overrides.handle_torch_function` with
the twin as the function. A function's twin replaces it wherever a disttorch module bound
it (``from .functional import relu`` included), carries the function's name and the public
module it lives in (``torch.relu`` prints, pickles and generates code as ``torch.relu``),
and costs other calls one look-up per argument. A function a program imported by name
before the first such subclass existed (``from torch import cat``) keeps not dispatching.

PyTorch's Python-level ``torch.nn.functional`` functions hand ``__torch_function__`` their
required parameters positionally and every parameter with a default by keyword, defaults
included (``F.relu(p)`` is recorded as ``relu(p, inplace=False)``); their twins do the
same. Those PyTorch implements in C++ (``F.linear``, ``F.conv2d``, ...) pass the call as
written, like the functions of ``torch``.

An operator hands over the tensor method it stands for, as in PyTorch: ``x * 2`` and
``self.buf + proxy`` reach ``__torch_function__`` as ``Tensor.mul`` and ``Tensor.add``."""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

from ._tensor import ON_DISPATCH_CHANGE, Tensor
from ._torch_function import (
    _VERDICT,
    DISPATCH_MODES,
    _disabled_torch_dispatch_impl,
    _disabled_torch_function_impl,
    _forget_type,
    _tensor_torch_function,
    _type_dispatches,
    dispatch_args,
    handle_torch_function,
    relevant_args,
)

__all__ = ["install"]

#: functions of ``torch.nn.functional`` that PyTorch implements in C++ (calls pass as written)
_NATIVE_FUNCTIONAL = frozenset(
    "adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d bilinear celu_ channel_shuffle conv1d "
    "conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity "
    "elu_ gelu hardshrink hardtanh_ leaky_relu_ linear logsigmoid native_channel_shuffle one_hot "
    "pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ "
    "scaled_dot_product_attention selu_ softplus softshrink threshold_".split()
)
_installed = False


def _by_keyword(signature: inspect.Signature, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args``/``kwargs`` as PyTorch's Python functionals pass them on: required parameters
    positionally, the others (defaults filled in) by keyword."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs  # the function itself will say what is wrong
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, value in bound.arguments.items():
        param = signature.parameters[name]
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
        elif param.kind is param.VAR_KEYWORD:
            keywords.update(value)
        elif param.default is param.empty and param.kind is not param.KEYWORD_ONLY and not keywords:
            positional.append(value)
        else:
            keywords[name] = value
    return tuple(positional), keywords


def _plain(args: tuple, kwargs: dict) -> bool:
    """Whether no argument can dispatch (plain tensors, numbers, None...: the common case,
    decided from the types already seen, without looking into lists)."""
    for v in args:
        if _VERDICT.get(type(v)) is not False:
            return False
    for v in kwargs.values():
        if _VERDICT.get(type(v)) is not False:
            return False
    return True


def _dispatching(fn: Callable, module: str, name: str) -> Callable:
    normalise = module.endswith(".functional") and name not in _NATIVE_FUNCTIONAL
    signature = inspect.signature(fn) if normalise else None
    # the twin reaches itself through a list, not its own closure: dill (datasets' fingerprints
    # of a function calling F.relu) follows closures without a cycle check
    this: list[Callable] = []

    @functools.wraps(fn)
    def twin(*args: Any, **kwargs: Any) -> Any:
        if _plain(args, kwargs) and not DISPATCH_MODES:
            return fn(*args, **kwargs)
        relevant = relevant_args(args, kwargs)
        if relevant:
            if signature is not None:
                args, kwargs = _by_keyword(signature, args, kwargs)
            return handle_torch_function(this[0], relevant, *args, **kwargs)
        if dispatch_args(args, kwargs) or (DISPATCH_MODES and _an_operator(name, args, kwargs)):
            return _to_aten(
                name, this[0], args, kwargs
            )  # (an operator registered as the twin reaches outer modes)
        return fn(*args, **kwargs)

    this.append(twin)
    twin.__module__ = module
    twin.__name__ = twin.__qualname__ = name  # an alias (torch.arctan of atan) keeps its own name
    return twin


#: where the functions of ``torch`` that take tensors come from (not its settings and switches)
_TENSOR_MODULES = ("disttorch.ops.", "disttorch._tensor", "disttorch._random", "disttorch._creation")


def _takes_tensors(namespace: types.ModuleType, value: Any) -> bool:
    if not isinstance(value, types.FunctionType):
        return False
    return namespace.__name__ != "disttorch" or value.__module__.startswith(_TENSOR_MODULES)


#: Tensor operator -> the method PyTorch hands ``__torch_function__`` for it
_TENSOR_OPERATORS = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__truediv__": "div",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__floordiv__": "__floordiv__",
    "__getitem__": "__getitem__",
    "__and__": "__and__",
    "__or__": "__or__",
    "__xor__": "__xor__",
    "__lshift__": "__lshift__",
    "__rshift__": "__rshift__",
}
#: Tensor's other operators and protocols that dispatch under their own name
_TENSOR_DUNDERS = tuple(
    f"__{name}__"
    for name in (
        "radd iadd rsub isub rmul imul rmatmul imatmul rtruediv itruediv rfloordiv "
        "ifloordiv rmod imod rpow ipow neg pos abs invert rand iand ror ior rxor ixor "
        "rlshift ilshift rrshift irshift setitem len reversed "
        "contains bool float int index complex repr"
    ).split()
)
#: Tensor properties whose reads dispatch (their results are tensors)
_TENSOR_PROPERTIES = ("T", "mT", "H", "mH", "data", "real", "imag")


def _method_twin(method: Callable, name: str, public: str | None = None) -> Callable:
    """``method`` of Tensor, handing a call with a dispatching argument to
    ``__torch_function__`` as ``Tensor.<public>`` (the twin itself unless given)."""
    this: list[Callable] = []  # the twin, outside its own closure (see _dispatching)

    @functools.wraps(method)
    def twin(*args: Any, **kwargs: Any) -> Any:
        if _plain(args, kwargs) and not DISPATCH_MODES:
            return method(*args, **kwargs)
        relevant = relevant_args(args, kwargs)
        if relevant:
            api = this[0] if public is None else getattr(Tensor, public)
            return handle_torch_function(api, relevant, *args, **kwargs)
        if name in _METADATA:
            if args and isinstance(getattr(args[0], "_data", None), Tensor):
                args = (args[0]._data, *args[1:])  # a wrapper keeping its tensor as ``_data``
            return method(*args, **kwargs)
        if name not in _AUTOGRAD_METHODS and (DISPATCH_MODES or dispatch_args(args, kwargs)):
            if name == "__getitem__":
                return _dispatch_indexing(method, *args)
            return _to_aten(public or name, method, args, kwargs)
        return method(*args, **kwargs)

    this.append(twin)
    twin.__name__ = name  # Tensor.__floordiv__ is named so (not floor_divide)
    twin.__module__, twin.__qualname__ = "disttorch._tensor", f"Tensor.{name}"  # pickles by reference
    return twin


def _property_twin(prop: property, name: str) -> property:
    return property(_method_twin(prop.fget, name), prop.fset, prop.fdel, prop.__doc__)


#: Tensor methods a wrapper subclass answers from its own sizes and dtype (PyTorch's
#: ``_make_wrapper_subclass`` keeps them), never through ``__torch_dispatch__``; a wrapper
#: that keeps its inner tensor as ``_data`` (PyG's ``EdgeIndex``), which is disttorch's own
#: name for a tensor's array, answers from that tensor
_METADATA = frozenset(
    "size dim ndimension numel nelement stride is_contiguous storage_offset element_size "
    "is_floating_point is_complex is_signed get_device requires_grad_ __len__".split()
)
#: Tensor methods of autograd itself, which PyTorch runs above its dispatcher (never an operator)
_AUTOGRAD_METHODS = frozenset(
    "backward register_hook register_post_accumulate_grad_hook retain_grad requires_grad_".split()
)


#: functions without tensor arguments that reach a dispatch mode (PyTorch's factory operators)
_FACTORIES = frozenset(
    "zeros ones empty full arange linspace logspace rand randn randint randperm eye".split()
)


#: disttorch's own helpers that its ``torch`` namespace holds (checks of dtypes, views...):
#: not operators, so never handed to a dispatch mode
_HELPERS = frozenset(
    "cast in_half scale_first check_cast refuse_bool_subtraction refuse_integer_addcdiv refuse_kernel "
    "require_lerp_dtypes low_result opmath_array scalar_of check_inplace refresh_view setitem "
    "no_draw_on_meta".split()
)


def _an_operator(name: str, args: tuple, kwargs: dict) -> bool:
    """Whether a dispatch mode is handed this call: it takes a tensor, or makes one."""
    if name in _HELPERS:
        return False
    if name in _FACTORIES:
        return True
    values = [*args, *kwargs.values()]
    return any(
        isinstance(v, Tensor) or (type(v) in (list, tuple) and any(isinstance(x, Tensor) for x in v))
        for v in values
    )


def _to_aten(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """The call ``name(*args, **kwargs)`` with a wrapper-subclass argument, as the ATen
    operators PyTorch's dispatcher hands it (see :mod:`.ops.aten_dispatch`)."""
    from .ops.aten_dispatch import dispatch  # the operator registry sits below the library

    return dispatch(name, fn, args, kwargs)


def _indexing_steps(key: Any, ndim: int) -> list[tuple[str, tuple]] | None:
    """``tensor[key]`` as PyTorch's dispatcher sees it, one step per indexed dim: an int
    selects (``aten.select.int``), a slice slices (``aten.slice.Tensor``; ``:`` is no step),
    a tensor indexes (``aten.index.Tensor``), None adds a dim (``aten.unsqueeze``), ``...``
    stands for the dims the others leave (of ``ndim``); None for keys left whole."""
    steps: list[tuple[str, tuple]] = []
    dim = 0
    items = key if isinstance(key, tuple) else (key,)
    if any(item is Ellipsis for item in items):
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        used = sum(1 for item in items if item is not None and item is not Ellipsis)
        items = (*items[:at], *(slice(None),) * (ndim - used), *items[at + 1 :])
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            steps.append(("select.int", (dim, item)))
        elif isinstance(item, slice):
            if not all(v is None or isinstance(v, int) for v in (item.start, item.stop, item.step)):
                return None
            if item != slice(None):
                bounds = (dim, item.start or 0, sys.maxsize if item.stop is None else item.stop)
                steps.append(("slice.Tensor", bounds if item.step in (None, 1) else (*bounds, item.step)))
            dim += 1
        elif item is None:
            steps.append(("unsqueeze.default", (dim,)))
            dim += 1
        elif isinstance(item, Tensor) and not isinstance(key, tuple):
            steps.append(("index.Tensor", ([item],)))
        else:
            return None
    return steps


def _dispatch_indexing(getitem: Callable, tensor: Tensor, key: Any) -> Any:
    """``tensor[key]`` for a wrapper subclass: its ``__torch_dispatch__`` called once per
    step of :func:`_indexing_steps` (or with ``__getitem__`` itself for other keys)."""
    from .ops import aten
    from .ops.aten_autograd import call
    from .ops.aten_dispatch import aten_op

    steps = _indexing_steps(key, tensor.dim())
    if steps is None:
        return call(aten_op("__getitem__", getitem), tensor, key)
    out = tensor
    for op, extra in steps:
        packet, overload = op.split(".")
        out = call(getattr(getattr(aten, packet), overload), out, *extra)  # (may be plain by now)
    return out


_twinned: set[str] = set()  # Tensor attributes swapped already


def _install_tensor_methods(names: Any) -> None:
    for name in names:
        value = inspect.getattr_static(Tensor, name, None)
        if name in _twinned or value is None:
            continue
        if isinstance(value, types.FunctionType):
            setattr(Tensor, name, _method_twin(value, name, _TENSOR_OPERATORS.get(name)))
        elif isinstance(value, property) and name in _TENSOR_PROPERTIES and value.fget is not None:
            setattr(Tensor, name, _property_twin(value, name))
        else:
            continue
        _twinned.add(name)


#: public Tensor methods PyTorch never dispatches (``as_subclass`` is how a handler unwraps)
_IGNORED = frozenset(("as_subclass", "stride"))


def _install_all_tensor_methods() -> None:
    """Every public method, operator and protocol of Tensor dispatches (for its subclasses)."""
    _install_tensor_methods(
        n
        for n in dir(Tensor)
        if (not n.startswith("_") and n not in _IGNORED) or n in _TENSOR_DUNDERS or n in _TENSOR_OPERATORS
    )
    _forget_mode_swaps()


#: id of an original function -> its twin under each public name (every namespace swapped so far)
_twins: dict[int, dict[str, Callable]] = {}


def twin(value: Any) -> Any:
    """The dispatching twin of a public function swapped already (a reference taken before
    the swap, say ``vmap(torch.linalg.lstsq)`` on the first ``vmap``), else ``value``."""
    named = _twins.get(id(value)) if isinstance(value, types.FunctionType) else None
    return value if named is None else named.get(value.__name__) or next(iter(named.values()))


def _swap_functions(namespaces: tuple) -> None:
    """Give the public functions of ``namespaces`` twins, wherever a disttorch module binds them."""
    import disttorch

    twins = _twins
    done = set(twins) | {id(t) for named in twins.values() for t in named.values()}
    for namespace in namespaces:  # a function in several is named after the last
        for name, value in list(vars(namespace).items()):
            if id(value) in done:
                continue  # a twin, or a function an earlier call gave twins (another name of it)
            if _takes_tensors(namespace, value) and not name.startswith("_") and name.islower():
                home = namespace.__name__
                if name in _NATIVE_FUNCTIONAL and getattr(disttorch, name, None) is value:
                    home = "disttorch"  # F.conv2d is torch.conv2d in PyTorch, and prints so
                twins.setdefault(id(value), {})[name] = _dispatching(value, home, name)

    def twin_of(name: str, value: Any) -> Callable | None:
        named = twins.get(id(value)) if isinstance(value, types.FunctionType) else None
        return None if named is None else named.get(name) or next(iter(named.values()))

    for mod_name, module in list(sys.modules.items()):
        if module is None or not mod_name.startswith("disttorch") or mod_name.startswith("disttorch.fx"):
            continue
        namespace = vars(module)
        for name, value in list(namespace.items()):
            twin = twin_of(name, value)
            if twin is not None:
                namespace[name] = twin
            elif isinstance(value, types.FunctionType) and value.__module__ == mod_name:
                _retarget_defaults(value, twin_of)
            elif isinstance(value, type) and value.__module__ == mod_name:
                _retarget_class(value, twin_of)


def install() -> None:
    """Swap the public functions of ``torch`` and ``torch.nn.functional`` and Tensor's
    operators for dispatching twins, in every loaded disttorch module (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    _install_tensor_methods(_TENSOR_OPERATORS)
    import disttorch
    import disttorch.nn.functional as functional

    _swap_functions((functional, disttorch))
    _forget_mode_swaps()


def install_everywhere() -> None:
    """Every public function and Tensor method hands its calls on (for a dispatch mode)."""
    if not _all_methods[0]:
        _all_methods[0] = True
        install()
        import disttorch.fft
        import disttorch.linalg
        import disttorch.special

        # (torch.linalg, torch.special and torch.fft dispatch too; a function torch holds as
        # well keeps its twin named after torch)
        _swap_functions((disttorch.linalg, disttorch.special, disttorch.fft))
        _install_all_tensor_methods()


def _on_subclass(cls: type, **kwargs: Any) -> None:
    """``Tensor.__init_subclass__``: a class with its own ``__torch_dispatch__`` and Tensor's
    ``__torch_function__`` gets ``_disabled_torch_function_impl`` (as PyTorch's tensor
    metaclass gives it: its calls go straight to the dispatch, and results are not converted
    to the class); the first subclass that dispatches installs the twins."""
    super(Tensor, cls).__init_subclass__(**kwargs)
    own_dispatch = getattr(cls, "__torch_dispatch__", None) is not _disabled_torch_dispatch_impl
    default_function = getattr(cls.__torch_function__, "__func__", None) is _tensor_torch_function
    if own_dispatch and default_function:
        cls.__torch_function__ = _disabled_torch_function_impl
    if not _all_methods[0] and _type_dispatches(cls) and not getattr(cls, "_function_dispatch", False):
        install_everywhere()  # (disttorch's own dispatching class installs on first use)


_all_methods = [False]  # whether every Tensor method has its twin


def _on_dispatch_change(cls: type) -> None:
    """A class's ``__torch_function__``/``__torch_dispatch__`` set after its creation: what
    was decided for it and its subclasses is decided again."""
    stack = [cls]
    while stack:
        kind = stack.pop()
        if kind is not Tensor:
            _forget_type(kind)
        stack.extend(kind.__subclasses__())
    if not _all_methods[0] and _type_dispatches(cls):
        install_everywhere()


Tensor.__init_subclass__ = classmethod(_on_subclass)
ON_DISPATCH_CHANGE.append(_on_dispatch_change)


def _retarget_class(cls: type, twin_of: Callable[[str, Any], Callable | None]) -> None:
    """A class's staticmethods holding a function (``_conv = staticmethod(conv2d)``) and its
    methods' defaults (``activation=F.relu``) name the twins, so ``activation is F.relu``
    still holds."""
    for attr, kept in list(vars(cls).items()):
        inner = kept.__func__ if isinstance(kept, (staticmethod, classmethod)) else kept
        if not isinstance(inner, types.FunctionType):
            continue
        twin = twin_of(inner.__name__, inner) if isinstance(kept, staticmethod) else None
        if twin is not None:
            setattr(cls, attr, staticmethod(twin))
        else:
            _retarget_defaults(inner, twin_of)


def _retarget_defaults(fn: types.FunctionType, twin_of: Callable[[str, Any], Callable | None]) -> None:
    if fn.__defaults__:
        fn.__defaults__ = tuple(twin_of(getattr(d, "__name__", ""), d) or d for d in fn.__defaults__)
    if fn.__kwdefaults__:
        fn.__kwdefaults__ = {
            k: twin_of(getattr(d, "__name__", ""), d) or d for k, d in fn.__kwdefaults__.items()
        }


def _forget_mode_swaps() -> None:
    """``torch.overrides`` modes cache, on first use, the functions they wrap: let them find
    the twins instead (unless a mode is active now, whose swaps stay as they are)."""
    from . import overrides

    with overrides._PATCHES.lock:
        if overrides._PATCHES.entered == 0:
            overrides._PATCHES.swaps = None
