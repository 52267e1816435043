#!/usr/bin/env python3
"""Generate reference data for tessel's tiny GPT-2 safetensors test.

Run from anywhere (paths are relative to this file):

    /tmp/hfenv/bin/python tests/data/gpt2/make_reference.py

Needs: torch (CPU is enough), transformers, safetensors, numpy.

Writes next to this script:
  tiny_gpt2.safetensors       float32 weights, Hugging Face GPT-2 tensor names
  tiny_gpt2_bf16.safetensors  same tensors rounded to bfloat16 (dtype "BF16")
  logits.txt                  input ids + HF float32 logits as hex bit patterns
  README.md                   description + the facts measured on this run
                              (versions, tensor table, raw header JSON,
                              numpy-vs-HF differences); regenerated every run

The numpy forward (`numpy_gpt2_forward`) is written deliberately plainly: it
is the specification the C++ implementation mirrors.  It reads its weights
from the .safetensors file through a hand-written parser (`read_safetensors`),
not from torch, so agreement with HF validates the file layout, the tensor
names and the Conv1D (in, out) orientation at the same time.
"""

import json
import math
import os
import platform
import struct
import sys

import numpy as np
import torch
import transformers
import safetensors
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

SEED = 0            # torch.manual_seed for the weights
IDS_SEED = 20240601  # numpy default_rng seed for the input ids
BATCH, SEQ = 2, 16

CONFIG = dict(
    vocab_size=1003,
    n_positions=64,
    n_embd=64,
    n_layer=2,
    n_head=4,
    activation_function="gelu_new",
    resid_pdrop=0.0,
    embd_pdrop=0.0,
    attn_pdrop=0.0,
    layer_norm_epsilon=1e-5,
)


# --------------------------------------------------------------------------
# 1. Build the HF model with non-trivial weights
# --------------------------------------------------------------------------
def build_model():
    torch.manual_seed(SEED)
    config = transformers.GPT2Config(**CONFIG)
    # eager attention = the plain matmul/softmax path (no SDPA kernel choice).
    config._attn_implementation = "eager"
    model = transformers.GPT2LMHeadModel(config).to(torch.float32)
    model.eval()

    # HF init leaves biases at 0 and LayerNorm weights at 1; randomise them so
    # a test cannot pass while ignoring them.  Order of named_parameters() is
    # deterministic, so this stays reproducible under the fixed seed.
    gen = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            is_ln = ".ln_" in name or name.startswith("transformer.ln_f")
            if is_ln and name.endswith(".weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
    return model, config


def export_state_dict(model):
    """HF state dict restricted to transformer.* (lm_head.weight is tied to wte)."""
    sd = model.state_dict()
    tied = None
    if "lm_head.weight" in sd:
        tied = sd["lm_head.weight"].data_ptr() == sd["transformer.wte.weight"].data_ptr()
        if not tied:
            raise RuntimeError("lm_head.weight is not tied to transformer.wte.weight")
    params = dict(model.named_parameters(remove_duplicate=False))
    out, dropped = {}, []
    for k, v in sd.items():
        if not k.startswith("transformer."):
            dropped.append(k)
            continue
        if k not in params:          # non-parameter buffers (old HF had attn.bias masks)
            dropped.append(k)
            continue
        out[k] = v.detach().to(torch.float32).contiguous().clone()
    return out, dropped, tied, list(sd.keys())


# --------------------------------------------------------------------------
# 2. Hand-written safetensors reader (what the C++ loader must do)
# --------------------------------------------------------------------------
def read_safetensors(path):
    """Return (header_len, raw_header_bytes, header_dict, {name: np.ndarray float64}).

    Layout: u64 little-endian N | N bytes JSON header | data.
    data_offsets = [begin, end) relative to the first byte after the header.
    """
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    raw = blob[8:8 + n]
    header = json.loads(raw.decode("utf-8"))
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        buf = data[b:e]
        shape = info["shape"]
        count = int(np.prod(shape)) if shape else 1
        if info["dtype"] == "F32":
            assert e - b == 4 * count
            arr = np.frombuffer(buf, dtype="<f4").astype(np.float64)
        elif info["dtype"] == "BF16":
            assert e - b == 2 * count
            u16 = np.frombuffer(buf, dtype="<u2").astype(np.uint32)
            arr = (u16 << 16).view(np.float32).astype(np.float64)  # bf16 = top half of f32
        else:
            raise ValueError(info["dtype"])
        tensors[name] = arr.reshape(shape)
    # layout checks: header padded with spaces to 8-byte alignment, tensors
    # contiguous in header order, no gaps, data section fully used
    assert (8 + n) % 8 == 0 and raw == raw.rstrip(b" ") + b" " * (n - len(raw.rstrip(b" ")))
    spans = [v["data_offsets"] for k, v in header.items() if k != "__metadata__"]
    pos = 0
    for b, e in spans:
        assert b == pos and e >= b, (b, e, pos)
        pos = e
    assert pos == len(data), (pos, len(data))
    return n, raw, header, tensors


# --------------------------------------------------------------------------
# 3. Independent float64 numpy GPT-2 forward  (mirror this in C++)
# --------------------------------------------------------------------------
def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)   # biased variance
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def numpy_gpt2_forward(W, ids, n_layer, n_head, eps, *, _scale=True, _causal=True, _act=gelu_new):
    """W: dict name -> float64 array with HF names; ids: int array (B, T).

    Returns logits (B, T, vocab) in float64.
    (The underscore keyword arguments exist only for the sensitivity check that
    breaks the model on purpose; the reference uses their defaults.)
    """
    B, T = ids.shape
    wte = W["transformer.wte.weight"]            # (vocab, C)
    wpe = W["transformer.wpe.weight"]            # (n_positions, C)
    C = wte.shape[1]
    hd = C // n_head

    h = wte[ids] + wpe[np.arange(T)][None, :, :]  # (B, T, C); no dropout in eval
    causal = np.tril(np.ones((T, T), dtype=bool))  # key j visible to query i iff j <= i

    for l in range(n_layer):
        p = f"transformer.h.{l}."
        # --- attention block ---
        x = layer_norm(h, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = x @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]   # (B,T,3C); W is (in=C, out=3C)
        q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]        # split order q, k, v
        # heads: last axis C -> (n_head, hd), head-major
        q = q.reshape(B, T, n_head, hd).transpose(0, 2, 1, 3)              # (B,H,T,hd)
        k = k.reshape(B, T, n_head, hd).transpose(0, 2, 1, 3)
        v = v.reshape(B, T, n_head, hd).transpose(0, 2, 1, 3)
        s = (q @ k.transpose(0, 1, 3, 2))                                  # (B,H,T,T) [b,h,i,j] = q_i . k_j
        if _scale:
            s = s / math.sqrt(hd)
        if _causal:
            s = np.where(causal, s, -np.inf)                               # softmax over j (last axis)
        s = s - s.max(axis=-1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(axis=-1, keepdims=True)
        o = a @ v                                                          # (B,H,T,hd)
        o = o.transpose(0, 2, 1, 3).reshape(B, T, C)                       # merge heads back
        o = o @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]   # (C, C) in,out
        h = h + o
        # --- MLP block ---
        x = layer_norm(h, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = x @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]         # (C, 4C)
        m = _act(m)
        m = m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]     # (4C, C)
        h = h + m

    h = layer_norm(h, W["transformer.ln_f.weight"], W["transformer.ln_f.bias"], eps)
    return h @ wte.T                                                       # tied LM head, no bias



README_INTRO = r"""
# Tiny GPT-2 reference data

Reference data for a C++ test that loads a tiny GPT-2 from a safetensors file
and checks its logits against Hugging Face `transformers`.

**This file is generated** by `make_reference.py` (the text below plus the
measured facts at the end). Edit the `README_INTRO` string in the script, not
this file.

## Files

| file | what |
|---|---|
| `make_reference.py` | generator; also the readable numpy reference forward (`numpy_gpt2_forward`) and a hand-written safetensors reader (`read_safetensors`) |
| `tiny_gpt2.safetensors` | float32 weights (`F32`), Hugging Face GPT-2 tensor names, `transformer.*` only |
| `tiny_gpt2_bf16.safetensors` | the same tensors rounded (round-to-nearest-even, torch `.to(bfloat16)`) to `BF16`; same names/shapes; for later tests |
| `logits.txt` | input ids and HF float32 logits (bit-exact, hex) |
| `README.md` | this file |

## Regenerate

```sh
python3 -m venv /tmp/hfenv
/tmp/hfenv/bin/pip install torch transformers safetensors numpy   # CPU torch suffices
/tmp/hfenv/bin/python tests/data/gpt2/make_reference.py
```

Deterministic: weights from `torch.manual_seed(0)` (HF init) plus a
`torch.Generator` seeded 1 for the biases/LN params, ids from
`numpy.random.default_rng(20240601)`. Regenerating with other torch/transformers
versions may change the weights (init order) and the last bits of the logits;
the C++ test should compare with a tolerance, not bit-exactly.

## Model

`transformers.GPT2Config(vocab_size=1003, n_positions=64, n_embd=64, n_layer=2,
n_head=4, activation_function="gelu_new", resid_pdrop=0, embd_pdrop=0,
attn_pdrop=0, layer_norm_epsilon=1e-5)` + `GPT2LMHeadModel`, eval mode, float32,
`attn_implementation="eager"` (the SDPA path agrees to ~2e-7, see below). All
other config fields default (`scale_attn_weights=True`,
`scale_attn_by_inverse_layer_idx=False`, `reorder_and_upcast_attn=False`,
`initializer_range=0.02`). Weights: HF's own init (normal std 0.02; c_proj
weights std 0.02/sqrt(2*n_layer)), then **every bias** (including LayerNorm
beta) replaced by normal(0, 0.02) and **every LayerNorm weight** by
1 + 0.1*normal, so a test that ignores them fails (see the sensitivity list).

**Tied LM head**: `GPT2LMHeadModel.state_dict()` contains `lm_head.weight`,
which is the same storage as `transformer.wte.weight`. It is **not** stored;
the file has only `transformer.*`. The LM head is `logits = h @ wte^T`, with no
bias. (HF's own `save_pretrained` also drops it for GPT-2.)

No `attn.bias` / `attn.masked_bias` causal-mask buffers appear in this
transformers version's state dict (older versions saved `transformer.h.N.attn.bias`
as a (1,1,P,P) bool/uint8 buffer; a loader meeting real GPT-2 checkpoints
should ignore those names). Also, published GPT-2 checkpoints saved from
`GPT2Model` (as the original `gpt2` one is, as far as we know) use the names
**without** the `transformer.` prefix (`wte.weight`, `h.0.attn.c_attn.weight`,
...); a loader meant for real checkpoints should accept both spellings.

## Forward (what `numpy_gpt2_forward` does; mirror it)

Shapes: B = 2 batch, T = 16 tokens, C = 64, H = 4 heads, hd = 16, V = 1003.
GPT-2's `Conv1D` stores weights as **(in, out)**, so every projection is
`y = x @ W + b` with **no transpose** (unlike `nn.Linear`).

```
h = wte[ids] + wpe[0..T-1]                               # (B,T,C)
for l in 0..n_layer-1:
    x   = LN(h; ln_1)                                     # pre-LN
    qkv = x @ c_attn.W + c_attn.b                         # (B,T,3C); W (C,3C)
    q,k,v = qkv[..., 0:C], qkv[..., C:2C], qkv[..., 2C:3C]
    split each last axis C -> (H, hd)  (head h = columns h*hd .. h*hd+hd-1)
    s[b,h,i,j] = (q_i . k_j) / sqrt(hd);  s = -inf where j > i   (causal)
    a = softmax_j(s);  o_i = sum_j a[i,j] v_j;  merge heads back to C (col h*hd+d)
    h = h + (o @ attn.c_proj.W + attn.c_proj.b)
    x = LN(h; ln_2)
    h = h + (gelu_new(x @ c_fc.W + c_fc.b) @ mlp.c_proj.W + mlp.c_proj.b)
h = LN(h; ln_f)
logits = h @ wte^T                                         # (B,T,V)
```

- `LN(x) = (x - mean) / sqrt(var + eps) * gamma + beta` over the last axis, `var`
  is the biased (divide-by-C) variance, **eps = 1e-5**.
- `gelu_new(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`
  (HF `NewGELUActivation`, the tanh approximation; not the erf GELU).
- HF masks with `finfo(float32).min` rather than -inf; no difference here since
  every row has at least one visible key.
- Dropout is a no-op (p = 0 and eval mode). No attention mask input, no KV cache.

## logits.txt format

```
# comment lines (what, versions, config)
ids 2 16
<32 decimal ids, row-major (b, t); 16 per line>
logits 2 16 1003
<32096 float32 bit patterns, 8 lowercase hex digits each, row-major (b, t, v); 8 per line>
```

Parse as whitespace-separated tokens after dropping `#` lines. Each hex word is
the IEEE-754 bit pattern (e.g. `3f800000` = 1.0). The ids are int32 in
[0, 1003), drawn by numpy; HF got them as int64.

## Safetensors layout (as checked by `read_safetensors`)

- bytes 0..7: header length N, u64 little-endian
- bytes 8..8+N-1: UTF-8 JSON object `{name: {"dtype", "shape", "data_offsets": [begin, end)}}`
  plus `"__metadata__": {"format": "pt"}` (string->string map; skip it, it is
  not a tensor). The JSON is **padded with trailing spaces (0x20)** so that
  8+N is a multiple of 8; a JSON parser must accept trailing whitespace.
- data: starts at byte 8+N; `data_offsets` are relative to that byte, tensors
  are contiguous, non-overlapping, in header order, with no gaps; last end = file size - 8 - N.
- JSON key order: `__metadata__` first, then tensors sorted by dtype alignment
  then name (so **not** model order: `h.0.attn...` comes before `wte`). Don't rely
  on order; look tensors up by name.
- `BF16` = upper 16 bits of an IEEE float32 (`f32_bits = u16 << 16`).
"""


# --------------------------------------------------------------------------
def describe(name):
    n = name.split(".")
    if name == "transformer.wte.weight":
        return "token embedding (V, C): h0[t] = wte[id_t] + wpe[t]; ALSO the LM head: logits = ln_f(h) @ wte^T (tied, no bias)"
    if name == "transformer.wpe.weight":
        return "position embedding (P, C): row t added at position t (t = 0..T-1)"
    if n[1] == "ln_f":
        return "final LayerNorm " + ("gamma" if n[-1] == "weight" else "beta")
    tail = ".".join(n[3:])
    return {
        "ln_1.weight": "LayerNorm before attention, gamma",
        "ln_1.bias": "LayerNorm before attention, beta",
        "attn.c_attn.weight": "qkv = x @ W + b, W is (in=C, out=3C); out cols [0,C)=q, [C,2C)=k, [2C,3C)=v; "
                              "inside each, head h = cols h*hd..h*hd+hd-1",
        "attn.c_attn.bias": "bias of c_attn (3C), same q, k, v column layout",
        "attn.c_proj.weight": "attn out = merged @ W + b, W (in=C, out=C); merged col = h*hd + d",
        "attn.c_proj.bias": "bias of attn c_proj",
        "ln_2.weight": "LayerNorm before MLP, gamma",
        "ln_2.bias": "LayerNorm before MLP, beta",
        "mlp.c_fc.weight": "m = gelu_new(x @ W + b), W (in=C, out=4C)",
        "mlp.c_fc.bias": "bias of c_fc (4C)",
        "mlp.c_proj.weight": "mlp out = m @ W + b, W (in=4C, out=C)",
        "mlp.c_proj.bias": "bias of mlp c_proj",
    }[tail]


def diffs(ref, got):
    d = np.abs(ref - got)
    rel = d / np.maximum(np.abs(ref), 1e-30)
    return float(d.max()), float(rel.max()), float((d / (np.abs(ref) + 1e-3)).max())


def main():
    model, config = build_model()
    sd, dropped, tied, all_keys = export_state_dict(model)

    f32_path = os.path.join(HERE, "tiny_gpt2.safetensors")
    bf16_path = os.path.join(HERE, "tiny_gpt2_bf16.safetensors")
    meta = {"format": "pt"}   # same metadata HF's save_pretrained writes
    save_file(sd, f32_path, metadata=meta)
    save_file({k: v.to(torch.bfloat16).contiguous() for k, v in sd.items()}, bf16_path, metadata=meta)
    for pth in (f32_path, bf16_path):
        os.chmod(pth, 0o644)   # save_file creates 0600 files

    rng = np.random.default_rng(IDS_SEED)
    ids = rng.integers(0, CONFIG["vocab_size"], size=(BATCH, SEQ), dtype=np.int32)

    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids.astype(np.int64)), use_cache=False)
        logits = out.logits.to(torch.float32).numpy()
    assert logits.shape == (BATCH, SEQ, CONFIG["vocab_size"]), logits.shape
    # HF with the default (sdpa) attention, for information
    cfg2 = transformers.GPT2Config(**CONFIG)
    cfg2._attn_implementation = "sdpa"
    m2 = transformers.GPT2LMHeadModel(cfg2).eval()
    m2.load_state_dict(model.state_dict())
    with torch.no_grad():
        logits_sdpa = m2(input_ids=torch.from_numpy(ids.astype(np.int64)), use_cache=False).logits.numpy()

    # ---- logits.txt ----
    bits = logits.astype("<f4").reshape(-1).view("<u4")
    lines = [
        "# tessel GPT-2 reference logits (Hugging Face transformers GPT2LMHeadModel, float32, CPU, eager attention)",
        "# weights: tiny_gpt2.safetensors (same directory); generated by make_reference.py",
        f"# python {platform.python_version()}  torch {torch.__version__}  transformers {transformers.__version__}"
        f"  safetensors {safetensors.__version__}  numpy {np.__version__}",
        "# config: " + json.dumps(CONFIG, sort_keys=True),
        "# forward: input_ids only (no attention mask, no past/cache), position ids 0..T-1",
        "# format: 'ids B T' then B*T decimal ids; 'logits B T V' then B*T*V float32 bit patterns",
        "#         as 8 lowercase hex digits, row-major (b, t, v), whitespace separated",
        f"ids {BATCH} {SEQ}",
    ]
    for b in range(BATCH):
        lines.append(" ".join(str(int(i)) for i in ids[b]))
    lines.append(f"logits {BATCH} {SEQ} {CONFIG['vocab_size']}")
    per_line = 8
    hexs = [f"{int(u):08x}" for u in bits]
    for i in range(0, len(hexs), per_line):
        lines.append(" ".join(hexs[i:i + per_line]))
    with open(os.path.join(HERE, "logits.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # ---- re-read the files by hand & run the numpy forward ----
    n32, raw32, hdr32, W32 = read_safetensors(f32_path)
    n16, raw16, hdr16, W16 = read_safetensors(bf16_path)
    # check the hand parser gives back exactly the torch tensors
    for k, v in sd.items():
        assert np.array_equal(W32[k].astype(np.float32), v.numpy()), k
    assert set(W32) == set(sd)

    eps = CONFIG["layer_norm_epsilon"]
    ref64 = numpy_gpt2_forward(W32, ids, CONFIG["n_layer"], CONFIG["n_head"], eps)
    ref64_bf16 = numpy_gpt2_forward(W16, ids, CONFIG["n_layer"], CONFIG["n_head"], eps)

    # re-read logits.txt to make sure it round-trips
    with open(os.path.join(HERE, "logits.txt")) as f:
        toks = [ln for ln in f.read().splitlines() if not ln.startswith("#")]
    toks = " ".join(toks).split()
    i = toks.index("logits")
    vals = np.array([int(t, 16) for t in toks[i + 4:]], dtype=np.uint32).view(np.float32)
    assert np.array_equal(vals.reshape(logits.shape), logits)

    # sensitivity: how much the logits move if parts are dropped (helps pick tolerances)
    def variant(fn, **kw):
        W = {k: v.copy() for k, v in W32.items()}
        fn(W)
        return np.abs(numpy_gpt2_forward(W, ids, CONFIG["n_layer"], CONFIG["n_head"], eps, **kw) - ref64).max()

    from math import erf
    gelu_erf = np.vectorize(lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))))
    nothing = lambda W: None

    sens = {
        "all biases (incl. LN bias) set to 0": variant(
            lambda W: [W.__setitem__(k, 0 * W[k]) for k in list(W) if k.endswith(".bias")]),
        "all LN weights set to 1": variant(
            lambda W: [W.__setitem__(k, 0 * W[k] + 1) for k in list(W) if (".ln_" in k or "ln_f" in k) and k.endswith(".weight")]),
        "q and k swapped in the c_attn split": variant(
            lambda W: [W.__setitem__(k, np.concatenate([W[k][..., 64:128], W[k][..., :64], W[k][..., 128:]], -1))
                       for k in list(W) if k.endswith("c_attn.weight") or k.endswith("c_attn.bias")]),
        "wpe ignored": variant(lambda W: W.__setitem__("transformer.wpe.weight", 0 * W["transformer.wpe.weight"])),
        "no 1/sqrt(head_dim) scale": variant(nothing, _scale=False),
        "no causal mask": variant(nothing, _causal=False),
        "exact erf GELU instead of gelu_new (tanh)": variant(nothing, _act=gelu_erf),
        "LN epsilon 1e-6 instead of 1e-5": abs(numpy_gpt2_forward(W32, ids, CONFIG["n_layer"], CONFIG["n_head"], 1e-6) - ref64).max(),
    }

    # ---- summary ----
    S = [README_INTRO.strip() + "\n", "# Facts measured by the last run of make_reference.py\n"]
    S.append("## Versions\n")
    S.append(f"- python {platform.python_version()} ({sys.platform})")
    S.append(f"- torch {torch.__version__} (CPU execution)")
    S.append(f"- transformers {transformers.__version__}")
    S.append(f"- safetensors {safetensors.__version__}")
    S.append(f"- numpy {np.__version__}")
    S.append("- torch came from PyPI's default wheel (the CUDA build; run on CPU only) because "
             "download.pytorch.org was not reachable where this was generated; CPU-only torch gives the same math.\n")
    S.append("## HF state_dict keys seen\n")
    S.append("```\n" + "\n".join(all_keys) + "\n```\n")
    S.append(f"Dropped from the file: {dropped}. lm_head.weight tied to transformer.wte.weight (same storage): {tied}.\n")
    S.append("## Tensors (file order = header JSON order)\n")
    S.append("C = n_embd = 64, V = vocab = 1003, P = n_positions = 64, H = n_head = 4, hd = C/H = 16. "
             "All tensors row-major (C order), little-endian. Same names/shapes/order in both files; "
             "the bf16 file has dtype BF16 and halved offsets.\n")
    S.append("| name | dtype (f32 file) | shape | data_offsets (f32 file) | dtype (bf16 file) | data_offsets (bf16 file) | role in the forward |")
    S.append("|---|---|---|---|---|---|---|")
    for name, info in hdr32.items():
        if name == "__metadata__":
            continue
        i16 = hdr16[name]
        S.append(f"| `{name}` | {info['dtype']} | {tuple(info['shape'])} | {info['data_offsets']} | {i16['dtype']} | "
                 f"{i16['data_offsets']} | {describe(name)} |")
    S.append("")
    for label, path, n, raw, hdr in (("f32", f32_path, n32, raw32, hdr32), ("bf16", bf16_path, n16, raw16, hdr16)):
        size = os.path.getsize(path)
        stripped = raw.rstrip(b" ")
        S.append(f"## Header of {os.path.basename(path)}\n")
        S.append(f"- file size {size} bytes; header length N = {n} (N % 8 = {n % 8}); data starts at byte {8 + n} "
                 f"((8+N) % 8 = {(8 + n) % 8})")
        S.append(f"- JSON text is {len(stripped)} bytes, followed by {n - len(stripped)} trailing space (0x20) padding bytes")
        S.append(f"- data section = {size - 8 - n} bytes; last data_offsets end = "
                 f"{max(v['data_offsets'][1] for k, v in hdr.items() if k != '__metadata__')}")
        S.append(f"- key order in the raw JSON: {'__metadata__ first, then ' if list(hdr)[0] == '__metadata__' else ''}"
                 "tensors sorted by (dtype alignment desc, name)  — see raw text below")
        S.append("\nRaw header JSON, verbatim (the trailing padding spaces not shown):\n")
        S.append("```\n" + stripped.decode() + "\n```\n")
        if label == "f32":
            S.append("Pretty-printed (truncated to the first 6 entries):\n")
            items = list(hdr.items())[:6]
            S.append("```json\n{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in items)
                     + ",\n  ...\n}\n```\n")
    a, r, rr = diffs(ref64, logits.astype(np.float64))
    a2, r2, rr2 = diffs(logits.astype(np.float64), logits_sdpa.astype(np.float64))
    a3, r3, rr3 = diffs(ref64, ref64_bf16)
    S.append("## Differences\n")
    S.append(f"logits: min {logits.min():.6g}, max {logits.max():.6g}, mean |x| {np.abs(logits).mean():.6g}\n")
    S.append("| comparison | max abs diff | max rel diff, abs(d)/abs(ref) | max abs(d)/(abs(ref)+1e-3) |")
    S.append("|---|---|---|---|")
    S.append(f"| HF f32 (eager) vs numpy f64 from tiny_gpt2.safetensors | {a:.3e} | {r:.3e} | {rr:.3e} |")
    S.append(f"| HF f32 eager vs HF f32 sdpa | {a2:.3e} | {r2:.3e} | {rr2:.3e} |")
    S.append(f"| numpy f64 with f32 weights vs numpy f64 with bf16 weights | {a3:.3e} | {r3:.3e} | {rr3:.3e} |")
    S.append("")
    S.append("Notes: the logits are small (|x| < 0.7; std-0.02 weights) and many are near 0, so the plain relative "
             "difference blows up on near-zero entries; use an absolute tolerance (or the third column's mixed one). "
             "HF float32 and the independent float64 numpy forward (weights read from the file by the hand parser) "
             "agree to ~2e-7 abs, i.e. float32 rounding: tensor names, the Conv1D (in, out) orientation, the q|k|v "
             "split and the head layout are confirmed. A C++ float32 implementation should reach ~1e-6 abs; "
             "an abs tolerance of about 1e-6 (2e-6 at most) still catches every mistake below, including "
             "erf-GELU vs gelu_new (6e-6). The bf16 file changes logits by up to ~2e-3 abs versus the f32 ones, "
             "so a bf16-weight test needs its own reference or a tolerance around 5e-3.\n")
    S.append("Sensitivity (max abs change of the numpy f64 logits when a part of the model is broken on purpose; "
             "a C++ tolerance must be far below these):\n")
    for k, v in sens.items():
        S.append(f"- {k}: {v:.3e}")
    S.append("")
    with open(os.path.join(HERE, "README.md"), "w") as f:
        f.write("\n".join(S))
    print("\n".join(S))


if __name__ == "__main__":
    main()
