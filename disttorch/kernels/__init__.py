"""NumPy kernels: the speed tricks the op Functions call, apart from their math.

No Tensor and nothing else of disttorch here: arrays in, arrays out. A few loops also have a
compiled form, used when the optional numba is installed (``jit.py``). Each kernel has its
measurement in ``benchmarks/kernels.py`` (against the plain NumPy spelling and, when
installed, PyTorch).

- ``threads.py``: the intra-op thread budget (``torch.set_num_threads``) and the pool that
  splits a kernel's work along a leading axis, BLAS held to one thread per part; matrix
  products sized to their BLAS threads; ``benchmarks/threads.py`` measures the cut-over.
  ``thread_pool.py``: the worker threads; ``spin_wait.py``: their compiled waiting loops.
- ``gemm_parts.py``, ``cblas_gemm.py``: matrix products as rows of integers, and the compiled
  loop that runs them through NumPy's own BLAS ``gemm`` without the GIL.
- ``erf.py``: the error function (series and continued fraction), the package's one erf.
- ``gelu.py``: exact GELU and its derivative in one pass over cache-sized blocks;
  ``gelu_blocks.py``: a float32 block as two compiled loops around NumPy's ``exp``.
- ``relu.py``: ``max(x, 0)`` against cached rows of zeros (vectorised where a scalar is not).
- ``conv_shifted.py``: stride-1 convolution as K shifted matrix products (no im2col);
  ``conv_products.py``: a block's products and sums as one compiled call without the GIL.
- ``conv_columns.py``: convolution by columns (im2col), its weight gradient and col2im.
- ``softmax.py``: softmax and log-softmax along one axis (also attention's, in place).
- ``norms.py``: row normalisation for layer and group norm, and its gradient.
- ``power.py``: ``x ** e`` for integer and half-integer scalar exponents.
- ``windows.py``: strided window views, padding and cropping for convolution and pooling.
- ``reductions.py``: column sums as one BLAS product; reductions and scans split over threads.
- ``special.py``: the special functions of ``torch.special`` and the distributions (gamma
  family, zeta, erfc/erfcx/erfinv, normal CDF, Bessel, incomplete gamma, polynomials), float64.
- ``lu.py``: LU factorisation with partial pivoting (batched) and its unpacking into P, L, U.
- ``rnn.py``: the time loops of RNN, LSTM and GRU (forward saving the gates, backward through time).
- ``lstm_cell.py``: an LSTM step's element-wise arithmetic, as NumPy passes or compiled loops.
- ``jit.py``: compiles a kernel's loops with numba once per process (``DISTTORCH_JIT=0``: off).
- ``mt19937.py``, ``torch_random.py``, ``cephes_f32.py``: PyTorch's CPU random streams
  (dropout masks drawn by a compiled loop when numba is there).
- ``sparse.py``: sparse @ dense row sums and sampled dot products in cache-sized blocks
  (measured in ``benchmarks/sparse.py``).
"""
