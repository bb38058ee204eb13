# library: transformers
"""BERT masked-LM with DataCollatorForLanguageModeling, T5 and BART seq2seq with labels and beam search (num_beams=3, no_repeat_ngram_size), GPT-2 with gradient checkpointing, output_attentions/output_hidden_states."""

import torch
import transformers
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertForMaskedLM,
    DataCollatorForLanguageModeling,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

torch.set_num_threads(1)
transformers.set_seed(0)

words = "the a cat dog sat ran on mat log big small red".split()
vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
for w in words:
    vocab[w] = len(vocab)
tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
tk.pre_tokenizer = pre_tokenizers.Whitespace()
tok = PreTrainedTokenizerFast(
    tokenizer_object=tk,
    pad_token="[PAD]",
    unk_token="[UNK]",
    cls_token="[CLS]",
    sep_token="[SEP]",
    mask_token="[MASK]",
)
sents = ["the cat sat on the mat", "a dog ran on a log", "the big red dog sat", "a small cat ran"]
enc = [tok(s) for s in sents]
coll = DataCollatorForLanguageModeling(tok, mlm=True, mlm_probability=0.3, return_tensors="pt")
batch = coll(enc)
print("collator", sorted(batch.keys()), tuple(batch["input_ids"].shape), int((batch["labels"] != -100).sum()))
print("masked ids", batch["input_ids"].tolist())

bcfg = BertConfig(
    vocab_size=len(vocab),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
    attn_implementation="eager",
)
bert = BertForMaskedLM(bcfg)
opt = torch.optim.AdamW(bert.parameters(), lr=1e-3)
for step in range(3):
    out = bert(**batch)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"mlm step {step} loss {out.loss.item():.5f}")
bert.eval()
with torch.no_grad():
    o = bert(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        output_attentions=True,
        output_hidden_states=True,
    )
print(
    "bert hidden",
    len(o.hidden_states),
    tuple(o.hidden_states[-1].shape),
    "attn",
    len(o.attentions),
    tuple(o.attentions[0].shape),
    f"{o.attentions[0].sum(-1).mean().item():.5f}",
)
print("mlm pred", o.logits.argmax(-1)[0].tolist())

# T5
tcfg = T5Config(
    vocab_size=40,
    d_model=32,
    d_kv=8,
    d_ff=64,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=4,
    decoder_start_token_id=0,
    pad_token_id=0,
    eos_token_id=1,
    relative_attention_num_buckets=8,
)
t5 = T5ForConditionalGeneration(tcfg)
src = torch.tensor([[5, 6, 7, 8, 1], [9, 10, 11, 1, 0]])
srcm = (src != 0).long()
labels = torch.tensor([[8, 7, 6, 1], [11, 10, 1, -100]])
opt = torch.optim.AdamW(t5.parameters(), lr=3e-3)
for step in range(3):
    out = t5(input_ids=src, attention_mask=srcm, labels=labels)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"t5 step {step} loss {out.loss.item():.5f} logits {tuple(out.logits.shape)}")
t5.eval()
g = t5.generate(
    input_ids=src,
    attention_mask=srcm,
    num_beams=3,
    no_repeat_ngram_size=2,
    max_new_tokens=6,
    early_stopping=True,
)
print("t5 beams", g.tolist())
g = t5.generate(
    input_ids=src,
    attention_mask=srcm,
    num_beams=3,
    num_return_sequences=2,
    max_new_tokens=5,
    output_scores=True,
    return_dict_in_generate=True,
)
print("t5 seqs", g.sequences.tolist(), [f"{x:.4f}" for x in g.sequences_scores.tolist()])

# BART
acfg = BartConfig(
    vocab_size=40,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    max_position_embeddings=32,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
    decoder_start_token_id=2,
    forced_eos_token_id=2,
    attn_implementation="eager",
)
bart = BartForConditionalGeneration(acfg)
src = torch.tensor([[0, 5, 6, 7, 8, 2], [0, 9, 10, 11, 2, 1]])
srcm = (src != 1).long()
labels = torch.tensor([[0, 8, 7, 6, 2], [0, 11, 10, 2, -100]])
opt = torch.optim.AdamW(bart.parameters(), lr=3e-3)
for step in range(3):
    out = bart(input_ids=src, attention_mask=srcm, labels=labels)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"bart step {step} loss {out.loss.item():.5f}")
bart.eval()
g = bart.generate(
    input_ids=src,
    attention_mask=srcm,
    num_beams=3,
    no_repeat_ngram_size=2,
    max_new_tokens=7,
    min_new_tokens=4,
    length_penalty=0.8,
)
print("bart beams", g.tolist())
with torch.no_grad():
    o = bart(
        input_ids=src,
        attention_mask=srcm,
        decoder_input_ids=labels.clamp(min=0)[:, :3],
        output_attentions=True,
        output_hidden_states=True,
    )
print(
    "bart attn",
    len(o.encoder_attentions),
    len(o.decoder_attentions),
    len(o.cross_attentions),
    tuple(o.cross_attentions[0].shape),
    len(o.encoder_hidden_states),
    f"{o.logits.std().item():.5f}",
)

# GPT-2 with gradient checkpointing
gcfg = GPT2Config(vocab_size=50, n_positions=32, n_embd=32, n_layer=2, n_head=4, attn_implementation="eager")
gpt = GPT2LMHeadModel(gcfg)
gpt.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
print("gc", gpt.is_gradient_checkpointing)
gpt.train()
ids = torch.randint(0, 50, (2, 12))
opt = torch.optim.SGD(gpt.parameters(), lr=0.1)
for step in range(2):
    out = gpt(input_ids=ids, labels=ids)
    out.loss.backward()
    gn = sum(p.grad.pow(2).sum() for p in gpt.parameters() if p.grad is not None).sqrt()
    opt.step()
    opt.zero_grad()
    print(f"gpt2 ckpt step {step} loss {out.loss.item():.5f} gradnorm {gn.item():.5f}")
gpt.gradient_checkpointing_disable()
gpt.gradient_checkpointing_enable()  # reentrant default
out = gpt(input_ids=ids, labels=ids)
out.loss.backward()
print(
    f"gpt2 reentrant loss {out.loss.item():.5f} grad {gpt.transformer.wte.weight.grad.abs().sum().item():.5f}"
)
gpt.eval()
with torch.no_grad():
    o = gpt(input_ids=ids, output_attentions=True, output_hidden_states=True)
print(
    "gpt2 hs",
    len(o.hidden_states),
    "attn",
    tuple(o.attentions[1].shape),
    f"{o.attentions[1][0, 0].triu(1).abs().sum().item():.5f}",
)
print("transformers", transformers.__version__, "ok")
