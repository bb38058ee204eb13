"""``torch._dynamo.config``: the compiler's settings, with PyTorch's defaults. Libraries set
them (``capture_scalar_outputs = True``, ``patch(suppress_errors=True)``); with no compiler
here they are only kept. ``cache_size_limit`` and ``accumulated_cache_size_limit`` are PyTorch's aliases of the
``recompile_limit`` settings."""

from .._config_module import install_config_module

accumulated_recompile_limit = 256
recompile_limit = 8
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
suppress_errors = False
verbose = False
optimize_ddp = True
assume_static_by_default = True
automatic_dynamic_shapes = True
inline_inbuilt_nn_modules = True
skip_fwd_side_effects_in_bwd_under_checkpoint = False
error_on_recompile = False
force_parameter_static_shapes = True
guard_nn_modules = True
compiled_autograd = False
dynamic_shapes = True
specialize_int = False
specialize_float = False
allow_unspec_int_on_nn_module = False
allow_rnn = False
raise_on_ctx_manager_usage = True
capture_func_transforms = True

install_config_module(
    __name__,
    {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"},
)
