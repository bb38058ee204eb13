"""Usages of the ecosystem libraries beyond the yardstick's scripts (``probes/t_NAME.py``, each
with PyTorch 2.13's output in ``probes/reference/``), run and judged as the yardstick runs
its own: an unmodified script with ``import torch`` meaning disttorch, its stdout compared
with PyTorch's. Most probes cover calls that failed before a fix (transformers'
``torch._check_with``, Opacus's expanded weights, Lightning's PyTorch profiler, accelerate's
batch dispatcher, PyG's ``GraphUNet``, PyG's ``EdgeIndex``/``Index`` tensor subclasses and
its ``to_hetero`` tracer, PyG's Index/EdgeIndex through the ATen operators their dispatch tables name, datasets'
fingerprints of ``map`` functions over torch objects, bfloat16 training in Lightning and Fabric
and bfloat16 transformers models: dropout, layer norm, flash attention, SGD and AdamW on 16-bit tensors,
accelerate's ``notebook_launcher`` (its ``torch.numa.binding`` import), ``accelerate launch --multi_gpu`` (``torch.distributed.run.get_args_parser`` and ``run``), Lightning's manual optimisation
under DDP (``torch._C._distributed_c10d.Reducer``), accelerate's ``clip_grad_value_`` with no
gradient (PyTorch raises), Opacus's adaptive clipping (``torch.normal`` with a 0-dim tensor std and
``size``), transformers' Longformer global attention (an in-place write through a view of an
einsum's permuted result), PyG's ASAPooling (``index_select`` of a sparse COO matrix), PyG's ``HashTensor`` repr (``torch._tensor_str._str_intern``), transformers' SEW-D (``torch._C.Graph``/``Value`` annotations at import, and its ``XSoftmax`` Function, which changes its output in place before saving it), TensorBoard's ``add_graph`` (its ``step1`` run metadata), ``torch.jit.trace`` of transformers models (a traced module's ``ModelOutput`` as a plain dict), Lightning's ``bf16-mixed`` training through ``LayerNorm`` (a bfloat16 input with float32 parameters: their gradients summed in a bfloat16 buffer, row by row), ``torch.export`` of transformers models (decorated
forwards, sizes read by the forward, ``ModelOutput``), ``torch.export`` running a printing forward once and
``torch.ops.aten`` operators called before anything loads them (einops' export probe)); others keep
working usages working (Lightning's Tuner; Lightning's callbacks, loggers and loop limits;
transformers' generate variants; accelerate's meta-device loading and offloading; Opacus's
grad-sample modes, DP recurrent layers and accountants; PyG's attention convolutions, autoencoders and explainer;
torchmetrics' image, text, retrieval, audio and clustering metrics, where the signal-distortion
ratio's ``flip(dims=...)`` failed before a fix; timm's models and transforms over disttorch's torchvision; timm's training kit, where FX feature extraction
failed before ``torchvision.models.feature_extraction``; BERT masked-LM with its collator, T5 and
BART beam search with ``no_repeat_ngram_size``, GPT-2 with gradient checkpointing; RoBERTa and T5 with reentrant gradient checkpointing, where None arguments failed before a fix; accelerate's
checkpoint naming, accumulation over two models and LocalSGD; einops layers and ``pack``/``unpack``
with einx, safetensors' shared-storage checks and slices, and datasets into a DataLoader; x-transformers' attention and feed-forward variants, accelerate's model hooks,
sharded checkpoints and TensorBoard tracker, PyG's message passing with max/min/mul and multi-aggregations and its
scatter/softmax utilities; Lightning's bf16-mixed loop with gradient accumulation, clipping, top-k
checkpoints restored by ``ckpt_path="best"`` and a learning-rate monitor, and its automatic DDP on two
CPU processes; transformers' Trainer with evaluation, metrics and the best checkpoint reloaded; transformers' pipelines,
beam search, sampling, stopping criteria, sharded safetensors and a LoRA forward hook; transformers' transition scores, logits processors and
static cache in generation; accelerate's gradient accumulation, ``save_state``/``load_state`` and
bf16 mixed precision; torchmetrics' compute groups and retrieval
metrics; PyG's GAT/GIN mini-batches with pooling, its dense-batch and subgraph
utilities, SAGEConv and TopKPooling; Opacus's ``make_private_with_epsilon``). A probe skips when its library is not installed in
the torch-free Python (``DISTTORCH_ECOSYSTEM_PYTHON``), and all skip without the yardstick's
``run.py`` (its runner and comparison are reused)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from test_ecosystem import CORPUS, _installed, _python, _runner

PROBES = Path(__file__).resolve().parent / "probes"
NAMES = sorted(p.stem[2:] for p in PROBES.glob("t_*.py"))


def _imported(script: Path) -> list:
    """The top-level packages a probe imports at its top (besides torch): a probe of one
    library may use others (einops' with einx, safetensors and datasets)."""
    names = re.findall(r"^(?:from|import) (\w+)", script.read_text(), re.MULTILINE)
    return sorted({n for n in names if n not in ("torch", "__future__") and n not in sys.stdlib_module_names})


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", NAMES)
def test_probe_matches_pytorch(name, tmp_path):
    if not (CORPUS / "run.py").is_file():
        pytest.skip(f"no ecosystem runner at {CORPUS}")
    python = _python()
    if python is None:
        pytest.skip("no Python without PyTorch to run the probes in (set DISTTORCH_ECOSYSTEM_PYTHON)")
    run = _runner()
    (probe,) = run.select(run.discover(str(PROBES)), [name])
    for module in [probe["library"].replace("-", "_"), *_imported(PROBES / f"t_{name}.py")]:
        if not _installed(python, module):
            pytest.skip(f"{module} is not installed for {python}")
    result = run.run_script(probe, [python, "-m", "disttorch.as_torch"], str(tmp_path), 600)
    verdict = run.judge(probe, result, str(PROBES / "reference"), 600)
    assert verdict["ok"], f"{name}: {verdict['detail']}\n{result['stderr'][-3000:]}"
