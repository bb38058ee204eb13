# library: transformers
"""transformers generate with return_dict_in_generate/output_scores and compute_transition_scores (greedy and beam), a StaticCache, a LogitsProcessor of one's own, repetition_penalty and min_new_tokens; a Llama-style model."""

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessor, LogitsProcessorList, set_seed

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
set_seed(0)
m = LlamaForCausalLM(
    LlamaConfig(
        vocab_size=48,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
    )
).eval()
ids = torch.tensor([[0, 7, 9, 21, 5], [0, 3, 3, 8, 40]])
out = m.generate(ids, max_new_tokens=5, do_sample=False, return_dict_in_generate=True, output_scores=True)
ts = m.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
print("greedy", out.sequences[:, 5:].tolist(), [[round(v, 4) for v in r] for r in ts.tolist()])
out = m.generate(
    ids, max_new_tokens=4, num_beams=3, do_sample=False, return_dict_in_generate=True, output_scores=True
)
ts = m.compute_transition_scores(out.sequences, out.scores, out.beam_indices, normalize_logits=False)
print(
    "beam",
    out.sequences[:, 5:].tolist(),
    [round(v, 4) for v in out.sequences_scores.tolist()],
    [[round(v, 4) for v in r] for r in ts.tolist()],
)


class NoEven(LogitsProcessor):
    def __call__(self, input_ids, scores):
        scores[:, ::2] = -float("inf")
        return scores


print(
    "processor",
    m.generate(
        ids, max_new_tokens=5, logits_processor=LogitsProcessorList([NoEven()]), do_sample=False
    ).tolist(),
)
print(
    "penalty",
    m.generate(ids, max_new_tokens=5, repetition_penalty=1.5, min_new_tokens=3, do_sample=False).tolist(),
)
print(
    "static",
    m.generate(ids, max_new_tokens=5, cache_implementation="static", do_sample=False)[:, 5:].tolist(),
)
