# library: transformers
"""transformers usage: pipelines (text-classification, token-classification, fill-mask) over tiny random BERTs with a local WordPiece vocabulary; GPT-2 generate with beam search, sampling and a StoppingCriteria; save_pretrained in safetensors shards and from_pretrained; a manual LoRA adapter through register_forward_hook."""

import os

import torch
import transformers
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    StoppingCriteria,
    StoppingCriteriaList,
    pipeline,
    set_seed,
)

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
words = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
] + "the a cat dog sat on mat ran fast slow big small red blue house tree".split()
with open("vocab.txt", "w") as f:
    f.write("\n".join(words) + "\n")
tok = BertTokenizer("vocab.txt")
cfg = dict(
    vocab_size=len(words),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=64,
)
set_seed(0)
clf = pipeline(
    "text-classification",
    model=BertForSequenceClassification(BertConfig(**cfg, num_labels=3)).eval(),
    tokenizer=tok,
    device="cpu",
)
print(
    "clf",
    [(r["label"], round(r["score"], 4)) for r in clf(["the cat sat on the mat", "a big red dog ran fast"])],
)
print("clf top_k", [(r["label"], round(r["score"], 4)) for r in clf("the blue house", top_k=None)])
set_seed(0)
ner = pipeline(
    "token-classification",
    model=BertForTokenClassification(BertConfig(**cfg, num_labels=4)).eval(),
    tokenizer=tok,
)
print("ner", [(r["word"], r["entity"], round(float(r["score"]), 4)) for r in ner("the cat sat on the mat")])
set_seed(0)
fm = pipeline("fill-mask", model=BertForMaskedLM(BertConfig(**cfg)).eval(), tokenizer=tok, top_k=3)
print("fill", [(r["token_str"], round(r["score"], 4)) for r in fm("the cat [MASK] on the mat")])

set_seed(0)
gpt = GPT2LMHeadModel(
    GPT2Config(
        vocab_size=40,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=64,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
    )
).eval()
ids = torch.tensor([[5, 9, 12, 7]])
print(
    "beam", gpt.generate(ids, max_new_tokens=6, num_beams=3, do_sample=False, num_return_sequences=2).tolist()
)
set_seed(0)
print(
    "sample",
    gpt.generate(ids, max_new_tokens=6, do_sample=True, top_k=10, top_p=0.9, temperature=0.8).tolist(),
)


class StopOn(StoppingCriteria):
    def __call__(self, input_ids, scores, **kw):
        return input_ids[:, -1] == input_ids[0, 4]


print(
    "stop",
    gpt.generate(
        ids, max_new_tokens=10, do_sample=False, stopping_criteria=StoppingCriteriaList([StopOn()])
    ).tolist(),
)
gpt.save_pretrained("gpt", max_shard_size="20KB", safe_serialization=True)
files = sorted(os.listdir("gpt"))
print(
    "shards",
    len([f for f in files if f.endswith(".safetensors")]),
    "index" if "model.safetensors.index.json" in files else "no index",
)
back = GPT2LMHeadModel.from_pretrained("gpt").eval()
with torch.no_grad():
    print("reloaded", torch.equal(back(ids).logits, gpt(ids).logits))


class LoRA(torch.nn.Module):
    def __init__(self, lin, r=2):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(r, lin.weight.shape[0]) * 0.1)
        self.b = torch.nn.Parameter(torch.zeros(lin.weight.shape[1], r))

    def hook(self, module, inputs, output):
        return output + inputs[0] @ self.a.t() @ self.b.t()


set_seed(0)
for p in gpt.parameters():
    p.requires_grad_(False)
adapters = torch.nn.ModuleList()
for block in gpt.transformer.h:
    ad = LoRA(block.attn.c_attn)
    block.attn.c_attn.register_forward_hook(ad.hook)
    adapters.append(ad)
gpt.train()
opt = torch.optim.AdamW(adapters.parameters(), lr=0.01)
x = torch.randint(2, 40, (4, 10))
for step in range(3):
    loss = gpt(x, labels=x).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("lora step", step, "%.5f" % loss.item(), sum(p.numel() for p in adapters.parameters()))
