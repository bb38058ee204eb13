"""``torch._tensor_str``: the printing options and pieces of a tensor's repr that libraries
reuse for reprs of their own tensor types (PyG's ``EdgeIndex`` and ``HashTensor``, its OFF
writer)."""

from __future__ import annotations

from typing import Any

from ._repr import _opts, array_body, set_printoptions, tensor_repr, with_suffixes

__all__ = ["PRINT_OPTS", "set_printoptions"]


class _PrinterOptions:
    """The current print options (``precision``, ``threshold``, ``edgeitems``, ``linewidth``,
    ``sci_mode``), read and set live: ``set_printoptions`` and these attributes agree."""

    def __getattr__(self, name: str) -> Any:
        if name in _opts:
            return _opts[name]
        raise AttributeError(f"'PrinterOptions' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _opts:
            raise AttributeError(f"'PrinterOptions' object has no attribute '{name}'")
        _opts[name] = value


PRINT_OPTS = _PrinterOptions()


def _tensor_str(self: Any, indent: int) -> str:
    """The bracketed elements of tensor ``self``, continuation lines indented by ``indent``."""
    return array_body(self.detach()._data, indent)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, force_newline: bool) -> str:
    """``tensor_str`` followed by ``, suffix`` items (wrapped at the line width) and ``)``."""
    if force_newline and suffixes:
        return tensor_str + "".join(",\n" + " " * indent + s for s in suffixes) + ")"
    return with_suffixes(tensor_str, suffixes, indent)


def _str_intern(inp: Any, *, tensor_contents: str | None = None) -> str:
    """The repr of tensor ``inp`` (named by its class when a subclass), with ``tensor_contents``
    in place of its bracketed elements when given."""
    return tensor_repr(inp, tensor_contents)
