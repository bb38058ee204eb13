"""``torch.jit.annotations``: the ``typing`` names TorchScript code annotates with.

Code written for TorchScript imports ``List``, ``Tuple``, ``Dict``, ``Optional`` ... from here;
they are ``typing``'s own objects, as in PyTorch.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035 (re-exported names)

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union"]
