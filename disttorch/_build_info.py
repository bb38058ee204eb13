"""What PyTorch's build-time flags (``torch.has_mkl``, ``torch.compiled_with_cxx11_abi()``...)
say of disttorch: its kernels are NumPy's (LAPACK and FFT included), with neither MKL nor
OpenMP (``torch.backends.mkl``/``openmp`` answer the same)."""

__all__ = ["compiled_with_cxx11_abi", "has_lapack", "has_mkl", "has_openmp", "has_spectral"]

has_mkl = False
has_openmp = False
has_lapack = True
has_spectral = True


def compiled_with_cxx11_abi() -> bool:
    """True, as PyTorch's builds since 2.7 (no C++ extension of disttorch depends on it)."""
    return True
