# library: transformers
"""transformers generate variants: beam search with num_return_sequences, top-k/top-p sampling with a seed, repetition_penalty, StoppingCriteria, scores output."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, StoppingCriteria, StoppingCriteriaList, set_seed

torch.set_num_threads(1)
set_seed(0)
cfg = GPT2Config(
    vocab_size=50,
    n_positions=64,
    n_embd=32,
    n_layer=2,
    n_head=4,
    bos_token_id=0,
    eos_token_id=1,
    pad_token_id=1,
)
m = GPT2LMHeadModel(cfg).eval()
print("params", m.num_parameters(), m.num_parameters(only_trainable=True))
ids = torch.tensor([[5, 7, 9, 11], [3, 4, 5, 6]])
att = torch.ones_like(ids)
out = m.generate(
    ids, attention_mask=att, max_new_tokens=6, num_beams=3, num_return_sequences=2, do_sample=False
)
print("beam", out.tolist())
out = m.generate(
    ids,
    attention_mask=att,
    max_new_tokens=6,
    num_beams=3,
    num_return_sequences=3,
    output_scores=True,
    return_dict_in_generate=True,
    length_penalty=0.5,
)
print("beam scores", [round(float(s), 4) for s in out.sequences_scores])
print("beam seqs", out.sequences.tolist())
set_seed(1)
out = m.generate(
    ids, attention_mask=att, max_new_tokens=8, do_sample=True, top_k=5, top_p=0.9, temperature=0.7
)
print("sample", out.tolist())
set_seed(2)
out = m.generate(ids, attention_mask=att, max_new_tokens=8, do_sample=True, top_k=0, top_p=0.5)
print("topp", out.tolist())
out = m.generate(ids, attention_mask=att, max_new_tokens=8, repetition_penalty=1.5, no_repeat_ngram_size=2)
print("reppen", out.tolist())


class StopOn(StoppingCriteria):
    def __call__(self, input_ids, scores, **kw):
        return input_ids[:, -1] == 13


out = m.generate(
    ids, attention_mask=att, max_new_tokens=10, stopping_criteria=StoppingCriteriaList([StopOn()])
)
print("stop", out.tolist())
out = m.generate(
    ids,
    attention_mask=att,
    max_new_tokens=5,
    output_scores=True,
    output_logits=True,
    return_dict_in_generate=True,
)
print(
    "greedy scores",
    [round(float(s.max()), 4) for s in out.scores],
    [round(float(s.sum()), 3) for s in out.logits],
)
tr = m.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
print("trans", [[round(float(v), 4) for v in r] for r in tr])
set_seed(3)
out = m.generate(
    ids, attention_mask=att, max_new_tokens=5, do_sample=True, num_beams=2, num_return_sequences=2
)
print("beam sample", out.tolist())
ids2 = torch.tensor([[1, 1, 5, 7], [3, 4, 5, 6]])
att2 = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
out = m.generate(
    ids2, attention_mask=att2, max_new_tokens=5, min_new_tokens=3, bad_words_ids=[[13]], suppress_tokens=[2]
)
print("leftpad", out.tolist())
