"""``torch.utils._device``: the set of factory functions that take a ``device=`` argument,
which libraries consult in their own ``TorchFunctionMode`` to fill in a device or dtype
(lit-llama's ``EmptyInitOnDevice``). ``with torch.device(...)`` itself is kept by
``disttorch.device``, not by a mode here."""

from __future__ import annotations

_NAMES = (
    "empty empty_permuted empty_strided empty_quantized ones arange bartlett_window blackman_window eye "
    "full hamming_window hann_window kaiser_window linspace logspace rand randn randint randperm range "
    "sparse_coo_tensor sparse_compressed_tensor sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor "
    "sparse_bsc_tensor tril_indices triu_indices zeros asarray tensor as_tensor scalar_tensor"
).split()


def _device_constructors() -> set:
    """PyTorch's list of device constructors: the ``torch`` factory functions (and
    ``fft.fftfreq``/``rfftfreq``, ``nested.nested_tensor``) that create a tensor on a device;
    ``*_like`` functions are not in it, as in PyTorch. Looked up at each call, not cached:
    while a ``TorchFunctionMode`` is entered the namespaces hold the dispatching forms of
    these functions, which are what the mode's ``func`` is."""
    import disttorch as torch

    funcs = {getattr(torch, name) for name in _NAMES if hasattr(torch, name)}
    return funcs | {torch.fft.fftfreq, torch.fft.rfftfreq, torch.nested.nested_tensor}
