"""``torch._dynamo.eval_frame``: ``OptimizedModule`` and ``is_dynamo_supported``."""

from __future__ import annotations

from typing import Any

from ..nn.modules.module import Module

__all__ = ["OptimizedModule", "is_dynamo_supported"]


def is_dynamo_supported() -> bool:
    """True: ``torch.compile`` can be called on this platform (here it returns its argument)."""
    return True


class OptimizedModule(Module):
    """A module wrapped by the compiler, as PyTorch's ``torch.compile(module)`` returns it:
    the original is ``_orig_mod`` (so its state_dict keys carry the ``_orig_mod.`` prefix),
    calling runs it, and other attributes are read from it. disttorch's ``torch.compile``
    returns the module itself, so only code that builds one explicitly gets one."""

    def __init__(self, mod: Module, dynamo_ctx: Any = None) -> None:
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(super().__getattr__("_orig_mod"), name)
