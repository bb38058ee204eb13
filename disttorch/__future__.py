"""``torch.__future__``: switches for how ``nn.Module`` conversions (``to``, ``double``,
``to_empty``...) and ``load_state_dict`` treat existing parameters.

- overwrite: a conversion gives the module new ``Parameter`` objects (the old ones, held by
  an optimizer for instance, keep their values).
- swap: a conversion, and ``load_state_dict``, swap the new values into the existing objects
  with :func:`torch.utils.swap_tensors` (their identity stays; ``load_state_dict`` asks
  ``param.module_load(value, assign)`` what to swap in).

Both off by default: the existing objects' data are replaced in place.
"""

__all__ = [
    "get_overwrite_module_params_on_conversion",
    "get_swap_module_params_on_conversion",
    "set_overwrite_module_params_on_conversion",
    "set_swap_module_params_on_conversion",
]

_flags = {"overwrite": False, "swap": False}


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions give new parameter objects."""
    _flags["overwrite"] = bool(value)


def get_overwrite_module_params_on_conversion() -> bool:
    """See :func:`set_overwrite_module_params_on_conversion`."""
    return _flags["overwrite"]


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions and ``load_state_dict`` swap new values into the existing
    parameter and buffer objects (``torch.utils.swap_tensors``)."""
    _flags["swap"] = bool(value)


def get_swap_module_params_on_conversion() -> bool:
    """See :func:`set_swap_module_params_on_conversion`."""
    return _flags["swap"]
