# library: transformers
"""SEW-D (its modeling module annotates an ONNX symbolic with torch._C.Graph/Value: failed at import before the fix) CTC and classification, and DeBERTa masked LM."""

import torch
import transformers as T
from transformers import set_seed

torch.set_num_threads(1)


def r(t):
    return [round(float(v), 4) for v in t.flatten()[:5]]


kw = dict(
    vocab_size=12,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=48,
    conv_dim=(16, 16),
    conv_stride=(5, 2),
    conv_kernel=(10, 3),
    squeeze_factor=1,
    num_conv_pos_embeddings=8,
    num_conv_pos_embedding_groups=4,
    position_buckets=8,
    max_position_embeddings=64,
    mask_time_prob=0.0,
)
set_seed(0)
m = T.SEWDForCTC(T.SEWDConfig(**kw))
audio = torch.randn(2, 400)
out = m(audio, labels=torch.tensor([[1, 2, 3, -100], [4, 5, -100, -100]]))
out.loss.backward()
print("sew-d ctc", round(float(out.loss), 4), tuple(out.logits.shape), r(out.logits[0, 0]))
print("grad", round(float(sum(p.grad.abs().sum() for p in m.parameters() if p.grad is not None)), 3))
set_seed(0)
c = T.SEWDForSequenceClassification(T.SEWDConfig(num_labels=3, **kw)).eval()
print("sew-d cls", r(c(audio).logits))
set_seed(0)
d = T.DebertaForMaskedLM(
    T.DebertaConfig(
        vocab_size=40,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=32,
        relative_attention=True,
        pos_att_type=["c2p", "p2c"],
        max_relative_positions=8,
    )
)
ids = torch.tensor([[2, 5, 7, 9, 3], [2, 8, 6, 3, 0]])
o = d(ids, attention_mask=(ids != 0).long(), labels=ids)
print("deberta mlm", round(float(o.loss), 4), r(o.logits[0, 1]))
