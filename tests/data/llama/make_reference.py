#!/usr/bin/env python3
"""Reference data for tessel's Llama-family model (models/llama.hpp): tiny random models saved as
Hugging Face writes them, their float32 logits and greedy generations, from transformers'
LlamaForCausalLM itself.

Run from anywhere (paths are relative to this file):

    python3 -m venv /tmp/hfenv
    /tmp/hfenv/bin/pip install torch transformers safetensors numpy   # CPU torch suffices
    /tmp/hfenv/bin/python tests/data/llama/make_reference.py

Three models, one per config difference the loader must honour:
  tiny_llama.safetensors  Llama 3 style: grouped-query attention (8 query heads, 2 key/value
                          heads), rope theta 500000, untied LM head, no biases, an odd vocabulary
                          (131, which no mesh axis divides: uneven shards)
  tiny_qwen2.safetensors  biases on q, k, v (as Qwen2) and on the output projection (Llama's
                          attention_bias); the LM head tied to the embedding; 4 query heads over
                          4 key/value heads (no grouping)
  tiny_llama31.safetensors  Llama 3.1's rope scaling (rope_type llama3) across all three bands
and reference.txt: for each model, its config, the input ids, the float32 logits (hex bits) and 32
greedy tokens after each prompt (`generate(do_sample=False)`, with the KV cache). tiny_llama is
also written in bfloat16 (tiny_llama_bf16.safetensors) with HF's bfloat16 logits of the same ids
(reference_bf16.txt).

Deterministic: torch.manual_seed(0) for the weights (norm weights then set to 1 + 0.1 N(0, 1), biases
to 0.02 N(0, 1) with a generator seeded 1, so a forward that ignores them fails), ids from
numpy.random.default_rng(52).
"""

import os
import platform

import numpy as np
import torch
import transformers
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, SEQ, PROMPT, NEW = 2, 12, 5, 32

MODELS = {
    "tiny_llama": dict(vocab_size=131, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                       num_attention_heads=8, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                       rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False, attention_bias=False),
    "tiny_qwen2": dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=4, head_dim=8, max_position_embeddings=64,
                       rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True, attention_bias=True),
    # Llama 3.1's rope scaling: with head_dim 16 and an original context of 64 its eight frequencies
    # fall in all three bands (wavelength 6.3: kept; 32.5: smoothed; 168 and longer: divided by 8).
    "tiny_llama31": dict(vocab_size=77, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=256,
                         rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False, attention_bias=False,
                         rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                           original_max_position_embeddings=64)),
}


def config_words(cfg):
    """The config line's `key value` pairs, rope_scaling's as rope_scaling_<key> value."""
    words = []
    for k, v in cfg.items():
        if isinstance(v, dict):
            words += [f"{k}_{kk} {vv}" for kk, vv in v.items()]
        else:
            words.append(f"{k} {v}")
    return " ".join(words)


def build(cfg):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(**cfg)
    config._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(config).to(torch.float32).eval()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
    return model


def hexes(a):
    return [f"{int(v):08x}" for v in np.asarray(a, np.float32).reshape(-1).view(np.uint32)]


def write_bf16():
    """tiny_llama in bfloat16: its weights rounded (tiny_llama_bf16.safetensors) and HF's bfloat16
    logits of the same ids (reference_bf16.txt, each bfloat16 value as float32 bits)."""
    name, cfg = "tiny_llama", MODELS["tiny_llama"]
    model = build(cfg).to(torch.bfloat16)
    state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(HERE, f"{name}_bf16.safetensors"), metadata={"format": "pt"})
    rng = np.random.default_rng(52)  # the f32 case's ids
    ids = rng.integers(0, cfg["vocab_size"], size=(BATCH, SEQ)).astype(np.int64)
    with torch.no_grad():
        logits = model(torch.from_numpy(ids)).logits.to(torch.float32).numpy()
    out = [f"# generated by tests/data/llama/make_reference.py with torch {torch.__version__}, "
           f"transformers {transformers.__version__}: {name} in bfloat16",
           f"ids {BATCH} {SEQ} " + " ".join(str(int(v)) for v in ids.reshape(-1)),
           f"logits {BATCH} {SEQ} {cfg['vocab_size']}"]
    h = hexes(logits)
    out += [" ".join(h[i:i + 8]) for i in range(0, len(h), 8)]
    with open(os.path.join(HERE, "reference_bf16.txt"), "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    out = []
    out.append(f"# generated by tests/data/llama/make_reference.py with torch {torch.__version__}, "
               f"transformers {transformers.__version__}, numpy {np.__version__}, python {platform.python_version()}")
    rng = np.random.default_rng(52)
    for name, cfg in MODELS.items():
        model = build(cfg)
        state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
        if cfg["tie_word_embeddings"]:
            state.pop("lm_head.weight", None)  # as save_pretrained writes a tied model
        save_file(state, os.path.join(HERE, f"{name}.safetensors"), metadata={"format": "pt"})
        ids = rng.integers(0, cfg["vocab_size"], size=(BATCH, SEQ)).astype(np.int64)
        with torch.no_grad():
            logits = model(torch.from_numpy(ids)).logits.numpy()
            prompt = torch.from_numpy(ids[:, :PROMPT])
            tokens = model.generate(prompt, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False,
                                    pad_token_id=0, eos_token_id=None).numpy()[:, PROMPT:]
        assert tokens.shape == (BATCH, NEW)
        out.append(f"model {name}")
        out.append("config " + config_words(cfg))
        out.append(f"ids {BATCH} {SEQ} " + " ".join(str(int(v)) for v in ids.reshape(-1)))
        out.append(f"logits {BATCH} {SEQ} {cfg['vocab_size']}")
        h = hexes(logits)
        for i in range(0, len(h), 8):
            out.append(" ".join(h[i:i + 8]))
        out.append(f"greedy {BATCH} {PROMPT} {NEW} " + " ".join(str(int(v)) for v in tokens.reshape(-1)))
    with open(os.path.join(HERE, "reference.txt"), "w") as fh:
        fh.write("\n".join(out) + "\n")
    write_bf16()
    print("wrote", HERE)


if __name__ == "__main__":
    main()
