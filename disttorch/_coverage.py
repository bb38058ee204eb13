"""Which public names of PyTorch disttorch does not provide, and why: the one exclusion list
the README cites and ``tests/math/test_math_coverage.py`` checks against ``dir(torch)``,
``dir(torch.Tensor)``, ``torch.linalg``, ``torch.fft`` and ``torch.special``.

``EXCLUDED`` holds names with no meaning on a NumPy CPU build, grouped by reason.
``NOT_YET`` holds real gaps, functions a user could call and that we still owe: empty today.
"""

from __future__ import annotations

import re

_REASONS = {
    "TorchScript / JIT / FX internals (disttorch runs plain Python)": (
        "AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType BufferDict CallStack Capsule "
        "ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType "
        "ConcreteModuleTypeBuilder DeepCopyMemoTable DeviceObjType DictType EnumType ErrorReport "
        "ExecutionPlan FileCheck FloatType FunctionSchema FutureType Gradient Graph "
        "GraphExecutorState IODescriptor InferredType IntType InterfaceType JITException ListType "
        "LiteScriptModule LockingLogger LoggerBase Node NoneType NoopLogger NumberType OperatorInfo "
        "OptionalType PyObjectType RRefType ScriptClass ScriptClassFunction ScriptDict "
        "ScriptDictIterator ScriptDictKeyIterator ScriptList ScriptListIterator "
        "ScriptMethod ScriptModuleSerializer ScriptObject ScriptObjectProperty StaticModule "
        "StreamObjType StringType SymBoolType SymIntType TensorType TracingState TupleType Type "
        "UnionType Use Value AggregationType AVG SUM import_ir_module "
        "import_ir_module_from_buffer parse_ir parse_schema parse_type_comment merge_type_from_type_comment "
        "unify_type_list classes PRIVATE_OPS ThroughputBenchmark BenchmarkConfig BenchmarkExecutionStats "
        "Tag DispatchKey DispatchKeySet ExcludeDispatchKeyGuard DisableTorchFunction "
        "DisableTorchFunctionSubclass FatalError "
        "DeserializationStorageContext SerializationStorageContext sym_constrain_range "
        "sym_constrain_range_for_size sym_fresh_size "
        "slice_inverse segment_reduce classproperty "
        "thread_safe_generator hash_tensor cpp index "
        "DType DimOrDims"
    ),
    "quantisation beyond disttorch's quantized tensors and modules (quantized storages, "
    "free-function quantized kernels)": (
        "QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage quint2x4 "
        "quint4x2 quantize_per_tensor_dynamic quantized_batch_norm quantized_gru quantized_gru_cell "
        "quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d "
        "quantized_rnn_relu_cell quantized_rnn_tanh_cell choose_qparams_optimized "
        "fused_moving_avg_obs_fake_quant"
    ),
    "vendor kernels (cuDNN, MIOpen, oneDNN/MKL-DNN, fbgemm, Vulkan, MPS, IPU, XLA, MAIA)": (
        "cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu "
        "cudnn_convolution_relu cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable "
        "miopen_batch_norm miopen_convolution miopen_convolution_add_relu miopen_convolution_relu "
        "miopen_convolution_transpose miopen_ctc_loss miopen_depthwise_convolution miopen_rnn "
        "mkldnn_adaptive_avg_pool2d mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d "
        "mkldnn_max_pool3d mkldnn_rnn_layer fbgemm_linear_fp16_weight "
        "fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
        "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight "
        "fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix is_vulkan_available to_mkldnn "
        "is_mkldnn is_vulkan is_ipu is_xla is_maia is_mps is_mtia ipu "
        "Tensor.mtia"
    ),
    "autocast switches of IPU and XLA devices (deprecated in PyTorch; no such devices here)": (
        "get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled is_autocast_xla_enabled "
        "set_autocast_ipu_dtype set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled"
    ),
    "PyTorch's own installation, C++ monitoring and packaging machinery": (
        "get_file_path prepare_multiprocessing_environment profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 "
        "monitor package"
    ),
    "dtypes NumPy cannot hold (sub-byte, fp4; complex32 is a dtype without tensors)": (
        "bit bits16 bits1x8 bits2x4 bits4x2 bits8 float4_e2m1fn_x2 int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 "
        "uint6 uint7"
    ),
    "modules torch imports for its own use": (
        "builtins ctypes glob importlib inspect math os platform sys textwrap threading warnings "
        "functools torch TYPE_CHECKING USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH "
        "common_args common_notes factory_common_args multi_dim_common Tensor"
    ),
    "functionalisation internals": (
        "batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt batch_norm_gather_stats "
        "batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats native_batch_norm "
        "native_channel_shuffle native_dropout native_group_norm native_layer_norm native_norm "
        "convolution conv_tbc constant_pad_nd affine_grid_generator grid_sampler_2d grid_sampler_3d "
        "embedding_renorm_ empty_quantized norm_except_dim resize_as_sparse_ sparse_resize_ "
        "sparse_resize_and_clear_ saddmm dsmm hsmm _nnz"
    ),
    "legacy storage base classes and memory pinning/sharing (NumPy arrays own their memory)": (
        "Storage StorageBase "
        "storage_type is_set_to pin_memory "
        "is_pinned share_memory_ is_shared record_stream from_file module_load reinforce volatile "
        "as_strided_scatter data_ptr const_data_ptr new new_empty_strided"
    ),
    "legacy sparse tensor types (deprecated constructors; torch.sparse_coo_tensor builds them)": (
        "sparse.BFloat16Tensor sparse.ByteTensor sparse.CharTensor sparse.DoubleTensor sparse.FloatTensor "
        "sparse.HalfTensor sparse.IntTensor sparse.LongTensor sparse.ShortTensor"
    ),
    "semi-structured (2:4) sparsity: CUDA-only in PyTorch (its CPU build raises 'Only CUDA tensors are "
    "currently supported')": (
        "sparse.semi_structured sparse.to_sparse_semi_structured sparse.SparseSemiStructuredTensor "
        "sparse.SparseSemiStructuredTensorCUSPARSELT sparse.SparseSemiStructuredTensorCUTLASS"
    ),
    "legacy autograd and name APIs removed or CUDA-only in PyTorch": (
        "output_nr name names rename rename_ refine_names align_as align_to unflatten_dense_tensors"
    ),
}
EXCLUDED: dict[str, str] = {n: reason for reason, names in _REASONS.items() for n in names.split()}

NOT_YET: set[str] = set()

_IN_PLACE = re.compile(r"^[a-z][a-z0-9_]*_$")


def is_accounted(name: str) -> bool:
    """True if ``name`` is excluded or a known gap."""
    return name in EXCLUDED or name in NOT_YET
