#!/usr/bin/env python3
"""Model experiments for search_tools' semantic tier, on the dev set's dump (not run by CI).

    SEARCH_DUMP=/tmp/dump.json cargo test --locked --test it dev_set_held_out -- --nocapture
    OMP_NUM_THREADS=1 nice -n 10 /tmp/distvenv/bin/python scripts/search-experiments.py /tmp/dump.json

The dump holds every tool's embedded text and each dev-set query's top 30 under the lexical tier
and under the shipped fusion. This script embeds queries and tools with the full all-MiniLM-L6-v2
encoder (scripts/distill-embeddings.py's numpy implementation) and with the committed static
table, and reports top-1 / recall@5 per split for: each model alone, and the fused list re-ranked
with the encoder's cosine. Parameters are chosen on the dev two thirds only; held-out is printed.
"""

import importlib.util
import json
import os
import struct
import sys
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("distill", os.path.join(HERE, "distill-embeddings.py"))
distill = importlib.util.module_from_spec(spec)
spec.loader.exec_module(distill)
from safetensors.numpy import load_file  # noqa: E402

MAX_TOKENS = 128


class WordPiece:
    def __init__(self, vocab):
        self.index = {t: i for i, t in enumerate(vocab)}

    def words(self, text):
        out, word, prev_lower = [], "", False
        for c in text:
            if c.isalnum():
                if c.isupper() and prev_lower and word:
                    out.append(word)
                    word = ""
                prev_lower = c.islower() or c.isdigit()
                word += c.lower()
            else:
                prev_lower = False
                if word:
                    out.append(word)
                word = ""
        if word:
            out.append(word)
        return out

    def pieces(self, word):
        if len(word) > 100 or not word.isascii():
            return []
        out, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while end > start:
                p = ("##" if start else "") + word[start:end]
                if p in self.index:
                    found = self.index[p]
                    break
                end -= 1
            if found is None:
                return []
            out.append(found)
            start = end
        return out

    def ids(self, text):
        out = []
        for w in self.words(text):
            out.extend(self.pieces(w))
        return out


def load_encoder():
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(os.path.join(distill.MODEL, "model.safetensors")).items()}
    vocab = [t for t in open(os.path.join(distill.MODEL, "vocab.txt"), encoding="utf-8").read().split("\n") if t]
    return w, WordPiece(vocab)


def encode_texts(w, wp, texts):
    cls, sep = wp.index["[CLS]"], wp.index["[SEP]"]
    out = []
    for t in texts:
        ids = [cls] + wp.ids(t)[: MAX_TOKENS - 2] + [sep]
        v = distill.encode(w, np.array([ids]))[0]
        out.append(v / np.linalg.norm(v))
    return np.array(out)


def read_table(path):
    """A token table as float rows: WBEMB1 (int8 rows, as scripts/distill-embeddings.py writes
    them) or WBEMB2 (BITS-bit rows packed eight values to BITS bytes, as
    scripts/train-embeddings.py writes the committed one; src/registry/search/embed.rs reads it)."""
    raw = open(path, "rb").read()
    magic = raw[:8]
    if magic == b"WBEMB1\0\0":
        count, dim = (int(x) for x in np.frombuffer(raw[8:16], "<u4"))
        scales = np.frombuffer(raw[16 : 16 + 4 * count], "<f4")
        data = np.frombuffer(raw[16 + 4 * count : 16 + 4 * count + count * dim], np.int8).reshape(count, dim)
        return scales[:, None] * data.astype(np.float32)
    if magic != b"WBEMB2\0\0":
        raise ValueError(f"{path}: not a token table")
    count, dim, bits = (int(x) for x in np.frombuffer(raw[8:20], "<u4"))
    scales = np.frombuffer(raw[20 : 20 + 4 * count], "<f4")
    packed = np.frombuffer(raw[20 + 4 * count :], np.uint8).reshape(count, dim // 8, bits)
    words = np.zeros((count, dim // 8), np.uint64)
    for b in range(bits):
        words |= packed[:, :, b].astype(np.uint64) << np.uint64(8 * b)
    shifts = (np.arange(8, dtype=np.uint64) * np.uint64(bits))[None, None, :]
    values = (words[:, :, None] >> shifts) & np.uint64((1 << bits) - 1)
    q = values.reshape(count, dim).astype(np.float32) - ((1 << (bits - 1)) - 1)
    return scales[:, None] * q


def pack_table(table, bits):
    """The WBEMB2 bytes of a float table: each row rounded to BITS-bit steps of its largest value."""
    top = (1 << (bits - 1)) - 1
    count, dim = table.shape
    scale = np.maximum(np.abs(table).max(1), 1e-12) / top
    q = np.clip(np.round(table / scale[:, None]), -top, top).astype(np.int64) + top
    words = np.zeros((count, dim // 8), np.uint64)
    for k in range(8):
        words |= q[:, k::8].astype(np.uint64) << np.uint64(k * bits)
    packed = np.stack([((words >> np.uint64(8 * b)) & np.uint64(255)).astype(np.uint8) for b in range(bits)], axis=2)
    head = b"WBEMB2\0\0" + struct.pack("<III", count, dim, bits)
    return head + scale.astype("<f4").tobytes() + packed.tobytes()


def static_model():
    base = os.path.join(HERE, "..", "src", "registry", "search", "model")
    table = read_table(os.path.join(base, "vectors.bin"))
    vocab = open(os.path.join(base, "vocab.txt"), encoding="utf-8").read().split("\n")[: table.shape[0]]
    scales = np.ones(table.shape[0], np.float32)
    return WordPiece(vocab), scales, table


def static_embed(model, texts):
    wp, scales, data = model
    out = []
    for t in texts:
        ids = wp.ids(t[:4096])
        v = (scales[ids, None] * data[ids].astype(np.float32)).sum(0) if ids else np.zeros(data.shape[1])
        n = np.linalg.norm(v)
        out.append(v / n if n > 0 else v)
    return np.array(out)


def rank_of(names, expect):
    for i, n in enumerate(names):
        if n in expect:
            return i + 1
    return None


def report(label, queries, ranked):
    """ranked: per query, the list of names best first."""
    for split in ("dev", "held-out"):
        by_kind = defaultdict(lambda: [0, 0, 0])
        for q, names in zip(queries, ranked):
            if q["split"] != split or q["kind"] == "negative":
                continue
            r = rank_of(names, q["expect"])
            for k in (q["kind"], "ALL"):
                t = by_kind[k]
                t[0] += 1
                t[1] += r == 1
                t[2] += r is not None and r <= 5
        t = by_kind["ALL"]
        worst = min((v[1] / v[0], k) for k, v in by_kind.items())
        print(f"{label:<44} {split:<8} top-1 {t[1] / t[0]:.3f} r@5 {t[2] / t[0]:.3f} worst {worst[1]} {worst[0]:.3f}")


def main():
    dump = json.load(open(sys.argv[1]))
    tools, queries = dump["tools"], dump["queries"]
    names = [t["name"] for t in tools]
    cache = "/tmp/s2_minilm_cache.npz"
    if os.path.exists(cache):
        z = np.load(cache)
        tv, qv = z["tools"], z["queries"]
    else:
        w, wp = load_encoder()
        tv = encode_texts(w, wp, [t["text"] for t in tools])
        qv = encode_texts(w, wp, [q["q"] for q in queries])
        np.savez(cache, tools=tv, queries=qv)
    sm = static_model()
    stv, sqv = static_embed(sm, [t["text"] for t in tools]), static_embed(sm, [q["q"] for q in queries])
    full = qv @ tv.T
    stat = sqv @ stv.T
    report("lexical tier alone", queries, [[h[0] for h in q["lexical"]] for q in queries])
    report("shipped fusion", queries, [[h[0] for h in q["fused"]] for q in queries])
    report("static table alone", queries, [[names[i] for i in np.argsort(-s)[:30]] for s in stat])
    report("full MiniLM alone", queries, [[names[i] for i in np.argsort(-s)[:30]] for s in full])
    idx = {n: i for i, n in enumerate(names)}
    # Re-rank the fused top k: score = fused + a * (cos - b), tools outside the list by cosine only.
    best = None
    for k in (5, 10, 20, 30):
        for a in (0.3, 0.5, 0.8, 1.2, 2.0):
            for extra in (0, 3):
                ranked = []
                for qi, q in enumerate(queries):
                    cand = {h[0]: h[1] for h in q["fused"][:k]}
                    for i in np.argsort(-full[qi])[:extra]:
                        cand.setdefault(names[i], 0.0)
                    scored = sorted(cand, key=lambda n: -(cand[n] + a * full[qi, idx[n]]))
                    ranked.append(scored)
                dev = [r for q, r in zip(queries, ranked) if q["split"] == "dev" and q["kind"] != "negative"]
                devq = [q for q in queries if q["split"] == "dev" and q["kind"] != "negative"]
                top1 = sum(rank_of(r, q["expect"]) == 1 for r, q in zip(dev, devq)) / len(devq)
                if best is None or top1 > best[0]:
                    best = (top1, k, a, extra, ranked)
    print("best re-rank on dev: k", best[1], "a", best[2], "extra", best[3])
    report(f"fused top-{best[1]} + {best[2]}*full cosine", queries, best[4])


if __name__ == "__main__":
    main()
