# library: transformers
"""transformers encoders with their own attention schemes, tiny configs through the Auto classes, forward with labels and a backward: Longformer (sliding windows; global attention on the first token for classification writes through a transposed view of an einsum result: failed before the fix) with an explicit global_attention_mask and for masked LM, BigBird block-sparse attention, DeBERTa-v2 relative attention."""

import torch
import transformers
from transformers import (
    AutoConfig,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    set_seed,
)

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()

small = dict(
    vocab_size=64,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=48,
    max_position_embeddings=130,
)
ids = torch.randint(3, 64, (2, 16), generator=torch.Generator().manual_seed(0))
am = torch.ones_like(ids)
am[1, 12:] = 0


def show(name, model, **inputs):
    out = model(input_ids=ids, attention_mask=am, **inputs)
    out.loss.backward()
    gn = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None) ** 0.5
    print(
        name,
        f"{out.loss.item():.4f}",
        tuple(out.logits.shape),
        [round(v, 4) for v in out.logits.flatten()[:3].tolist()],
        f"{gn:.4f}",
    )


lf = dict(attention_window=[4, 4], pad_token_id=1)
set_seed(0)
show(
    "longformer cls",
    AutoModelForSequenceClassification.from_config(
        AutoConfig.for_model("longformer", num_labels=2, **small, **lf)
    ),
    labels=torch.tensor([0, 1]),
)
gam = torch.zeros_like(ids)
gam[:, [0, 5]] = 1
set_seed(0)
show(
    "longformer token",
    AutoModelForTokenClassification.from_config(
        AutoConfig.for_model("longformer", num_labels=3, **small, **lf)
    ),
    labels=ids % 3,
    global_attention_mask=gam,
)
set_seed(0)
mlm = AutoModelForMaskedLM.from_config(AutoConfig.for_model("longformer", **small, **lf))
show("longformer mlm", mlm, labels=ids, global_attention_mask=gam)
set_seed(0)
show(
    "big_bird",
    AutoModelForSequenceClassification.from_config(
        AutoConfig.for_model(
            "big_bird",
            num_labels=2,
            attention_type="block_sparse",
            block_size=2,
            num_random_blocks=2,
            **small,
        )
    ),
    labels=torch.tensor([1, 0]),
)
set_seed(0)
show(
    "deberta-v2",
    AutoModelForSequenceClassification.from_config(
        AutoConfig.for_model(
            "deberta-v2",
            num_labels=2,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            position_buckets=8,
            max_relative_positions=16,
            **small,
        )
    ),
    labels=torch.tensor([1, 0]),
)
