#!/usr/bin/env python3
"""Quantise search_tools' static token table from int8 to 4 bits a value (not run by CI; its
output is committed).

Input: the int8 table (format WBEMB1) that scripts/train-embeddings.py writes, the fine-tuned one
that shipped until this script was written. It is kept in git history; reproduce the committed
table with

    git show 91ef04e:src/registry/search/model/vectors.bin > /tmp/vectors-int8.bin
    python3 -m venv /tmp/qvenv && /tmp/qvenv/bin/pip install numpy==2.4.6
    OMP_NUM_THREADS=1 /tmp/qvenv/bin/python scripts/quantize-embeddings.py /tmp/vectors-int8.bin

(or run it on a fresh scripts/train-embeddings.py --write output: the input defaults to the
model directory's vectors.bin, which must then still be WBEMB1). It writes
src/registry/search/model/vectors.bin (OUT=path elsewhere); vocab.txt is unchanged. Deterministic:
the only randomness, the samples the codebook is fitted on, has a fixed seed. A few minutes.

How:
  * the first EXACT tokens (2,000; the vocabulary is ordered by frequency after the single
    characters, so these are the common words and pieces, about 64% of the tokens of tool texts
    and requests) keep their int8 rows and f32 scales as they are;
  * the others' columns are divided by each column's standard deviation over them (the columns
    are PCA components, whose spread differs tenfold);
  * each such row gets its own scale; each pair of values (columns 2j, 2j+1) is coded as one
    byte, the nearest of 256 points of a plane shared by all rows and pairs (k-means on the
    normalised pairs, fitted in pairs p, -p: the points sit densest where the values do, near
    zero, which 16 even steps a value would not do; a point per pair fits their joint spread
    better than two 16-level codes; a lopsided set would shift every token the same way);
  * the row scale is chosen, among 9 fractions of the row's largest value, to make the row's
    squared error least.
The row scale (which carries the token's SIF weight, as the int8 table's did) is stored as a u16
multiple of one f32 unit. Against the int8 table the coded tokens are off by 8.8% (root mean
square, relative); a text's vector, a sum of tokens' vectors, moves less (the mean change of a
query's cosine with a tool's, over the evaluation sets' requests and tools, is about 0.007).

Output format (little-endian): b"WBEMB4\\0\\0", u32 count, u32 dim (even), u32 exact, f32 unit,
256 x 2 f32 points, dim x f32 column scales, exact x f32 int8 scales, exact x dim int8 values,
(count - exact) x u16 row scales, (count - exact) x dim/2 code bytes. Values 2j and 2j+1 of coded
row i are unit * row[i] * points[code[i][j]] * (column[2j], column[2j+1]).
src/registry/search/embed.rs reads it in place.
"""

import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.join(HERE, "..", "src", "registry", "search", "model")
POINTS = 256
GRID = np.linspace(0.6, 1.0, 9)
SAMPLE = 200_000
SEED = 7
EXACT = int(os.environ.get("EXACT", "2000"))


def load_int8(path):
    raw = open(path, "rb").read()
    if raw[:8] != b"WBEMB1\0\0":
        sys.exit(f"{path}: not an int8 table (WBEMB1)")
    count, dim = struct.unpack_from("<II", raw, 8)
    scales = np.frombuffer(raw[16 : 16 + 4 * count], "<f4")
    data = np.frombuffer(raw[16 + 4 * count : 16 + 4 * count + count * dim], np.int8).reshape(count, dim)
    return scales.astype(np.float64)[:, None] * data.astype(np.float64)


def nearest(pairs, points):
    """Index of the nearest point for each pair (n x 2)."""
    out = np.empty(len(pairs), np.int64)
    sq = (points**2).sum(1)
    for i in range(0, len(pairs), 100_000):
        p = pairs[i : i + 100_000]
        out[i : i + 100_000] = (sq[None, :] - 2 * p @ points.T).argmin(1)
    return out


def kmeans(x, n, rng):
    c = x[rng.choice(len(x), n, replace=False)].copy()
    for _ in range(40):
        a = nearest(x, c)
        for k in range(n):
            if (a == k).any():
                c[k] = x[a == k].mean(0)
    return c


def fit(y):
    """Points and row scales for the column-normalised table y."""
    n, dim = y.shape
    pairs = y.reshape(n, dim // 2, 2)
    top = np.maximum(np.abs(y).max(1), 1e-12)
    rng = np.random.default_rng(SEED)
    z = (pairs / top[:, None, None]).reshape(-1, 2)
    z = z[rng.choice(len(z), SAMPLE, replace=False)]
    # Points in pairs p, -p: a lopsided set would shift every token the same way, and a text's
    # vector, a sum of tokens', would add those shifts up instead of averaging errors out.
    z = np.where((z[:, :1] < 0) | ((z[:, :1] == 0) & (z[:, 1:] < 0)), -z, z)
    half = kmeans(z, POINTS // 2, rng)
    points = np.concatenate([half, -half])
    best_err = np.full(n, np.inf)
    scale = np.zeros(n)
    for g in GRID:
        s = g * top / np.abs(points).max()
        a = nearest((pairs / s[:, None, None]).reshape(-1, 2), points).reshape(n, dim // 2)
        err = ((points[a] * s[:, None, None] - pairs) ** 2).sum((1, 2))
        better = err < best_err
        best_err[better] = err[better]
        scale[better] = s[better]
    return points, scale


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(MODEL_DIR, "vectors.bin")
    out = os.environ.get("OUT") or os.path.join(MODEL_DIR, "vectors.bin")
    table = load_int8(src)
    count, dim = table.shape
    assert dim % 2 == 0
    raw = open(src, "rb").read()
    int8_scales = raw[16 : 16 + 4 * count]
    int8_rows = raw[16 + 4 * count : 16 + 4 * count + count * dim]
    table = table[EXACT:]
    count -= EXACT
    column = table.std(0)
    y = table / column
    points, scale = fit(y)
    unit = np.float32(scale.max() / 65535)
    rows = np.clip(np.round(scale / np.float64(unit)), 0, 65535).astype(np.uint16)
    points = points.astype(np.float32)
    column = column.astype(np.float32)
    # Codes for the scales and points as stored, so that they are the nearest the reader can make.
    s = np.maximum(rows.astype(np.float64) * np.float64(unit), 1e-30)
    pts = points.astype(np.float64)
    codes = nearest((y.reshape(count, dim // 2, 2) / s[:, None, None]).reshape(-1, 2), pts).reshape(count, dim // 2)
    codes[rows == 0] = nearest(np.zeros((1, 2)), pts)[0]
    back = (pts[codes] * (rows.astype(np.float64) * np.float64(unit))[:, None, None]).reshape(count, dim) * column
    rel = np.linalg.norm(back - table) / np.linalg.norm(table)
    with open(out, "wb") as f:
        f.write(b"WBEMB4\0\0")
        f.write(struct.pack("<III", count + EXACT, dim, EXACT))
        f.write(np.array([unit], "<f4").tobytes())
        f.write(points.astype("<f4").tobytes())
        f.write(column.astype("<f4").tobytes())
        f.write(int8_scales[: 4 * EXACT])
        f.write(int8_rows[: dim * EXACT])
        f.write(rows.astype("<u2").tobytes())
        f.write(codes.astype(np.uint8).tobytes())
    print(f"wrote {out}: {EXACT} + {count} tokens x {dim}, {os.path.getsize(out)} bytes, relative error {rel:.4f}")


if __name__ == "__main__":
    main()
