# library: transformers
"""transformers models in bfloat16 (torch_dtype / .to(bfloat16)): a Llama-style tiny config with grouped-query attention and RoPE, forward with a padding mask through SDPA (PyTorch's CPU flash kernel on 16-bit inputs), greedy and beam-search generate, two AdamW steps on bfloat16 parameters; a BERT classifier's bfloat16 logits and one SGD step; DistilBERT eval logits."""

import torch
import transformers
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DistilBertConfig,
    DistilBertForSequenceClassification,
    LlamaConfig,
    LlamaForCausalLM,
    set_seed,
)

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()


def r(t, n=6):
    return [f"{v:.5f}" for v in t.detach().float().flatten().tolist()[:n]]


set_seed(0)
cfg = LlamaConfig(
    vocab_size=60,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)
m = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
x = torch.randint(3, 60, (2, 7))
am = torch.ones(2, 7, dtype=torch.long)
am[0, :2] = 0
with torch.no_grad():
    out = m(input_ids=x, attention_mask=am)
print("llama", str(out.logits.dtype).rsplit(".", 1)[-1], r(out.logits[0, -1]), r(out.logits[1, -1]))
print(
    "greedy",
    m.generate(x, attention_mask=am, max_new_tokens=5, do_sample=False, pad_token_id=0)[:, 7:].tolist(),
)
print(
    "beam",
    m.generate(x, attention_mask=am, max_new_tokens=4, num_beams=2, do_sample=False, pad_token_id=0)[
        :, 7:
    ].tolist(),
)
m.train()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
for step in range(2):
    loss = m(input_ids=x, attention_mask=am, labels=x).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("llama step", step, f"{loss.item():.5f}", str(loss.dtype).rsplit(".", 1)[-1])

set_seed(0)
bert = BertForSequenceClassification(
    BertConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        num_labels=3,
        max_position_embeddings=16,
    )
).to(torch.bfloat16)
labels = torch.tensor([0, 2])
out = bert(input_ids=x, attention_mask=am, labels=labels)
out.loss.backward()
print("bert", f"{out.loss.item():.5f}", r(out.logits))
print("bert grads", r(bert.classifier.weight.grad), r(bert.bert.embeddings.LayerNorm.weight.grad))
torch.optim.SGD(bert.parameters(), lr=0.1).step()
with torch.no_grad():
    print("bert after", r(bert.eval()(input_ids=x, attention_mask=am).logits))

set_seed(0)
db = (
    DistilBertForSequenceClassification(
        DistilBertConfig(
            vocab_size=60,
            dim=32,
            n_layers=1,
            n_heads=4,
            hidden_dim=64,
            num_labels=2,
            max_position_embeddings=16,
        )
    )
    .to(torch.bfloat16)
    .eval()
)
with torch.no_grad():
    print("distilbert", r(db(input_ids=x, attention_mask=am).logits))
print("transformers", transformers.__version__, "ok")
