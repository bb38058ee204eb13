"""``torch._dynamo.config``: the compiler's settings, with PyTorch's defaults. Libraries set
them (``capture_scalar_outputs = True``, ``patch(suppress_errors=True)``); with no compiler
here they are only kept. ``cache_size_limit`` is PyTorch's alias of ``recompile_limit``."""

from .._config_module import install_config_module

accumulated_cache_size_limit = 256
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

install_config_module(__name__, {"cache_size_limit": "recompile_limit"})
