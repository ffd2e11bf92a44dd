//! Near cosines: each of a request's vectors rounded to int8 steps and multiplied with every
//! tool's int8 row in integers (AVX2), each product made at once into a bound that is never
//! below the exact cosine ([`Vectors::approx_many`], [`Bounds`]).

use super::Vectors;

/// The rows' length the integer kernel is written for (the English table's: four registers of
/// 32 values a row).
const DIM: usize = 128;

/// Room for the float sums' rounding (the exact cosine's and the near one's).
const MARGIN: f32 = 1e-4;

/// A query's values in steps of its largest component: seven bits (`|value| <= 63`), so that
/// the query offset by [`OFFSET`] is unsigned and below 128, and a pair of its products with
/// a row's int8 values fits in i16 ([`uppers_avx2`]).
const LEVELS: f32 = 63.0;

/// What the kernel adds to each query value (`1..=127` after it).
const OFFSET: i8 = 64;

/// `q` in steps of its largest component over [`LEVELS`], and the step; `None` without a
/// finite largest component above `f32::EPSILON`.
fn rounded(q: &[f32]) -> Option<(f32, Vec<i8>)> {
    let max = q.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if max <= f32::EPSILON || !max.is_finite() {
        return None;
    }
    let step = max / LEVELS;
    Some((step, q.iter().map(|x| (x / step).round().clamp(-LEVELS, LEVELS) as i8).collect()))
}

impl Vectors {
    /// Each tool's cosine with each of the unit vectors `qs`, bounded from above: each query
    /// rounded to steps of its largest component over 63 ([`rounded`]) and multiplied with the
    /// int8 rows in integers, in one pass
    /// over the tools, and the product made into a bound (NaN for tools without a vector).
    /// Query `k`'s true cosine with tool `d` (what [`Vectors::cosine`] gives) is at most
    /// [`Bounds::upper`]. A large catalogue's cosines are read this way, and the exact one is
    /// made only for the tools whose bound can still matter. `buffer` is kept from an earlier
    /// request ([`Approx::into_buffer`]).
    /// `None` when this machine has no fast integer products (or the rows are not of the
    /// length they take): every cosine is then taken exactly, with [`Vectors::cosines_many`].
    pub fn approx_many(&self, qs: &[&[f32]], buffer: Vec<f32>) -> Option<Approx> {
        let kernel = kernel_fn(self.dim)?;
        let tools = self.scales.len();
        // Each query in steps of its largest component; a query of the wrong length or without
        // a finite largest component is left out (it has no values).
        let mut slots = vec![None; qs.len()];
        let mut steps: Vec<f32> = Vec::new();
        let mut halves: Vec<f32> = Vec::new();
        let mut rounded: Vec<i8> = Vec::new();
        for (k, q) in qs.iter().enumerate() {
            if q.len() != self.dim {
                continue;
            }
            let Some((step, values)) = self::rounded(q) else { continue };
            rounded.extend_from_slice(&values);
            slots[k] = Some(steps.len());
            steps.push(step);
            // Half a step (each component of the query is off by at most that), with room for
            // rounding.
            halves.push(step / 2.0 * 1.001);
        }
        let len = steps.len() * tools;
        let mut uppers = buffer;
        // Every value is written below: a kept buffer long enough is not filled first.
        if uppers.len() < len {
            uppers.resize(len, f32::NAN);
        }
        if len > 0 {
            let job = Job { qs: &rounded, steps: &steps, halves: &halves, vectors: self };
            kernel(&job, &mut uppers[..len]);
        }
        Some(Approx { uppers, tools, slots })
    }

    /// Whether [`Vectors::approx_many`] can read these rows here (a CPU with fast integer
    /// products, rows of the length the kernel takes).
    pub fn has_near(&self) -> bool {
        kernel_fn(self.dim).is_some()
    }

    /// Query `k`'s bounds in `approx`; `None` when the query was left out.
    pub fn bounds<'a>(&self, approx: &'a Approx, k: usize) -> Option<Bounds<'a>> {
        let tools = approx.tools;
        let j = approx.slots.get(k).copied().flatten()?;
        Some(Bounds { uppers: &approx.uppers[j * tools..(j + 1) * tools] })
    }
}

/// [`Vectors::approx_many`]'s bounds: query `k`'s on tool `d` at `slots[k] * tools + d` (no
/// slot: the query was left out).
pub struct Approx {
    uppers: Vec<f32>,
    tools: usize,
    slots: Vec<Option<usize>>,
}

impl Approx {
    /// The buffer the bounds were written in, for the next request.
    pub fn into_buffer(self) -> Vec<f32> {
        self.uppers
    }
}

/// One query's cosines with every tool, bounded from above ([`Vectors::bounds`]): the cosine
/// of tool `d` is at most its near one plus half a step of the query (with room for rounding)
/// times the row's L1 norm, plus [`MARGIN`].
///
/// Why: the tool's cosine is `scale * sum(q[i] * x[i])` over the row's int8 values `x`, and the
/// query rounded is `q[i] = step * r[i] + e[i]` with `|e[i]| <= step / 2` (whatever the step:
/// 1/63 of the largest component, so twice the error of int8 steps), so the cosine is at most
/// `scale * step * sum(r[i] * x[i]) + step / 2 * scale * sum(|x[i]|)`: the near value plus
/// half a step times the row's L1 norm of the unit vector ([`Vectors::spread`]). The integer
/// sum is exact; the float products and sums round, on both sides, far less than the room
/// kept (`1.001` on the half step, and [`MARGIN`]).
pub struct Bounds<'a> {
    uppers: &'a [f32],
}

impl Bounds<'_> {
    /// At least tool `d`'s cosine (NaN for a tool without a vector).
    #[inline]
    pub fn upper(&self, d: usize) -> f32 {
        self.uppers[d]
    }

    /// Calls `f` with every tool `d`, in order, that is not `skip`ped and whose bound `u` is at
    /// least `least`, or for which `other[d] > 0` and `max(u, lo) + other[d] * per_other` is at
    /// least `least_other` (a NaN bound read as `lo`); `other` and `skip` one value a tool. What
    /// a pass over every tool keeps, read eight tools at a time.
    pub fn each_reaching(
        &self,
        least: f32,
        (lo, per_other, least_other): (f32, f32, f32),
        other: &[f32],
        skip: &[bool],
        mut f: impl FnMut(usize),
    ) {
        let n = self.uppers.len();
        assert!(other.len() >= n && skip.len() >= n);
        let mut d = 0;
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            while d + 8 <= n {
                // SAFETY: SSE2 (every x86_64 machine has it); d + 8 <= n, and the slices are at
                // least n long.
                let mask = unsafe {
                    let (at_least, zero) = (_mm_set1_ps(least), _mm_setzero_ps());
                    let (lo, per, at_least_other) = (_mm_set1_ps(lo), _mm_set1_ps(per_other), _mm_set1_ps(least_other));
                    let (u, o) = (self.uppers.as_ptr().add(d), other.as_ptr().add(d));
                    // Four tools: the bound reaches `least`, or BM25 and the bound together do
                    // (`_mm_max_ps` gives its second operand where the first is NaN).
                    macro_rules! four {
                        ($u:expr, $o:expr) => {{
                            let (u, o) = (_mm_loadu_ps($u), _mm_loadu_ps($o));
                            let with = _mm_add_ps(_mm_max_ps(u, lo), _mm_mul_ps(o, per));
                            let plain = _mm_and_ps(_mm_cmpgt_ps(o, zero), _mm_cmpge_ps(with, at_least_other));
                            _mm_movemask_ps(_mm_or_ps(_mm_cmpge_ps(u, at_least), plain))
                        }};
                    }
                    let reached = four!(u, o) | (four!(u.add(4), o.add(4)) << 4);
                    // A bool is one byte, 0 or 1: the eight not skipped.
                    let skipped = _mm_loadl_epi64(skip.as_ptr().add(d).cast::<__m128i>());
                    reached & _mm_movemask_epi8(_mm_cmpeq_epi8(skipped, _mm_setzero_si128()))
                };
                let mut bits = (mask & 0xFF) as u32;
                while bits != 0 {
                    f(d + bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
                d += 8;
            }
        }
        for d in d..n {
            let u = self.uppers[d];
            let floored = if u >= lo { u } else { lo };
            if !skip[d] && (u >= least || (other[d] > 0.0 && floored + other[d] * per_other >= least_other)) {
                f(d);
            }
        }
    }
}

/// What the kernel reads: the queries one after another in `qs`, [`DIM`] values each (at most
/// [`LEVELS`] in size), each query's step and half of it (with room for rounding), and the
/// tools' rows.
struct Job<'a> {
    qs: &'a [i8],
    steps: &'a [f32],
    halves: &'a [f32],
    vectors: &'a Vectors,
}

/// Every query's bound on every tool's cosine into `out` (query `j`'s on tool `d` at
/// `j * tools + d`): the fast way this machine has, `None` when it has none.
type Kernel = fn(&Job, &mut [f32]);

fn kernel_fn(dim: usize) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    if dim == DIM && std::arch::is_x86_feature_detected!("avx2") {
        return Some(uppers_avx2_checked);
    }
    let _ = dim;
    None
}

/// Query `j`'s bound on tool `d`'s cosine: the integer product of the two rows times the
/// tool's scale and the query's step, plus half the step times the row's L1 norm
/// ([`Vectors::spread`]), plus [`MARGIN`]; NaN for a tool without a vector. The reference
/// every way is checked against (and the AVX2 way's rows after the last eight). (127 * 128 *
/// 128 stays far inside i32.)
fn upper_of(job: &Job, j: usize, d: usize) -> f32 {
    let v = job.vectors;
    let scale = v.scales[d];
    // NaN or not above 0: no vector.
    if scale.is_nan() || scale <= 0.0 {
        return f32::NAN;
    }
    let row = &v.data[d * DIM..(d + 1) * DIM];
    let q = &job.qs[j * DIM..(j + 1) * DIM];
    let x: i32 = q.iter().zip(row).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
    let value = scale * job.steps[j] * x as f32;
    value + job.halves[j] * v.spread[d] + MARGIN
}

#[cfg(target_arch = "x86_64")]
fn uppers_avx2_checked(job: &Job, out: &mut [f32]) {
    let v = job.vectors;
    let tools = v.scales.len();
    let nq = job.steps.len();
    assert!(v.dim == DIM && v.data.len() == tools * DIM && v.spread.len() == tools && v.sums.len() == tools);
    assert!(job.qs.iter().all(|&x| f32::from(x).abs() <= LEVELS));
    assert!(job.qs.len() == nq * DIM && job.halves.len() == nq && out.len() == nq * tools);
    // SAFETY: chosen by `kernel_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { uppers_avx2(job, out) }
}

/// [`upper_of`] of every query and tool in AVX2 registers, a query at a time (its 128 values in
/// four registers, each offset by [`OFFSET`] to `1..=127`, read unsigned) over eight rows at a
/// time: the offset query times each row's int8 values straight from memory, in pairs of i16
/// (at most 2 * 127 * 128 either way: no saturation), summed into i32 lanes; the eight rows'
/// lanes added into one register of eight sums, less the offset times each row's sum
/// ([`Vectors::sums`]: `sum((r + 64) * x) - 64 * sum(x) = sum(r * x)`, exact in i32), then the
/// same float operations as [`upper_of`], eight tools at once (NaN where a tool has no
/// vector). The queries are rounded by [`Vectors::approx_many`] to at most [`LEVELS`].
///
/// # Safety
/// The CPU must have AVX2; the lengths as [`uppers_avx2_checked`] checks them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn uppers_avx2(job: &Job, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let v = job.vectors;
    let tools = v.scales.len();
    let blocks = tools / 8;
    let (ones, offset) = (_mm256_set1_epi16(1), _mm256_set1_epi8(OFFSET));
    let (zero, nan, margin) = (_mm256_setzero_ps(), _mm256_set1_ps(f32::NAN), _mm256_set1_ps(MARGIN));
    // Macros, not closures: a closure would not be compiled for AVX2.
    // One offset query register's products with a row's 32 values at `p`, in eight i32 lanes.
    macro_rules! part {
        ($p:expr, $q:expr) => {{ _mm256_madd_epi16(_mm256_maddubs_epi16($q, _mm256_loadu_si256($p.cast::<__m256i>())), ones) }};
    }
    for j in 0..job.steps.len() {
        // SAFETY: query j is qs[j * DIM..(j + 1) * DIM].
        let (q0, q1, q2, q3) = unsafe {
            let q = job.qs.as_ptr().add(j * DIM);
            (
                _mm256_add_epi8(_mm256_loadu_si256(q.cast::<__m256i>()), offset),
                _mm256_add_epi8(_mm256_loadu_si256(q.add(32).cast::<__m256i>()), offset),
                _mm256_add_epi8(_mm256_loadu_si256(q.add(64).cast::<__m256i>()), offset),
                _mm256_add_epi8(_mm256_loadu_si256(q.add(96).cast::<__m256i>()), offset),
            )
        };
        // A row's products with the query, in eight i32 lanes.
        macro_rules! row {
            ($r:expr) => {{
                let r = $r;
                _mm256_add_epi32(
                    _mm256_add_epi32(part!(r, q0), part!(r.add(32), q1)),
                    _mm256_add_epi32(part!(r.add(64), q2), part!(r.add(96), q3)),
                )
            }};
        }
        let (step, half) = (_mm256_set1_ps(job.steps[j]), _mm256_set1_ps(job.halves[j]));
        for b in 0..blocks {
            let d = b * 8;
            // SAFETY: rows d..d + 8 are below tools; query j's values are out[j * tools..].
            unsafe {
                let r = v.data.as_ptr().add(d * DIM);
                // Lanes: rows 0-3's sums of their low halves, then of their high halves.
                let h0 = _mm256_hadd_epi32(
                    _mm256_hadd_epi32(row!(r), row!(r.add(DIM))),
                    _mm256_hadd_epi32(row!(r.add(2 * DIM)), row!(r.add(3 * DIM))),
                );
                let h1 = _mm256_hadd_epi32(
                    _mm256_hadd_epi32(row!(r.add(4 * DIM)), row!(r.add(5 * DIM))),
                    _mm256_hadd_epi32(row!(r.add(6 * DIM)), row!(r.add(7 * DIM))),
                );
                let x = _mm256_add_epi32(
                    _mm256_permute2x128_si256::<0x20>(h0, h1),
                    _mm256_permute2x128_si256::<0x31>(h0, h1),
                );
                // The offset's part: 64 times each row's sum.
                let sums = _mm256_loadu_si256(v.sums.as_ptr().add(d).cast::<__m256i>());
                let x = _mm256_sub_epi32(x, _mm256_slli_epi32::<6>(sums));
                let scale = _mm256_loadu_ps(v.scales.as_ptr().add(d));
                let spread = _mm256_loadu_ps(v.spread.as_ptr().add(d));
                let value = _mm256_mul_ps(_mm256_mul_ps(scale, step), _mm256_cvtepi32_ps(x));
                let upper = _mm256_add_ps(_mm256_add_ps(value, _mm256_mul_ps(half, spread)), margin);
                let has = _mm256_cmp_ps::<_CMP_GT_OQ>(scale, zero);
                _mm256_storeu_ps(out.as_mut_ptr().add(j * tools + d), _mm256_blendv_ps(nan, upper, has));
            }
        }
        for d in blocks * 8..tools {
            out[j * tools + d] = upper_of(job, j, d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::model;
    use super::super::{GROUP, Quantized};
    use super::*;

    /// The fast kernel gives the reference's bounds to the bit, for every count of queries up
    /// to a request's texts, on the table's own vectors, extreme rows (a stored -128 among
    /// them), rows without a vector, and a count of tools not a multiple of eight.
    #[test]
    fn the_fast_bounds_are_the_reference_ones() {
        let m = model().expect("decodes");
        assert_eq!(m.dim(), DIM, "the kernel is written for the table's width");
        let Some(fast) = kernel_fn(DIM) else { return };
        let texts = super::super::SAMPLE_REQUESTS;
        let mut block = Vectors::with_capacity(DIM, 40);
        let extreme: [Vec<i8>; 4] = [
            vec![127; DIM],
            vec![-128; DIM],
            (0..DIM).map(|i| (i as i64 * 37 % 256 - 128) as i8).collect(),
            (0..DIM).map(|i| if i % 2 == 0 { -128 } else { 127 }).collect(),
        ];
        for (i, t) in texts.iter().cycle().take(27).enumerate() {
            block.push(m.embed_tool(t).as_ref());
            if i % 7 == 3 {
                block.push(None);
            }
            if i % 6 == 1 {
                let data = extreme[i % 4].clone().into_boxed_slice();
                block.push(Some(&Quantized { scale: 0.01, data }));
            }
        }
        let tools = block.scales.len();
        assert!(!tools.is_multiple_of(8) && block.data.contains(&-128));
        let queries: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).expect("known")).collect();
        let mut extremes: Vec<f32> = vec![0.0; DIM];
        extremes[0] = 1.0;
        for n in 1..=GROUP {
            let mut qs: Vec<&[f32]> = queries[..n].iter().map(Vec::as_slice).collect();
            qs[0] = &extremes;
            let approx = block.approx_many(&qs, Vec::new()).expect("AVX2");
            let mut reference = vec![f32::NAN; n * tools];
            let rounded: Vec<(f32, Vec<i8>)> = qs.iter().map(|q| rounded(q).expect("a largest component")).collect();
            assert!(rounded.iter().all(|(_, r)| r.iter().any(|&x| x.abs() == 63) && r.iter().all(|&x| x.abs() <= 63)));
            let flat: Vec<i8> = rounded.iter().flat_map(|(_, r)| r.iter().copied()).collect();
            let steps: Vec<f32> = rounded.iter().map(|(s, _)| *s).collect();
            let halves: Vec<f32> = steps.iter().map(|s| s / 2.0 * 1.001).collect();
            let job = Job { qs: &flat, steps: &steps, halves: &halves, vectors: &block };
            for j in 0..n {
                for d in 0..tools {
                    reference[j * tools + d] = upper_of(&job, j, d);
                }
            }
            let mut direct = vec![0.0; n * tools];
            fast(&job, &mut direct);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&direct), bits(&reference), "{n} queries");
            assert_eq!(bits(&approx.uppers[..n * tools]), bits(&reference), "{n} queries");
            assert!(reference.iter().any(|x| x.is_nan()) && reference.iter().any(|x| !x.is_nan()));
        }
    }

    /// Every exact cosine lies within the bounds, for the table's own texts as queries and
    /// tools, with a buffer kept from an earlier, larger request; the bounds are tight enough
    /// to pass most tools over.
    #[test]
    fn near_cosines_bound_the_exact_ones() {
        let m = model().expect("decodes");
        let texts = [
            "create a jira issue",
            "post a slack message to the team channel",
            "list pull requests waiting for my review",
            "report a bug",
            "weather forecast for paris tomorrow",
            "convert 100 usd to eur",
            "read the sales sheet, plot it as a bar chart and save it",
            "x",
        ];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        for t in texts {
            block.push(m.embed_tool(t).as_ref());
        }
        block.push(None);
        let queries: Vec<Vec<f32>> = texts.iter().filter_map(|t| m.embed(t)).collect();
        let mut qs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        qs.insert(2, &[0.5; 3]);
        let kept = vec![7.0; 1000];
        let Some(approx) = block.approx_many(&qs, kept) else { return };
        assert!(block.bounds(&approx, 2).is_none(), "a query of the wrong length has no values");
        let mut widest = 0.0_f32;
        for (k, q) in qs.iter().enumerate().filter(|(k, _)| *k != 2) {
            let bounds = block.bounds(&approx, k).expect("a query of the table's length");
            let mut reached = Vec::new();
            bounds.each_reaching(0.3, (0.0, 0.0, 0.3), &[0.0; 9], &[false; 9], |d| reached.push(d));
            for d in 0..texts.len() + 1 {
                let (exact, upper) = (block.cosine(d, q), bounds.upper(d));
                assert_eq!(reached.contains(&d), upper >= 0.3, "{k} {d}");
                if d == texts.len() {
                    assert!(exact.is_nan() && upper.is_nan());
                    continue;
                }
                assert!(exact <= upper, "{k} {d}: {exact} above {upper}");
                widest = widest.max(upper - exact);
            }
        }
        assert!(widest < 0.05, "bounds {widest} wide");
    }

    /// The pass over every tool keeps what a plain loop keeps, in order, for counts of tools
    /// around the eight read at once, NaN among the bounds, tools skipped, with BM25 parts and
    /// without.
    #[test]
    fn each_reaching_keeps_what_a_loop_keeps() {
        for n in [0, 1, 7, 8, 9, 16, 23, 64, 100] {
            let uppers: Vec<f32> =
                (0..n).map(|i| if i % 5 == 4 { f32::NAN } else { (i * 37 % 19) as f32 / 19.0 - 0.3 }).collect();
            let other: Vec<f32> = (0..n).map(|i| if i % 3 != 1 { (i * 13 % 7) as f32 / 7.0 } else { 0.0 }).collect();
            let skip: Vec<bool> = (0..n).map(|i| i % 4 == 1).collect();
            for least in [f32::NEG_INFINITY, -0.1, 0.2, 0.5, 2.0] {
                for (lo, per) in [(0.0, 0.0), (0.1, 0.3), (-0.2, 1.5)] {
                    let least_other = least - 0.05;
                    let bounds = Bounds { uppers: &uppers };
                    let mut got = Vec::new();
                    bounds.each_reaching(least, (lo, per, least_other), &other, &skip, |d| got.push(d));
                    let want: Vec<usize> = (0..n)
                        .filter(|&d| {
                            let u = if uppers[d].is_nan() { lo } else { uppers[d].max(lo) };
                            !skip[d] && (uppers[d] >= least || (other[d] > 0.0 && u + other[d] * per >= least_other))
                        })
                        .collect();
                    assert_eq!(got, want, "{n} tools, least {least}, lo {lo}, per {per}");
                    assert!(n < 23 || least > 1.0 || !got.is_empty());
                }
            }
        }
    }
}
