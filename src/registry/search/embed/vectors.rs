//! Tool vectors, compact (int8 rows and a scale per tool, in one block), and the ways a
//! request's vectors are compared with them: exact dot products (AVX2 and a scalar path that
//! give the same bits) and near ones in integers with a bound ([`Vectors::approx_many`]).

#[cfg(test)]
use super::{cosine, model};

mod near;
pub use near::Bounds;

/// A tool's vector, compact: int8 components and the scale that makes them the unit vector
/// (`x = scale * q`). Ranking reads the same within rounding (each component is off by at most
/// half a step of 1/127 of the largest).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub data: Box<[i8]>,
}

impl Quantized {
    /// `v` (unit length) rounded to int8 steps of its largest component.
    pub fn new(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
        if max <= f32::EPSILON || !max.is_finite() {
            return Quantized { scale: 0.0, data: vec![0; v.len()].into() };
        }
        let scale = max / 127.0;
        Quantized { scale, data: v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect() }
    }
}

/// Every tool's vector in one block: a row of `dim` int8 values and a scale per tool (scale 0:
/// the tool has no vector, none of its words is known).
#[derive(Default)]
pub struct Vectors {
    dim: usize,
    scales: Vec<f32>,
    data: Vec<i8>,
    /// Each row's L1 norm times its scale (the unit vector's L1 norm): how far a query rounded
    /// to int8 steps can move the row's dot product ([`Vectors::approx_many`]).
    spread: Vec<f32>,
    /// Each row's sum of its int8 values: what a query offset to unsigned values adds to the
    /// row's integer product ([`Vectors::approx_many`]).
    sums: Vec<i32>,
    /// [`dot_fn`] of `dim`, chosen once (none for an empty block): the exact cosine is taken
    /// a tool at a time, and choosing per call tests the machine's features each time.
    dot: Option<Dot>,
}

impl Vectors {
    pub fn with_capacity(dim: usize, tools: usize) -> Vectors {
        Vectors {
            dim,
            scales: Vec::with_capacity(tools),
            data: Vec::with_capacity(dim * tools),
            spread: Vec::with_capacity(tools),
            sums: Vec::with_capacity(tools),
            dot: Some(dot_fn(dim)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    pub fn push(&mut self, v: Option<&Quantized>) {
        match v {
            Some(q) if q.data.len() == self.dim && q.scale.is_finite() && q.scale > 0.0 => {
                self.scales.push(q.scale);
                self.data.extend_from_slice(&q.data);
                let l1: i64 = q.data.iter().map(|&x| i64::from(x).abs()).sum();
                self.spread.push(q.scale * l1 as f32);
                self.sums.push(q.data.iter().map(|&x| i32::from(x)).sum());
            }
            _ => {
                self.scales.push(0.0);
                self.data.extend(std::iter::repeat_n(0, self.dim));
                self.spread.push(0.0);
                self.sums.push(0);
            }
        }
    }

    /// Each tool's cosine with the unit vector `q` (`None` for tools without a vector): the
    /// reference [`Vectors::cosines_many`] is checked against.
    #[cfg(test)]
    pub fn cosines(&self, q: &[f32]) -> Vec<Option<f32>> {
        if q.len() != self.dim || self.dim == 0 {
            return vec![None; self.scales.len()];
        }
        let dot = dot_fn(self.dim);
        self.scales
            .iter()
            .zip(self.data.chunks_exact(self.dim))
            .map(|(&scale, row)| (scale > 0.0).then(|| scale * dot(q, row)))
            .collect()
    }

    /// Each tool's cosine with each of the unit vectors `qs`, in one pass over the tools (each
    /// row is read once for all of them): query `k`'s cosine with tool `d` at `k * tools + d`,
    /// NaN for tools without a vector. The same bits as [`Vectors::cosines`].
    pub fn cosines_many(&self, qs: &[&[f32]]) -> Vec<f32> {
        let tools = self.scales.len();
        let mut out = vec![f32::NAN; qs.len() * tools];
        if self.dim == 0 {
            return out;
        }
        let dots = dots_fn(self.dim);
        let valid: Vec<(usize, &[f32])> = qs.iter().copied().enumerate().filter(|(_, q)| q.len() == self.dim).collect();
        let mut dot = vec![0.0_f32; valid.len()];
        for group in valid.chunks(GROUP) {
            let queries: Vec<&[f32]> = group.iter().map(|&(_, q)| q).collect();
            let dot = &mut dot[..group.len()];
            for (d, (&scale, row)) in self.scales.iter().zip(self.data.chunks_exact(self.dim)).enumerate() {
                if scale > 0.0 {
                    dots(&queries, row, dot);
                    for (&(k, _), &x) in group.iter().zip(dot.iter()) {
                        out[k * tools + d] = scale * x;
                    }
                }
            }
        }
        out
    }

    /// Tool `d`'s cosine with the unit vector `q`: the bits [`Vectors::cosines_many`] gives it,
    /// NaN when the tool has no vector or `q` is of another length.
    #[inline]
    pub fn cosine(&self, d: usize, q: &[f32]) -> f32 {
        let scale = self.scales[d];
        if let (true, Some(dot)) = (scale > 0.0 && q.len() == self.dim && self.dim > 0, self.dot) {
            scale * dot(q, &self.data[d * self.dim..(d + 1) * self.dim])
        } else {
            f32::NAN
        }
    }

    /// Bytes of heap the vectors take.
    pub fn heap_bytes(&self) -> usize {
        self.scales.capacity() * 4 + self.data.capacity() + self.spread.capacity() * 4 + self.sums.capacity() * 4
    }
}

/// A dot product of a query vector and an int8 row.
type Dot = fn(&[f32], &[i8]) -> f32;

/// The dot product of a query vector and an int8 row, the fastest way this machine has (the
/// reference [`dots_fn`] is checked against). Every way sums in the same order ([`dot_lanes`]), so they give the same bits.
fn dot_fn(dim: usize) -> Dot {
    if !dim.is_multiple_of(LANES) {
        return dot_sequential;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return dot_avx2_checked;
    }
    dot_lanes
}

/// How many queries one pass over the rows takes (a request's texts: the whole request and up
/// to eight clauses).
const GROUP: usize = 9;

/// The dot products of up to [`GROUP`] query vectors with one int8 row, into `out`: each the
/// bits of [`dot_fn`]'s, the row converted once for all of them.
fn dots_fn(dim: usize) -> fn(&[&[f32]], &[i8], &mut [f32]) {
    if dim.is_multiple_of(LANES) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return dots_avx2_checked;
        }
        return |qs, row, out| qs.iter().zip(out).for_each(|(q, o)| *o = dot_lanes(q, row));
    }
    |qs, row, out| qs.iter().zip(out).for_each(|(q, o)| *o = dot_sequential(q, row))
}

#[cfg(target_arch = "x86_64")]
fn dots_avx2_checked(qs: &[&[f32]], row: &[i8], out: &mut [f32]) {
    assert!(qs.len() <= GROUP && out.len() >= qs.len() && row.len().is_multiple_of(LANES));
    assert!(qs.iter().all(|q| q.len() == row.len()));
    // SAFETY: chosen by `dots_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { dots_avx2(qs, row, out) }
}

/// [`dot_lanes`] of several queries with one row in AVX2 registers, four queries at a time:
/// the row's eight values converted once for the four, then multiplied and added into each
/// query's own sums (multiply and add apart: no fused multiply-add, which rounds once where the
/// scalar path rounds twice), and each query's lanes reduced in the scalar path's order.
///
/// # Safety
/// The CPU must have AVX2; `out` at least as long as `qs`, each query of `row`'s length (a
/// multiple of 8).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dots_avx2(qs: &[&[f32]], row: &[i8], out: &mut [f32]) {
    use std::arch::x86_64::*;
    // (0+4, 1+5, 2+6, 3+7), then (b0+b2, b1+b3), then c0+c1.
    let reduce = |acc: __m256| {
        let b = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        let c = _mm_add_ps(b, _mm_movehl_ps(b, b));
        _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, 1)))
    };
    let len = row.len();
    let r = row.as_ptr();
    let mut k = 0;
    while k + 4 <= qs.len() {
        let (q0, q1, q2, q3) = (qs[k].as_ptr(), qs[k + 1].as_ptr(), qs[k + 2].as_ptr(), qs[k + 3].as_ptr());
        let (mut a0, mut a1, mut a2, mut a3) =
            (_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        while i < len {
            // SAFETY: i + 8 <= len, and every query is len long.
            unsafe {
                let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(r.add(i).cast::<__m128i>())));
                a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(q0.add(i)), x));
                a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(q1.add(i)), x));
                a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(q2.add(i)), x));
                a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(q3.add(i)), x));
            }
            i += LANES;
        }
        out[k] = reduce(a0);
        out[k + 1] = reduce(a1);
        out[k + 2] = reduce(a2);
        out[k + 3] = reduce(a3);
        k += 4;
    }
    while k < qs.len() {
        let q = qs[k].as_ptr();
        let mut a = _mm256_setzero_ps();
        let mut i = 0;
        while i < len {
            // SAFETY: as above.
            unsafe {
                let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(r.add(i).cast::<__m128i>())));
                a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_loadu_ps(q.add(i)), x));
            }
            i += LANES;
        }
        out[k] = reduce(a);
        k += 1;
    }
}

/// Lanes of the dot product: lane `k` sums components `k`, `k + 8`, ..., and the lanes are added
/// pairwise at the end (`(0+4) + (2+6)`, then `(1+5) + (3+7)`, then those two), as the AVX2 path
/// does in its registers.
const LANES: usize = 8;

fn dot_sequential(q: &[f32], row: &[i8]) -> f32 {
    q.iter().zip(row).map(|(x, &r)| x * f32::from(r)).sum()
}

/// The scalar dot product in lanes (`q.len()` a multiple of [`LANES`]).
fn dot_lanes(q: &[f32], row: &[i8]) -> f32 {
    let mut acc = [0.0_f32; LANES];
    for (x, r) in q.chunks_exact(LANES).zip(row.chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] += x[k] * f32::from(r[k]);
        }
    }
    let b = [acc[0] + acc[4], acc[1] + acc[5], acc[2] + acc[6], acc[3] + acc[7]];
    let c = [b[0] + b[2], b[1] + b[3]];
    c[0] + c[1]
}

#[cfg(target_arch = "x86_64")]
fn dot_avx2_checked(q: &[f32], row: &[i8]) -> f32 {
    assert!(q.len() == row.len() && q.len().is_multiple_of(LANES));
    // SAFETY: chosen by `dot_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { dot_avx2(q, row) }
}

/// [`dot_lanes`] in AVX2 registers: multiply and add apart (no fused multiply-add, which rounds
/// once where the scalar path rounds twice), the lanes reduced in the scalar path's order.
///
/// # Safety
/// The CPU must have AVX2; `q` and `row` must have the same length, a multiple of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(q: &[f32], row: &[i8]) -> f32 {
    use std::arch::x86_64::*;
    let mut acc = _mm256_setzero_ps();
    let mut i = 0;
    while i < q.len() {
        // SAFETY: i + 8 <= len for both slices (same length, a multiple of 8).
        let (x, r) =
            unsafe { (_mm256_loadu_ps(q.as_ptr().add(i)), _mm_loadl_epi64(row.as_ptr().add(i).cast::<__m128i>())) };
        let r = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(r));
        acc = _mm256_add_ps(acc, _mm256_mul_ps(x, r));
        i += LANES;
    }
    // (0+4, 1+5, 2+6, 3+7), then (b0+b2, b1+b3), then c0+c1.
    let b = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    let c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    let d = _mm_add_ss(c, _mm_shuffle_ps(c, c, 1));
    _mm_cvtss_f32(d)
}

/// Requests of every kind the kernels' tests embed and multiply (a request has at most nine
/// texts: the whole and eight clauses).
#[cfg(test)]
const SAMPLE_REQUESTS: [&str; 9] = [
    "open a ticket about the login bug",
    "weather forecast for paris",
    "list my pull requests",
    "send an email to the team",
    "plot the sales as a bar chart",
    "read the config file",
    "search the web for rust news",
    "book a table for two",
    "merge the branch",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 dot product gives the scalar one's bits, on the table's own vectors and on
    /// extreme values.
    #[test]
    fn every_dot_product_path_gives_the_same_bits() {
        let m = model().expect("decodes");
        let texts = ["open a ticket about the login bug", "weather forecast for paris", "list my pull requests"];
        let queries: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).expect("known")).collect();
        let mut rows: Vec<Vec<i8>> = queries.iter().map(|q| Quantized::new(q).data.into_vec()).collect();
        rows.push(vec![127; m.dim()]);
        rows.push(vec![-127; m.dim()]);
        rows.push((0..m.dim()).map(|i| (i as i64 * 37 % 255 - 127) as i8).collect());
        for q in &queries {
            for row in &rows {
                let lanes = dot_lanes(q, row);
                assert!((lanes - dot_sequential(q, row)).abs() < 1e-3);
                assert_eq!(dot_fn(m.dim())(q, row).to_bits(), lanes.to_bits());
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    assert_eq!(dot_avx2_checked(q, row).to_bits(), lanes.to_bits());
                }
            }
        }
    }

    /// The fused kernel gives each query the single dot product's bits, for every count of
    /// queries up to a group, on the table's vectors and on extreme rows.
    #[test]
    fn the_fused_dot_products_give_each_querys_own_bits() {
        let m = model().expect("decodes");
        let texts = SAMPLE_REQUESTS;
        let queries: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).expect("known")).collect();
        let mut rows: Vec<Vec<i8>> = queries.iter().map(|q| Quantized::new(q).data.into_vec()).collect();
        rows.push(vec![127; m.dim()]);
        rows.push(vec![-127; m.dim()]);
        rows.push((0..m.dim()).map(|i| (i as i64 * 37 % 255 - 127) as i8).collect());
        let single = dot_fn(m.dim());
        for n in 1..=GROUP {
            let qs: Vec<&[f32]> = queries[queries.len() - n..].iter().map(Vec::as_slice).collect();
            for row in &rows {
                let mut out = vec![f32::NAN; n];
                dots_fn(m.dim())(&qs, row, &mut out);
                for (q, x) in qs.iter().zip(&out) {
                    assert_eq!(x.to_bits(), single(q, row).to_bits(), "{n} queries");
                    assert_eq!(x.to_bits(), dot_lanes(q, row).to_bits(), "{n} queries");
                }
            }
        }
    }

    #[test]
    fn compact_vectors_rank_as_the_full_ones() {
        let m = model().expect("decodes");
        let q = m.embed("open a ticket about the login bug").expect("known words");
        let texts = ["create a jira issue", "post a slack message", "list pull requests", "report a bug"];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        let mut full = Vec::new();
        for t in texts {
            let v = m.embed(t).expect("known");
            full.push(cosine(&q, &v));
            block.push(Some(&Quantized::new(&v)));
        }
        block.push(None);
        let compact = block.cosines(&q);
        assert_eq!(compact.last(), Some(&None));
        for (c, f) in compact.iter().zip(&full) {
            assert!((c.expect("a vector") - f).abs() < 0.01, "{c:?} vs {f}");
        }
        // A wrong-length or non-finite vector is stored as none.
        let mut bad = Vectors::with_capacity(m.dim(), 2);
        bad.push(Some(&Quantized { scale: 1.0, data: vec![1; 3].into() }));
        bad.push(Some(&Quantized { scale: f32::NAN, data: vec![1; m.dim()].into() }));
        assert_eq!(bad.cosines(&q), vec![None, None]);
    }

    /// Several queries' cosines in one pass are each query's own, to the bit, NaN where a tool
    /// has no vector or a query the wrong length.
    #[test]
    fn cosines_of_several_queries_are_each_ones_own() {
        let m = model().expect("decodes");
        let texts = ["create a jira issue", "post a slack message", "list pull requests", "report a bug"];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        for t in texts {
            block.push(m.embed_tool(t).as_ref());
        }
        block.push(None);
        // More queries than the fused kernel takes at once, and one of the wrong length among them.
        let queries: Vec<Vec<f32>> = [
            "open a ticket about the login bug",
            "weather in paris",
            "merge my branch",
            "send an email",
            "read a file",
            "plot a chart",
            "search the web",
            "book a flight",
            "list my calendar events",
            "translate this text",
        ]
        .iter()
        .map(|t| m.embed(t).expect("known"))
        .collect();
        assert!(queries.len() > GROUP);
        let short = vec![0.5_f32; 3];
        let qs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).chain([short.as_slice()]).collect();
        let many = block.cosines_many(&qs);
        let tools = texts.len() + 1;
        assert_eq!(many.len(), qs.len() * tools);
        for (k, q) in queries.iter().enumerate() {
            for (d, c) in block.cosines(q).into_iter().enumerate() {
                match c {
                    Some(c) => assert_eq!(many[k * tools + d].to_bits(), c.to_bits()),
                    None => assert!(many[k * tools + d].is_nan()),
                }
            }
        }
        assert!(many[queries.len() * tools..].iter().all(|c| c.is_nan()));
    }
}
