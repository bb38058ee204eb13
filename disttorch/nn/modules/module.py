"""``Module``: the base class of every layer and model.

A Module keeps its parameters, buffers and submodules in three ordered dicts, filled by
plain attribute assignment (``self.fc = Linear(2, 3)``). Everything else (iterating
parameters, ``state_dict``, ``train``/``eval``, dtype conversion, hooks, the nested
``repr``) walks those dicts. Calling a module runs its forward pre-hooks, ``forward`` and
forward hooks.
"""

from __future__ import annotations

import copy
import itertools
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ... import __future__ as _future
from ... import _creation, _dtype
from ..._buffers import typename
from ..._compile import check_arguments
from ..._public_name import package_name
from ..._tensor import Tensor, _wants_meta
from ..._torch_function import handle_torch_function, has_torch_function_unary
from ...autograd import grad_mode
from ...utils._swap_tensors import swap_tensors
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter
from ._backward_hook import BackwardHook, _WrappedHook, first_output_tensor, non_full_hook_warning
from ._state_dict_hooks import StateDictHooks

__all__ = [
    "Module",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]


class _HookDict(OrderedDict):
    """An ordered dict of hooks that a weak reference can point to."""

    def __reduce__(self) -> tuple:
        # pickled as the plain OrderedDict PyTorch writes; Module.__setstate__ converts back
        return (OrderedDict, (list(self.items()),))

    def __deepcopy__(self, memo: dict) -> _HookDict:
        # a copy of its own type, so a copied module keeps it and the copied handles that
        # point at it (PyG's lazy layers remove their hook through one) remove from it
        out = memo[id(self)] = _HookDict()
        for key, hook in self.items():
            out[key] = copy.deepcopy(hook, memo)
        return out

    def __repr__(self) -> str:
        """As PyTorch's hook dicts print: ``OrderedDict([(0, <hook>)])``."""
        return "OrderedDict" + OrderedDict.__repr__(self)[len(type(self).__name__) :]


#: hooks of every module's call, run before the module's own (module_tracker, FlopCounterMode)
_global_forward_pre_hooks = _HookDict()
_global_forward_hooks = _HookDict()
#: the ids of the global forward hooks registered ``with_kwargs`` / ``always_call`` (id -> True,
#: as PyTorch keeps them)
_global_forward_hooks_with_kwargs = _HookDict()
_global_forward_hooks_always_called = _HookDict()
#: full backward (pre-)hooks of every module, run before the module's own
_global_backward_hooks = _HookDict()
_global_backward_pre_hooks = _HookDict()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args)`` before the ``forward`` of every module, before the
    module's own pre-hooks; a returned value replaces the positional arguments."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Call ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) after the ``forward`` of every module, before the module's own hooks;
    a returned value replaces the output. ``always_call`` runs it even if forward raised."""
    handle = RemovableHandle(
        _global_forward_hooks,
        extra_dict=[_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called],
    )
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_output)`` for every module whose outputs' gradients arrive,
    before the module's own backward pre-hooks; a returned tuple replaces ``grad_output``."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_input, grad_output)`` for every module once the gradients of
    its tensor inputs are computed, before the module's own backward hooks; a returned tuple
    replaces ``grad_input``."""
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


#: the ``state_dict`` key (under the module's prefix) of what ``get_extra_state`` returns
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

_NEVER_CALLED = (
    "Reached a code path in Module.{}() that should never be called. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug."
)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not use."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first by ``spaces`` spaces."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _copy_into(param: Tensor, value: Tensor) -> None:
    """Copy ``value`` into ``param``'s memory (no graph), as ``param.copy_(value)`` would."""
    src = value._data if isinstance(value, Tensor) else np.asarray(value)
    np.copyto(param._data, src, casting="unsafe")
    param._bump_version()


def _swap_loaded(current: Tensor, value: Tensor, assign: bool) -> None:
    """``load_state_dict`` under ``torch.__future__``'s swap switch: swap what
    ``current.module_load(value, assign)`` gives into ``current`` (a Parameter stays one,
    with its ``requires_grad``)."""
    with grad_mode.no_grad():  # as PyTorch loads a state dict
        loaded = current.module_load(value, assign=assign)
    if loaded is value or loaded is current:
        raise RuntimeError(
            "module_load returned one of self or other, please .detach() the result if "
            "returning one of the inputs in module_load"
        )
    if isinstance(current, Parameter):
        if isinstance(loaded, Parameter):
            loaded.requires_grad_(current.requires_grad)
        else:
            loaded = Parameter(loaded, requires_grad=current.requires_grad)
    swap_tensors(current, loaded)


class Module(StateDictHooks):
    """Base class for all neural network modules.

    Subclasses set parameters and submodules as attributes in ``__init__`` (after calling
    ``super().__init__()``) and define ``forward``::

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x).relu()
    """

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments "
                f"{args} {kwargs}; Module.__init__ takes none"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}  # plain dicts, as PyTorch's (a program may print them)
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = _HookDict()
        d["_forward_pre_hooks_with_kwargs"] = _HookDict()
        d["_forward_hooks"] = _HookDict()
        d["_forward_hooks_with_kwargs"] = _HookDict()
        d["_forward_hooks_always_called"] = _HookDict()
        d["_backward_hooks"] = _HookDict()
        d["_backward_pre_hooks"] = _HookDict()
        d["_is_full_backward_hook"] = None  # which kind _backward_hooks holds (None: none yet)

    def forward(self, *input: Any) -> Any:
        """The computation of the module; every subclass overrides it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not trained (e.g. running statistics).

        Args:
            name (str): attribute name of the buffer.
            tensor (Tensor or None): the buffer; ``None`` registers a placeholder that
                ``state_dict`` skips.
            persistent (bool): whether the buffer is part of ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                f"(disttorch.Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (``None`` registers a placeholder, e.g. no bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                f"(disttorch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' as a "
                f"function of another Tensor, compute the value in the forward() "
                f"method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name: Any, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (e.g. ``"fc.weight"``)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------------ attribute protocol
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*dicts: Any) -> None:
            for container in dicts:
                if name in container:
                    if isinstance(container, dict):
                        del container[name]
                    else:
                        container.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    f"({package_name()}.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    f"({package_name()}.nn.Module or None expected)"
                )
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            if "_buffers" not in d:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(d, self._parameters, self._modules)
            self.register_buffer(name, value, value.persistent)
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    f"({package_name()}.nn.Buffer, {package_name()}.Tensor or None expected)"
                )
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list:
        attrs = list(object.__dir__(self))
        keys = attrs + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks"):
            if not isinstance(self.__dict__.get(name), _HookDict):
                self.__dict__[name] = _HookDict(self.__dict__.get(name) or ())
        for name in (
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
        ):
            ids = self.__dict__.get(name) or ()  # a dict id -> True (PyTorch's, ours), or an older set
            if not isinstance(ids, _HookDict):
                self.__dict__[name] = _HookDict((i, True) for i in ids)
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # ------------------------------------------------------------------ iteration
    def _named_members(
        self, get_members: Callable, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator:
        seen: set = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs in registration order; a parameter shared between
        submodules appears once unless ``remove_duplicate=False``."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The module's parameters (and its submodules' when ``recurse``)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs, persistent or not."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The module's buffers (and its submodules' when ``recurse``)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """``(name, module)`` for the immediate children, each module once."""
        seen: set = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        """The immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, "Module"]]:
        """``(dotted name, module)`` for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator["Module"]:
        """This module and every descendant, each once (or as often as it is reached, with
        ``remove_duplicate=False``)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode: bool = True) -> "Module":
        """Set training mode on this module and all descendants (affects Dropout,
        BatchNorm, ...)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to ``None`` (default) or to zeros."""
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if g.grad_fn is not None:
                    g = g.detach()
                    p._grad = g
                g._data[...] = 0
                g._bump_version()

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ dtype / device
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Replace every parameter's and buffer's values by ``fn`` of them (also the
        submodules' with ``recurse``); parameters keep their identity (their ``.data``
        changes), as do their gradients."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = _future.get_swap_module_params_on_conversion()
        overwrite = _future.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                new = fn(param)
                grad = fn(param._grad) if param._grad is not None else None
            if swap or overwrite:
                self._convert_parameter(key, param, new, grad, swap)
                continue
            if new._data is not param._data:
                param._data = new._data
                param._storage_object = None  # the old memory's storage object must not keep it
                param._version_box = [0]
            if grad is not None:
                param._grad = Tensor._make(grad._data)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def _convert_parameter(
        self, key: str, param: Tensor, new: Tensor, grad: Tensor | None, swap: bool
    ) -> None:
        """``_apply`` under ``torch.__future__``: swap the converted values into ``param`` and
        its gradient (both keep their identity), or give the module a new Parameter."""
        fresh = Parameter(new.detach(), param.requires_grad) if isinstance(param, Parameter) else new
        if not swap:
            self._parameters[key] = fresh
            if grad is not None:
                fresh.grad = grad.detach()
            return
        old_grad = param._grad
        swap_tensors(param, fresh)
        if grad is not None:
            if grad._data is not old_grad._data:
                swap_tensors(old_grad, grad.detach())
            param._grad = old_grad

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Parameters and buffers become uninitialised tensors of the same shapes on
        ``device`` (how a module built on the meta device gets memory); with
        ``recurse=False`` only this module's own."""
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(dtype)``, ``to(device)``, ``to(tensor)``: floating parameters and buffers
        are converted to the dtype; the devices are the CPU and ``meta`` (a module on the meta
        device cannot come back with ``to``: use ``to_empty``). ``memory_format=`` lays out
        the 4-d and 5-d parameters and buffers so (e.g. ``torch.channels_last``)."""
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None:
            self._apply(lambda t: t.to(memory_format=fmt) if t.dim() in (4, 5) else t)
        target = kwargs.get("dtype")
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                target = a
            elif isinstance(a, Tensor):
                target = a.dtype
            elif a is not None:
                dev = a
        if dev is not None:  # only the CPU and the meta device exist; moves touch only meta
            to_meta = _wants_meta(dev)
            if to_meta or any(t.is_meta for t in [*self.parameters(), *self.buffers()]):
                self._apply(lambda t: t.to(dev))
        if target is None:
            return self
        if not target.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={target}"
            )
        return self._cast_floats(target)

    def _cast_floats(self, dt: _dtype.dtype) -> "Module":
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self) -> "Module":
        """Cast floating parameters and buffers to float32."""
        return self._cast_floats(_dtype.float32)

    def double(self) -> "Module":
        """Cast floating parameters and buffers to float64."""
        return self._cast_floats(_dtype.float64)

    def half(self) -> "Module":
        """Cast floating parameters and buffers to float16."""
        return self._cast_floats(_dtype.float16)

    def bfloat16(self) -> "Module":
        """Cast floating parameters and buffers to bfloat16 (needs ml_dtypes)."""
        return self._cast_floats(_dtype.bfloat16)

    def type(self, dst_type: Any) -> "Module":
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def share_memory(self) -> "Module":
        """Move every parameter and buffer (and existing gradient) to shared memory in
        place (``Tensor.share_memory_``), so processes sharing the module (Hogwild
        training) update one set of values. Returns ``self``."""
        return self._apply(lambda t: t.share_memory_())

    def cpu(self) -> "Module":
        """Parameters already live on the CPU: returns ``self``."""
        return self

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """``torch.compile`` this module's calls in place, as PyTorch's ``Module.compile``:
        nothing is compiled here, so its arguments are checked and the module runs as
        before (its state_dict keys unchanged, as in PyTorch)."""
        check_arguments(**{k: v for k, v in kwargs.items() if k in ("backend", "mode", "options")})

    def cuda(self, device: Any = None) -> "Module":
        """Raises as PyTorch's CPU build does for the first parameter or buffer it would move
        (``Tensor.cuda``'s errors); a module without any has nothing to move and is returned."""
        first = next(itertools.chain(self.parameters(), self.buffers()), None)
        if first is not None:
            first.cuda(device)
        return self

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """What a subclass adds to its ``state_dict`` under ``"_extra_state"`` beside its
        tensors (override it with ``set_extra_state``; any picklable object)."""
        raise RuntimeError(_NEVER_CALLED.format("get_extra_state"))

    def set_extra_state(self, state: Any) -> None:
        """Take back what ``get_extra_state`` returned, from a loaded ``state_dict``."""
        raise RuntimeError(_NEVER_CALLED.format("set_extra_state"))

    def state_dict(
        self, *args: Any, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> "OrderedDict[str, Tensor]":
        """An ordered dict of every parameter and persistent buffer by dotted name.

        Tensors are detached (sharing memory) unless ``keep_vars=True``.
        """
        if args:  # the legacy positional form state_dict(destination, prefix, keep_vars)
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args) :])[:3]
        if destination is None:
            destination = OrderedDict()
        self._state_dict_pre_hooks_run(prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return self._state_dict_post_hooks_run(destination, prefix)

    def _load_from_state_dict(
        self,
        state_dict: Mapping,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        """Load this module's own parameters and persistent buffers from ``state_dict``
        (keys under ``prefix``); record missing/unexpected keys and size mismatches.
        ``local_metadata["assign_to_params_buffers"]`` is ``load_state_dict``'s ``assign``."""
        assign = local_metadata.get("assign_to_params_buffers", False)
        self._load_pre_hooks_run(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        local = [(n, p, True) for n, p in self._parameters.items() if p is not None]
        local += [
            (n, b, False)
            for n, b in self._buffers.items()
            if b is not None and n not in self._non_persistent_buffers_set
        ]
        for name, current, is_param in local:
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor) and hasattr(value, "__array__"):
                value = Tensor._make(np.asarray(value))  # NumPy arrays and array-likes
            tensor_like = not isinstance(value, Tensor) and has_torch_function_unary(value)
            if not isinstance(value, Tensor) and not tensor_like:
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected '
                    f"{package_name()}.Tensor or Tensor-like object from checkpoint but "
                    f"received {type(value)}"
                )
                continue
            if (tuple(value.shape) if tensor_like else value._data.shape) != current._data.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model "
                    f"is {current.shape}."
                )
                continue
            if current.is_meta and not value.is_meta and not assign:
                warnings.warn(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                    "parameter in the current model, which is a no-op. (Did you mean to pass "
                    "`assign=True` to assign items in the state dictionary to their "
                    "corresponding key in the module instead of copying them in place?)",
                    stacklevel=2,
                )
            swap = _future.get_swap_module_params_on_conversion()
            try:
                if swap:
                    _swap_loaded(current, value, assign)
                elif assign:
                    if is_param:  # a Parameter is taken as it is (PyTorch's identity)
                        if isinstance(value, Parameter):
                            value.requires_grad_(current.requires_grad)
                        else:
                            value = Parameter(value.detach(), current.requires_grad)
                        setattr(self, name, value)
                    else:
                        self._buffers[name] = value.detach()
                elif tensor_like:  # its __torch_function__ does the copy (a lazy loader's tensor)
                    with grad_mode.no_grad():
                        handle_torch_function(Tensor.copy_, (value,), current, value)
                else:
                    _copy_into(current, value)
            except Exception as ex:  # reported with the other errors, as PyTorch does
                error_msgs.append(
                    f'While {"swapping" if swap else "copying"} the parameter named "{key}", whose dimensions '
                    f"in the model are {current.size()} and whose dimensions in the checkpoint are "
                    f"{value.size()}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            children = set(self._modules)
            own = {n for n, _, _ in local} | ({_EXTRA_STATE_KEY_SUFFIX} if has_extra else set())
            for key in state_dict:
                if key.startswith(prefix):
                    rest = key[len(prefix) :]
                    head = rest.split(".", 1)[0]
                    if head not in children and rest not in own:
                        unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module.

        Args:
            state_dict (dict): names to tensors, as ``state_dict()`` returns.
            strict (bool): require the keys to match this module's exactly. Default ``True``.
            assign (bool): take the checkpoint's tensors instead of copying into the
                existing ones. Default ``False``.

        Returns:
            ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys``.

        Raises:
            RuntimeError: listing missing and unexpected keys (when ``strict``) and size
                mismatches, by name.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None) or {}  # per-module versions, if saved
        state_dict = OrderedDict(state_dict)  # load pre-hooks may change it: never the caller's
        missing: list = []
        unexpected: list = []
        errors: list = []

        def load(module: Module, prefix: str) -> None:
            local_metadata = dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                state_dict, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            module._load_post_hooks_run(_IncompatibleKeys(missing, unexpected))

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected))
                )
            if missing:
                errors.insert(
                    0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing))
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ hooks and call
    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward``; a returned value (a tuple, or
        one value that is wrapped into a tuple) replaces the positional arguments. With
        ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and may return
        ``(args, kwargs)``."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; a returned value replaces
        the output. With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs,
        output)``; ``always_call=True`` runs it even if forward raised."""
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _backward_hook_kind(self, full: bool) -> None:
        """Record which kind of backward hook the module has; one module cannot have both."""
        if getattr(self, "_is_full_backward_hook", None) is (not full):
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = full

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """The deprecated (non-full) backward hook: ``hook(module, grad_input, grad_output)``
        of the graph node that made the module's (first) output, whose ``grad_input`` are the
        gradients of that node's inputs only; a returned tuple replaces them. Prefer
        :meth:`register_full_backward_hook`; one module cannot have both kinds."""
        self._backward_hook_kind(full=False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect
        to the module's tensor inputs are computed; a returned tuple replaces
        ``grad_input``."""
        self._backward_hook_kind(full=True)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the
        module's outputs arrive, before the module's backward; a returned tuple replaces
        ``grad_output``."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def _wrapped_call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """What calling the module runs (``__call__``): ``_call_impl``, which a subclass may override."""
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """``forward`` with the module's and the global hooks around it."""
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {result}."
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        non_full = getattr(self, "_is_full_backward_hook", None) is False
        full_hooks = [*_global_backward_hooks.values(), *([] if non_full else self._backward_hooks.values())]
        pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if full_hooks or pre_hooks:
            backward_hook = BackwardHook(self, full_hooks, pre_hooks)
            args = backward_hook.setup_input_hook(args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called
                ):
                    self._run_forward_hook(hook_id, hook, args, kwargs, None)
            raise
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            result = self._run_forward_hook(hook_id, hook, args, kwargs, output)
            if result is not None:
                output = result
        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        if non_full and self._backward_hooks:
            self._register_non_full_backward_hooks(args, output)
        return output

    def _register_non_full_backward_hooks(self, args: tuple, result: Any) -> None:
        """Hang the legacy backward hooks on the node that made the first output tensor."""
        grad_fn = first_output_tensor(result).grad_fn
        if grad_fn is not None:
            for hook in self._backward_hooks.values():
                grad_fn.register_hook(_WrappedHook(hook, self))
            self._maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def _maybe_warn_non_full_backward_hook(self, inputs: Any, result: Any, grad_fn: Any) -> None:
        message = non_full_hook_warning(inputs, result, grad_fn)
        if message is not None:
            warnings.warn(message, FutureWarning, stacklevel=2)

    def _run_forward_hook(self, hook_id: int, hook: Callable, args: tuple, kwargs: dict, output: Any) -> Any:
        if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
            return hook(self, args, kwargs, output)
        return hook(self, args, output)

    # ------------------------------------------------------------------ printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of ``repr`` (e.g. ``in_features=2, out_features=3``);
        override in subclasses."""
        return ""

    def __repr__(self) -> str:
        return self._render_repr(self._get_name(), repr)

    def _render_repr(self, name: str, child_repr: Callable[[Module], str]) -> str:
        """``name(extra_repr, (child): child_repr(child), ...)`` laid out as PyTorch's ``repr``."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(child_repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{name}({body})"
