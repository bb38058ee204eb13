"""``torch._inductor.config``: the back end's settings most programs set, with PyTorch's
defaults. With no compiler here they are only kept (``torch.compile`` runs eagerly)."""

from types import SimpleNamespace

from .._config_module import install_config_module

coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
freezing = False
fx_graph_cache = True
force_disable_caches = False
autotune_local_cache = True
epilogue_fusion = True
aggressive_fusion = False
permute_fusion = False
benchmark_kernel = False
compile_threads = 2
debug = False
fallback_random = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
conv_1x1_as_mm = False
shape_padding = True
layout_optimization = True
keep_output_stride = True
size_asserts = True
emulate_precision_casts = False
cpp_wrapper = False
split_reductions = True
unroll_reductions_threshold = 8

#: ``config.triton.*``: the GPU code generator's settings
triton = SimpleNamespace(cudagraphs=False, cudagraph_trees=True, unique_kernel_names=True)
#: ``config.cpp.*``: the CPU code generator's settings
cpp = SimpleNamespace(threads=-1, simdlen=None)

install_config_module(__name__)
