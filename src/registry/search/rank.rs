//! The query path: a request's texts (the whole request and, for one of several steps, each
//! clause) read once and embedded, then each compared with every tool and scored with buffers
//! of the tool count, kept from one request to the next. Over a large catalogue a long
//! request's texts are ranked on the machine's cores, each thread with buffers of its own
//! ([`SearchIndex::rank_on_threads`]): the lists are the ones one thread makes, to the bit.

use super::*;

mod widen;
#[cfg(test)]
use widen::merge;
use widen::widen;

/// One text of a request, read.
struct Text<'a> {
    text: &'a str,
    parsed: Parsed,
}

/// Buffers of the tool count, kept by the index from one request to the next and left zeroed
/// by each text's ranking ([`Scratch::clear`] undoes what the text wrote): a catalogue of
/// 10,000 tools would otherwise allocate and zero a quarter of a megabyte a request.
pub(super) struct Scratch {
    acc: Vec<f32>,
    best: Vec<f32>,
    /// The weight of the words that can make a tool relevant, as matched.
    anchored: Vec<f32>,
    semantic: Vec<f32>,
    plain: Vec<f32>,
    listed: Vec<bool>,
    bm25: bm25::Memo,
    /// The near cosines' bounds of the text being ranked ([`embed::Vectors::approx_many`]).
    uppers: Vec<f32>,
    /// Lists a ranking fills, kept for their room (a common word matches thousands of tools):
    /// left empty.
    lists: Lists,
}

/// A text's lists of tools, kept with their room from one ranking to the next.
#[derive(Default)]
struct Lists {
    touched: Vec<u32>,
    candidates: Vec<u32>,
    plain_only: Vec<u32>,
    order: Vec<u64>,
    extra: Vec<u64>,
}

impl Lists {
    fn bytes(&self) -> usize {
        (self.touched.capacity() + self.candidates.capacity() + self.plain_only.capacity()) * 4
            + (self.order.capacity() + self.extra.capacity()) * 8
    }
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            acc: vec![0.0; n],
            best: vec![0.0; n],
            anchored: vec![0.0; n],
            semantic: vec![0.0; n],
            plain: vec![0.0; n],
            listed: vec![false; n],
            bm25: bm25::Memo::new(false, 0),
            uppers: Vec::new(),
            lists: Lists::default(),
        }
    }

    /// Zeroes what a ranking wrote: every entry it set is a candidate's.
    fn clear(&mut self, candidates: impl Iterator<Item = u32>) {
        for d in candidates {
            let d = d as usize;
            self.acc[d] = 0.0;
            self.anchored[d] = 0.0;
            self.semantic[d] = 0.0;
            self.plain[d] = 0.0;
            self.listed[d] = false;
        }
    }

    /// Whether every buffer is zeroed, as a ranking must leave it.
    fn is_clear(&self) -> bool {
        let zero = |v: &[f32]| v.iter().all(|x| *x == 0.0);
        zero(&self.acc)
            && zero(&self.best)
            && zero(&self.anchored)
            && zero(&self.semantic)
            && zero(&self.plain)
            && !self.listed.contains(&true)
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.acc.capacity() * 4 * 5 + self.listed.capacity() + self.uppers.capacity() * 4 + self.lists.bytes()
    }
}

/// What ranking reads of every tool, apart from the tools' records (made on the first search):
/// a large catalogue's candidates are read by the thousand, and a record takes two cache lines.
pub(super) struct Layout {
    /// Each tool's run of neighbours of one integration (an integration's tools are listed
    /// together): its place in `names`.
    of_doc: Vec<u32>,
    names: Vec<&'static str>,
    /// Each tool's [`BARE`], [`AGNOSTIC`] and [`REMOTE`].
    flags: Vec<u8>,
}

const BARE: u8 = 1;
const AGNOSTIC: u8 = 2;
const REMOTE: u8 = 4;

impl Layout {
    fn new(docs: &[Doc]) -> Layout {
        let mut layout = Layout { of_doc: Vec::with_capacity(docs.len()), names: Vec::new(), flags: Vec::new() };
        for doc in docs {
            if layout.names.last() != Some(&doc.integration) {
                layout.names.push(doc.integration);
            }
            layout.of_doc.push(layout.names.len() as u32 - 1);
        }
        layout.flags = docs
            .iter()
            .map(|d| (u8::from(d.bare) * BARE) | (u8::from(d.agnostic) * AGNOSTIC) | (u8::from(d.remote) * REMOTE))
            .collect();
        layout
    }
}

/// The runs of a request, with whether the user has connected each: one call of `connected`
/// per run and request.
struct Runs<'a> {
    of_doc: &'a [u32],
    names: &'a [&'static str],
    flags: &'a [u8],
    connected: Vec<bool>,
    /// Each run's connection factor: 1.0 when connected, else [`Fusion::unconnected`].
    unconnected: Vec<f32>,
}

impl Runs<'_> {
    fn new<'a>(layout: &'a Layout, connected: &dyn Fn(&str) -> bool, unconnected: f32) -> Runs<'a> {
        let connected: Vec<bool> = layout.names.iter().map(|n| connected(n)).collect();
        Runs {
            of_doc: &layout.of_doc,
            names: &layout.names,
            flags: &layout.flags,
            unconnected: connected.iter().map(|&c| if c { 1.0 } else { unconnected }).collect(),
            connected,
        }
    }

    fn is(&self, d: u32, flag: u8) -> bool {
        self.flags[d as usize] & flag != 0
    }
}

/// A text's cosines with every tool (NaN for a tool without a vector), to be mapped onto 0..1
/// from `lo` to `hi`.
struct Cosines<'a> {
    values: Values<'a>,
    lo: f32,
    hi: f32,
}

enum Values<'a> {
    /// Every tool's cosine.
    Exact(&'a [f32]),
    /// Every tool's cosine bounded from above ([`embed::Vectors::bounds`]), the exact one made
    /// from `query` for the tools that are scored or whose bound can still pass: a large
    /// catalogue has thousands of tools near a request, and few of them can reach the list.
    Bounded { vectors: &'a embed::Vectors, bounds: embed::Bounds<'a>, query: &'a [f32] },
}

impl Values<'_> {
    /// Tool `d`'s cosine, exactly.
    #[inline]
    fn exact(&self, d: usize) -> f32 {
        match self {
            Values::Exact(v) => v[d],
            Values::Bounded { vectors, query, .. } => vectors.cosine(d, query),
        }
    }

    /// At least tool `d`'s cosine (NaN for a tool without a vector).
    #[inline]
    fn upper(&self, d: usize) -> f32 {
        match self {
            Values::Exact(v) => v[d],
            Values::Bounded { bounds, .. } => bounds.upper(d),
        }
    }
}

/// The hits of a text's ranking so far: every candidate scored down to [`WEAK_FLOOR`] (and an
/// exact name's tool), and the `limit` best scores, the lowest of which bounds what is still
/// worth scoring.
struct Best {
    hits: Vec<(f32, bool, u32)>,
    top: Vec<f32>,
    floor: f32,
}

impl Best {
    fn add(&mut self, score: f32, d: u32, limit: usize) {
        if score < WEAK_FLOOR {
            return;
        }
        self.hits.push((score, false, d));
        let at = self.top.partition_point(|s| *s > score);
        self.top.insert(at, score);
        if self.top.len() > limit {
            self.top.pop();
        }
        if self.top.len() == limit {
            self.floor = self.floor.max(self.top[limit - 1]);
        }
    }
}

/// From how many clauses a request's whole reading is made of its clauses' ([`Parsed::merged`]).
const MERGED_FROM: usize = 3;

/// How many candidates are put in order at a time: scoring stops after the first few dozen
/// (below the `limit`-th score found), so the rest of thousands is rarely sorted at all.
const ORDER_CHUNK: usize = 64;

/// A request of this many texts or more (the whole request and three clauses) has its texts
/// ranked on more than one thread where the machine has the cores ([`workers`]), over a
/// catalogue of [`PARALLEL_TOOLS`] tools or more: over fewer, a text's ranking is too little
/// work to repay a thread (measured in docs/search.md: -5% at 1,211 tools, -10% at 3,211,
/// -25% at 10,211; slower at 211).
const PARALLEL_FROM: usize = 4;
const PARALLEL_TOOLS: usize = 2_000;
/// The most threads one request's texts are ranked on (and the most buffers kept).
const MAX_WORKERS: usize = 3;

/// The threads the user set ([`set_threads`]; 0: not set).
static THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets how many threads a long request's texts are ranked on (`WORKBENCH_SEARCH_THREADS`,
/// `search_threads`): 1 to [`MAX_WORKERS`], or 0 for the machine's cores.
pub fn set_threads(threads: usize) {
    THREADS.store(threads.min(MAX_WORKERS), std::sync::atomic::Ordering::Relaxed);
}

/// How many threads a long request's texts are ranked on: as set, else the machine's cores, at
/// most [`MAX_WORKERS`].
fn workers() -> usize {
    match THREADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => crate::platform::cores().min(MAX_WORKERS),
        set => set,
    }
}

/// Helper threads running for searches, in the whole process.
static HELPING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Helper threads a search may start, taken from the process's [`MAX_WORKERS`] - 1 and given
/// back when dropped: however many searches run side by side (an agent may send many), at most
/// that many helpers run, and so at most that many sets of buffers are made beside the searches'
/// own.
struct Helpers {
    n: usize,
    from: &'static std::sync::atomic::AtomicUsize,
}

impl Helpers {
    fn take(want: usize) -> Helpers {
        Helpers::take_from(&HELPING, want)
    }

    fn take_from(from: &'static std::sync::atomic::AtomicUsize, want: usize) -> Helpers {
        use std::sync::atomic::Ordering;
        let most = MAX_WORKERS - 1;
        let mut running = from.load(Ordering::Relaxed);
        loop {
            let n = want.min(most.saturating_sub(running));
            if n == 0 {
                return Helpers { n: 0, from };
            }
            match from.compare_exchange_weak(running, running + n, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Helpers { n, from },
                Err(now) => running = now,
            }
        }
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        self.from.fetch_sub(self.n, std::sync::atomic::Ordering::AcqRel);
    }
}

/// One text to rank: its place among the request's texts, the text, its vector's cosines.
type Job<'a> = (usize, &'a Text<'a>, Option<Semantic<'a>>);

/// A text's cosines with every tool: made (every tool's, exactly), or to be made near and
/// bounded from above by the thread that ranks the text ([`SearchIndex::rank_text`]).
enum Semantic<'a> {
    Exact(&'a [f32]),
    Near { vectors: &'a embed::Vectors, query: &'a [f32] },
}

/// What every text of a request is ranked with (`lo` and `hi`: where its cosines map onto
/// 0..1, [`Cosines`]).
#[derive(Clone, Copy)]
struct Ranking<'a> {
    runs: &'a Runs<'a>,
    limit: usize,
    fusion: Fusion,
    foreign: bool,
    lo: f32,
    hi: f32,
}

impl SearchIndex {
    /// A text's ranking: whole, and for a request of several steps clause by clause, merged.
    pub(super) fn ranked(
        &self,
        trimmed: &str,
        limit: usize,
        connected: &dyn Fn(&str) -> bool,
        fusion: Fusion,
        foreign: bool,
    ) -> Vec<(f32, u32)> {
        let workers = if self.docs.len() >= PARALLEL_TOOLS { workers() } else { 1 };
        self.ranked_cosines(trimmed, limit, connected, fusion, foreign, false, workers)
    }

    /// [`SearchIndex::ranked`], with every tool's cosine computed exactly when `exact` (the
    /// reference the bounded reading is checked against: the same rankings to the bit), the
    /// texts of a long request ranked on at most `workers` threads.
    #[allow(clippy::too_many_arguments)]
    fn ranked_cosines(
        &self,
        trimmed: &str,
        limit: usize,
        connected: &dyn Fn(&str) -> bool,
        fusion: Fusion,
        foreign: bool,
        exact: bool,
        workers: usize,
    ) -> Vec<(f32, u32)> {
        let (parts, rest) = clauses_with_rest(trimmed);
        let words = if parts.len() >= 2 { query::memo_room(trimmed) } else { 0 };
        let mut memo = query::Memo::new(parts.len() >= 2, words);
        let texts: Vec<Text> = if parts.len() < 2 {
            vec![Text { text: trimmed, parsed: self.parse_with(trimmed, &mut memo) }]
        } else {
            let mut clauses: Vec<Text> =
                parts.iter().map(|text| Text { text, parsed: self.parse_with(text, &mut memo) }).collect();
            // A task of several steps is read as its steps are: the whole request's reading is
            // its clauses' (and what they leave out for their number), not a second reading of
            // every word. A request of two keeps its own: what one part names may say what the
            // other does ("it's on my laptop ... on google drive" uploads).
            let parsed = if parts.len() >= MERGED_FROM {
                let rest = (!rest.is_empty()).then(|| self.parse_with(&rest, &mut memo));
                Parsed::merged(clauses.iter().map(|t| &t.parsed).chain(rest.as_ref()))
            } else {
                self.parse_with(trimmed, &mut memo)
            };
            clauses.insert(0, Text { text: trimmed, parsed });
            clauses
        };
        // The semantic tier: each text's cosine with every tool, in one pass over the tools; a
        // request not in English is read by the multilingual table.
        let n = self.docs.len();
        let (queries, vectors, lo, hi) = match foreign.then(multilingual::table).flatten() {
            Some(table) => {
                let q: Vec<Option<Vec<f32>>> =
                    texts.iter().map(|t| table.embed(&t.parsed.semantic_text(t.text))).collect();
                // The multilingual tool vectors are made on first use, when a text has a vector.
                let vectors = q.iter().any(Option::is_some).then(|| self.foreign_vectors(table));
                (q, vectors, fusion.foreign_lo, fusion.foreign_hi)
            }
            None if (fusion.blend > 0.0 || fusion.bare_blend > 0.0) && !self.vectors.is_empty() => {
                let semantic: Vec<_> = texts.iter().map(|t| t.parsed.semantic_text(t.text)).collect();
                let semantic: Vec<&str> = semantic.iter().map(|t| &**t).collect();
                let q = match embed::model() {
                    Some(m) if semantic.len() > 1 => m.embed_many(&semantic),
                    Some(m) => semantic.iter().map(|t| m.embed(t)).collect(),
                    None => vec![None; texts.len()],
                };
                (q, Some(&self.vectors), fusion.lo, fusion.hi)
            }
            None => (Vec::new(), None, fusion.lo, fusion.hi),
        };
        let present: Vec<&[f32]> = queries.iter().flatten().map(Vec::as_slice).collect();
        // Cosines taken relative to their mean over the tools need every one exactly; else a
        // near value of each is enough to pass most tools over ([`Values::Bounded`]).
        let bounded = !(exact || fusion.centre || foreign);
        let near = bounded && vectors.is_some_and(embed::Vectors::has_near);
        let cosines = match vectors {
            Some(v) if !near => v.cosines_many(&present),
            _ => Vec::new(),
        };
        let mut scratch = self.kept_scratch(n);
        let runs = Runs::new(self.layout.get_or_init(|| Layout::new(&self.docs)), connected, fusion.unconnected);
        scratch.bm25 = bm25::Memo::new(texts.len() > 1, words);
        let mut next = 0;
        let jobs: Vec<Job> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let semantic = match (queries.get(i), vectors) {
                    (Some(Some(query)), Some(vectors)) if near => Some(Semantic::Near { vectors, query }),
                    (Some(Some(_)), _) if !cosines.is_empty() => {
                        next += 1;
                        Some(Semantic::Exact(&cosines[(next - 1) * n..next * n]))
                    }
                    _ => None,
                };
                (i, t, semantic)
            })
            .collect();
        let ranking = Ranking { runs: &runs, limit, fusion, foreign, lo, hi };
        let helpers = if jobs.len() >= PARALLEL_FROM { workers.min(jobs.len()).saturating_sub(1) } else { 0 };
        // Searches side by side share the helpers: at most MAX_WORKERS - 1 in the process.
        let helpers = Helpers::take(helpers);
        let mut lists: Vec<Vec<(f32, u32)>> = if helpers.n == 0 {
            jobs.into_iter().map(|(_, t, semantic)| self.rank_text(t, semantic, &mut scratch, &ranking)).collect()
        } else {
            self.rank_on_threads(jobs, helpers.n, &mut scratch, &ranking, words)
        };
        drop(helpers);
        debug_assert!(scratch.is_clear(), "a ranking left its buffers written");
        scratch.bm25 = bm25::Memo::new(false, 0);
        self.keep_scratch(scratch);
        if lists.len() == 1 {
            return lists.pop().unwrap_or_default();
        }
        widen(&lists, limit, runs.of_doc)
    }

    /// The buffers kept from an earlier search for `n` tools, or new ones.
    fn kept_scratch(&self, n: usize) -> Scratch {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(scratch) = kept.pop() {
            if scratch.acc.len() == n {
                return scratch;
            }
        }
        Scratch::new(n)
    }

    /// Buffers zeroed by their rankings, kept for the next search (as many as one search's
    /// threads use at most: searches side by side make their own).
    fn keep_scratch(&self, scratch: Scratch) {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() < MAX_WORKERS {
            kept.push(scratch);
        }
    }

    /// The rankings of a long request's texts shared out among this thread and `helpers` more,
    /// each with buffers of its own, a text at a time in the texts' order (the whole request,
    /// the most work, first): the lists come back in the texts' order, as one thread makes them.
    /// A helper that cannot be started leaves its share to the others.
    fn rank_on_threads(
        &self,
        jobs: Vec<Job>,
        helpers: usize,
        scratch: &mut Scratch,
        ranking: &Ranking,
        words: usize,
    ) -> Vec<Vec<(f32, u32)>> {
        let n = self.docs.len();
        let mut lists: Vec<Vec<(f32, u32)>> = vec![Vec::new(); jobs.len()];
        let queue = std::sync::Mutex::new(jobs.into_iter());
        let work = |scratch: &mut Scratch| {
            let mut done = Vec::new();
            loop {
                let job = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                let Some((i, text, semantic)) = job else { return done };
                done.push((i, self.rank_text(text, semantic, scratch, ranking)));
            }
        };
        std::thread::scope(|scope| {
            let started: Vec<_> = (0..helpers)
                .filter_map(|_| {
                    let mut own = self.kept_scratch(n);
                    own.bm25 = bm25::Memo::new(true, words);
                    let work = &work;
                    std::thread::Builder::new()
                        .name("workbench-search".into())
                        .spawn_scoped(scope, move || {
                            let done = work(&mut own);
                            (own, done)
                        })
                        .ok()
                })
                .collect();
            for (i, list) in work(scratch) {
                lists[i] = list;
            }
            for helper in started {
                match helper.join() {
                    Ok((mut own, done)) => {
                        for (i, list) in done {
                            lists[i] = list;
                        }
                        debug_assert!(own.is_clear(), "a ranking left its buffers written");
                        own.bm25 = bm25::Memo::new(false, 0);
                        self.keep_scratch(own);
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        lists
    }

    /// One text's ranking, with its cosines: near ones bounded from above are made here, in
    /// the buffer kept for them ([`embed::Vectors::approx_many`]), by the thread that ranks it.
    fn rank_text(
        &self,
        text: &Text,
        semantic: Option<Semantic>,
        scratch: &mut Scratch,
        ranking: &Ranking,
    ) -> Vec<(f32, u32)> {
        let (lo, hi) = (ranking.lo, ranking.hi);
        match semantic {
            None => self.rank(text, None, scratch, ranking),
            Some(Semantic::Exact(values)) => {
                self.rank(text, Some(Cosines { values: Values::Exact(values), lo, hi }), scratch, ranking)
            }
            Some(Semantic::Near { vectors, query }) => {
                let approx = vectors.approx_many(&[query], std::mem::take(&mut scratch.uppers));
                let cosines = approx.as_ref().and_then(|a| vectors.bounds(a, 0)).map(|bounds| Cosines {
                    values: Values::Bounded { vectors, bounds, query },
                    lo,
                    hi,
                });
                let list = self.rank(text, cosines, scratch, ranking);
                if let Some(approx) = approx {
                    scratch.uppers = approx.into_buffer();
                }
                list
            }
        }
    }

    /// One text's ranking: (score, tool) best first, at most `limit`, down to [`WEAK_FLOOR`].
    fn rank(&self, text: &Text, cosines: Option<Cosines>, scratch: &mut Scratch, ranking: &Ranking) -> Vec<(f32, u32)> {
        let Ranking { runs, limit, fusion, foreign, .. } = *ranking;
        let trimmed = text.text;
        let parsed = &text.parsed;
        let exact = self.by_name.get(trimmed.to_ascii_lowercase().as_str()).copied();
        let Lists { mut touched, mut candidates, mut plain_only, mut order, mut extra } =
            std::mem::take(&mut scratch.lists);
        let Scratch { acc, best, anchored, semantic, plain, listed, bm25, .. } = scratch;
        let mut total = 0.0;
        for word in &parsed.words {
            total += word.weight;
            // A word of one form: each tool is in the form's postings once (one entry a tool
            // and term), so its best match is that entry's, added at once (the same products
            // and sums, in the same order, as through `best` below).
            if let [(id, discount)] = word.alts[..] {
                for &(d, strength) in &self.postings[id as usize] {
                    let v = strength * discount;
                    if v > 0.0 {
                        if acc[d as usize] == 0.0 {
                            candidates.push(d);
                        }
                        acc[d as usize] += word.weight * v;
                        if word.anchor {
                            anchored[d as usize] += word.weight * v;
                        }
                    }
                }
                continue;
            }
            for &(id, discount) in word.alts.iter() {
                for &(d, strength) in &self.postings[id as usize] {
                    let v = strength * discount;
                    let b = &mut best[d as usize];
                    if v > *b {
                        if *b == 0.0 {
                            touched.push(d);
                        }
                        *b = v;
                    }
                }
            }
            for &d in &touched {
                if acc[d as usize] == 0.0 {
                    candidates.push(d);
                }
                acc[d as usize] += word.weight * best[d as usize];
                if word.anchor {
                    anchored[d as usize] += word.weight * best[d as usize];
                }
                best[d as usize] = 0.0;
            }
            touched.clear();
        }
        // Long queries carry more context than intent: the share of words a tool matches means
        // more the longer the query is.
        let softening = if parsed.meaningful <= 3 {
            1.0
        } else {
            (1.0 - SOFT_SLOPE * (parsed.meaningful - 3) as f32).max(SOFT_MIN)
        };
        let mut matched: Map<u32, f32> = Map::default();
        for word in &parsed.words {
            for &(id, discount) in word.alts.iter() {
                let e = matched.entry(id).or_default();
                *e = e.max(discount);
            }
        }
        let phrase_hits = &parsed.phrase_hits;
        let acc = &*acc;
        let anchored = &*anchored;
        // A share's power, kept for the next tool with the same share (thousands of tools
        // match one common word alike): the same bits, without a `powf` a tool.
        let powers: [std::cell::Cell<(u32, f32)>; 64] = std::array::from_fn(|_| std::cell::Cell::new((u32::MAX, 0.0)));
        let softened = |share: f32| {
            let bits = share.to_bits();
            let slot = &powers[(bits.wrapping_mul(0x9E37_79B9) >> 26) as usize];
            match slot.get() {
                (key, power) if key == bits => power,
                _ => {
                    let power = share.powf(softening);
                    slot.set((bits, power));
                    power
                }
            }
        };
        let content_of = |d: u32| {
            let a = acc[d as usize];
            // 0 to any power is 0: most candidates of a large catalogue match no word at all.
            let content = if total > 0.0 && a != 0.0 { softened((a / total).min(1.0)) } else { 0.0 };
            let evidence = anchored[d as usize];
            if parsed.verbs_only {
                content
            } else if evidence == 0.0 {
                content * UNANCHORED
            } else {
                // One common word ("name", "list") is thin evidence, however well it matches.
                content * (evidence / MIN_EVIDENCE).min(1.0)
            }
        };
        // The tools that match a word, by the lexical tier or by BM25: their semantic part is
        // filled in below. A tool only the semantic tier sees is a candidate only when what it
        // could at best reach can pass the `limit`-th score (most of a large catalogue is
        // somewhat near any request, and cannot).
        for &d in &candidates {
            listed[d as usize] = true;
        }
        // The tools only BM25 finds: candidates as those only the semantic tier sees.
        if fusion.bm25 > 0.0 || fusion.bare_bm25 > 0.0 {
            self.bm25.score_with(&parsed.semantic_text(trimmed), plain, bm25, &mut touched);
            plain_only.extend(touched.drain(..).filter(|&d| !listed[d as usize]));
        }
        // The cosine mapped onto 0..1 (0: nothing, NaN: the tool has no vector).
        let n = self.docs.len();
        let cosines = cosines.map(|Cosines { values, lo, hi }| {
            // The multilingual cosines are read relative to the query's mean over the tools:
            // how near a request is to every tool varies with its language and script.
            let shift = match values {
                Values::Exact(values) if fusion.centre || foreign => {
                    let known = values.iter().copied().filter(|c| !c.is_nan());
                    known.clone().sum::<f32>() / known.count().max(1) as f32
                }
                _ => 0.0,
            };
            (values, move |c: f32| ((c - shift - lo) / (hi - lo)).clamp(0.0, 1.0), lo, hi)
        });
        // A candidate's reach is read with its cosine at its most; the exact one is taken when
        // it is scored (few are: scoring stops at the first reach below the `limit`-th score).
        let bounded = matches!(&cosines, Some((Values::Bounded { .. }, ..)));
        if let Some((values, mapped, ..)) = &cosines {
            for &d in &candidates {
                let s = mapped(values.upper(d as usize));
                if s > 0.0 {
                    semantic[d as usize] = s;
                }
            }
        }
        // Written once more below, for the tools only the semantic tier sees that may pass.
        let semantic = std::cell::Cell::from_mut(&mut semantic[..]).as_slice_of_cells();
        let plain = &*plain;
        let listed = &*listed;
        let fusion = if foreign {
            Fusion {
                blend: fusion.foreign_blend,
                bare_blend: fusion.foreign_blend,
                lexical_floor: fusion.foreign_floor,
                ..fusion
            }
        } else {
            fusion
        };
        let blend_of = |d: u32| if runs.is(d, BARE) { fusion.bare_blend } else { fusion.blend };
        let bm25_of = |d: u32| if runs.is(d, BARE) { fusion.bare_bm25 } else { fusion.bm25 };
        // Only implied products (no product named outright): tools outside the lexicon are not
        // judged by it.
        let implied_only = parsed.mentioned.values().all(|c| *c < 1.0);
        // The product, connection and place factors of a reach, read once per text by run and
        // by kind of tool (a large catalogue's thousands of candidates share a few hundred
        // runs and eight kinds): each run's factor when the query names products (NaN: none of
        // them is the run's, and the tool's kind decides), the factor of each kind, and the
        // place factor of a tool whose run has no product named. A factor of 1.0 stands where
        // a tool was not multiplied: the same bits, in the same order of products.
        let mentioned = !parsed.mentioned.is_empty();
        let run_factor: Vec<f32> = if mentioned {
            runs.names
                .iter()
                .map(|i| match parsed.mentioned.get(i) {
                    // The most the product bonus gives (to a score of 0).
                    Some(c) => c * (1.0 + PRODUCT_BONUS * (1.0 - 0.0)),
                    None => f32::NAN,
                })
                .collect()
        } else {
            Vec::new()
        };
        // Each run whose product the query only implies (a place factor still applies to it).
        let run_implied: Vec<bool> = if mentioned && parsed.local {
            runs.names.iter().map(|i| parsed.mentioned.get(i).is_some_and(|c| *c < 1.0)).collect()
        } else {
            Vec::new()
        };
        let kind_factor: [f32; 8] = std::array::from_fn(|k| {
            let k = k as u8;
            if k & AGNOSTIC != 0 {
                1.0
            } else if k & BARE != 0 && implied_only {
                IMPLIED
            } else {
                OTHER_PRODUCT
            }
        });
        let place_factor: [f32; 8] =
            std::array::from_fn(|k| if parsed.local && k as u8 & REMOTE != 0 { OTHER_PRODUCT } else { 1.0 });
        let verbs_factor = if parsed.verbs_only { VERBS_ONLY } else { 1.0 };
        let phrases = !phrase_hits.is_empty();
        // Score the candidates in order of what they could at best reach (their base, times the
        // product, connection and place factors they will get), and stop once that is below the
        // `limit`-th score found (thousands of tools share a common word). They are put in order
        // a chunk at a time, as far as scoring goes.
        let reach = |d: u32, content: f32| {
            let flags = runs.flags[d as usize];
            let run = runs.of_doc[d as usize] as usize;
            let (blend, b) =
                if flags & BARE != 0 { (fusion.bare_blend, fusion.bare_bm25) } else { (fusion.blend, fusion.bm25) };
            let base =
                (1.0 - b) * ((1.0 - blend) * content + blend * semantic[d as usize].get()) + b * plain[d as usize];
            let best = base.max(fusion.lexical_floor * content) * verbs_factor;
            let kind = (flags & 7) as usize;
            let best = if !mentioned {
                best * runs.unconnected[run] * place_factor[kind]
            } else {
                match run_factor[run] {
                    f if f.is_nan() => best * kind_factor[kind] * place_factor[kind],
                    // A product a word only implies ("folder" of Drive) leaves the place factor.
                    f if run_implied.get(run) == Some(&true) => best * f * place_factor[kind],
                    f => best * f,
                }
            };
            if phrases && phrase_hits.contains(&d) { best + PHRASE_BONUS } else { best }
        };
        let score_of = |d: u32| {
            if let (true, Some((values, mapped, ..))) = (bounded, &cosines) {
                let s = mapped(values.exact(d as usize));
                semantic[d as usize].set(if s > 0.0 { s } else { 0.0 });
            }
            let content = content_of(d);
            let doc = &self.docs[d as usize];
            let many = matches!(doc.verb.as_str(), "list" | "search" | "query");
            let one_item = if parsed.identifier && many || parsed.many && doc.verb == "get" { ONE_ITEM } else { 1.0 };
            let intent = one_item * (INTENT_FLOOR + (1.0 - INTENT_FLOOR) * self.intent(parsed, doc));
            let cover = COVER_FLOOR + (1.0 - COVER_FLOOR) * self.coverage(&matched, doc);
            let lexical = content * cover * intent;
            let blend = blend_of(d);
            let semantic_part = semantic[d as usize].get() * intent.powf(fusion.semantic_intent);
            let b = bm25_of(d);
            let mut score = ((1.0 - b) * ((1.0 - blend) * lexical + blend * semantic_part)
                + b * plain[d as usize] * intent)
                .max(fusion.lexical_floor * lexical);
            if parsed.verbs_only {
                score *= VERBS_ONLY;
            }
            if !parsed.mentioned.is_empty() {
                score *= match parsed.mentioned.get(doc.integration) {
                    // The query named this tool's product: that is evidence too.
                    Some(c) => *c * (1.0 + PRODUCT_BONUS * (1.0 - score)),
                    None if doc.agnostic => 1.0,
                    None if doc.bare && implied_only => IMPLIED,
                    None => OTHER_PRODUCT,
                };
            } else if !runs.connected[runs.of_doc[d as usize] as usize] {
                score *= fusion.unconnected;
            }
            if parsed.local && doc.remote && parsed.mentioned.get(doc.integration).is_none_or(|c| *c < 1.0) {
                // The user's machine is the product the query names: a service is another one
                // (one a word only implies, "folder" of Drive, too).
                score *= OTHER_PRODUCT;
            }
            if phrase_hits.contains(&d) {
                score += PHRASE_BONUS;
            }
            score
        };
        // A query that is exactly a tool's name finds that tool first.
        let mut best =
            Best { hits: exact.map(|e| (1.0, true, e)).into_iter().collect(), top: Vec::new(), floor: WEAK_FLOOR };
        // Scores a list of (reach, tool) best reach first, as far as a reach can pass the floor.
        // Keys of (reach, tool) ([`ordered`]): ascending is best reach first.
        // After the first chunk, the keys whose reach is below the floor found so far are left
        // out before the next chunk is chosen: the floor only rises, so scoring would stop
        // before any of them, and the rest (every one of them above any left out) is put in
        // the same order, a chunk at a time, as with them.
        let score_in_order = |order: &mut [u64], best: &mut Best| {
            let mut sorted = 0;
            let mut end = order.len();
            let mut i = 0;
            while i < end {
                if i == sorted {
                    if sorted > 0 {
                        let floor = best.floor;
                        let mut kept = sorted;
                        for j in sorted..end {
                            let key = order[j];
                            order[kept] = key;
                            let below = unordered(key).0.partial_cmp(&floor) == Some(std::cmp::Ordering::Less);
                            kept += usize::from(!below);
                        }
                        end = kept;
                        if i == end {
                            break;
                        }
                    }
                    let rest = &mut order[sorted..end];
                    let chunk = ORDER_CHUNK.max(sorted);
                    if rest.len() > chunk {
                        rest.select_nth_unstable(chunk);
                        rest[..chunk].sort_unstable();
                        sorted += chunk;
                    } else {
                        rest.sort_unstable();
                        sorted = end;
                    }
                }
                let (reach, d) = unordered(order[i]);
                i += 1;
                if Some(d) == exact {
                    continue;
                }
                if reach < best.floor {
                    break;
                }
                best.add(score_of(d), d, limit);
            }
        };
        order.extend(candidates.iter().map(|&d| ordered(reach(d, content_of(d)), d)));
        score_in_order(&mut order, &mut best);
        // A tool no word matches has content 0: its reach is its semantic part and its BM25
        // part, times at most the largest product or connection factor, plus the phrase bonus.
        // Those that can pass the floor found so far are scored as the others (a tool skipped
        // scores below `limit` tools found, whatever the order).
        let factor = if parsed.mentioned.is_empty() {
            fusion.unconnected.max(1.0)
        } else {
            parsed.mentioned.values().fold(1.0_f32, |m, c| m.max(c * (1.0 + PRODUCT_BONUS)))
        };
        let bonus = if phrase_hits.is_empty() { 0.0 } else { PHRASE_BONUS };
        // A margin of rounding: the bound is only a filter, each survivor's reach is exact.
        let most = |part: f32| part.max(0.0) * factor * 1.001;
        let most_semantic =
            most((fusion.blend * (1.0 - fusion.bm25)).max(fusion.bare_blend * (1.0 - fusion.bare_bm25)));
        let most_plain = most(fusion.bm25.max(fusion.bare_bm25));
        let floor = best.floor;
        let may_pass =
            |s: f32, p: f32| (s > 0.0 || p > 0.0) && s.max(0.0) * most_semantic + p * most_plain + bonus >= floor;
        let mut consider = |d: usize, s: f32| {
            if may_pass(s, plain[d]) {
                if s > 0.0 {
                    semantic[d].set(s);
                }
                candidates.push(d as u32);
                extra.push(ordered(reach(d as u32, content_of(d as u32)), d as u32));
            }
        };
        match &cosines {
            Some((values, mapped, lo, hi)) => {
                // A tool whose cosine at its most cannot pass is passed over (the mapping never
                // goes down as the cosine goes up). Bounded cosines are first compared with the
                // least one that can pass without BM25 (a little below, for rounding).
                let (least, plain_least) = match (values, most_semantic > 0.0 && hi > lo) {
                    (Values::Bounded { .. }, true) => {
                        let least = lo + (hi - lo) * ((floor - bonus) / most_semantic).max(0.0) - 1e-5;
                        // A tool BM25 finds can pass only if its cosine at its most (no lower
                        // than `lo`, where the mapping is 0) plus its BM25 part in units of
                        // cosine reaches `least` (a little below, for rounding).
                        (least, (*lo, (hi - lo) * most_plain / most_semantic, least - 1e-4))
                    }
                    _ => (f32::NEG_INFINITY, (0.0, 0.0, f32::NEG_INFINITY)),
                };
                let each = |d: usize| {
                    let upper = values.upper(d);
                    if (upper >= least || plain[d] > 0.0) && !listed[d] && may_pass(mapped(upper), plain[d]) {
                        consider(d, mapped(values.exact(d)));
                    }
                };
                match values {
                    // Only the tools that can pass so (a few of thousands), read eight at a time.
                    Values::Bounded { bounds, .. } => bounds.each_reaching(least, plain_least, plain, listed, each),
                    Values::Exact(_) => (0..n).for_each(each),
                }
            }
            None => plain_only.iter().for_each(|&d| consider(d as usize, 0.0)),
        }
        score_in_order(&mut extra, &mut best);
        let Best { mut hits, .. } = best;
        scratch.clear(candidates.iter().copied());
        for &d in &plain_only {
            scratch.plain[d as usize] = 0.0;
        }
        for list in [&mut touched, &mut candidates, &mut plain_only] {
            list.clear();
        }
        order.clear();
        extra.clear();
        scratch.lists = Lists { touched, candidates, plain_only, order, extra };
        let by_score = |a: &(f32, bool, u32), b: &(f32, bool, u32)| {
            b.1.cmp(&a.1)
                .then(b.0.total_cmp(&a.0))
                .then_with(|| self.docs[a.2 as usize].name.cmp(self.docs[b.2 as usize].name))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, by_score);
            hits.truncate(limit);
        }
        hits.sort_by(by_score);
        hits.into_iter().map(|(score, _, d)| (score, d)).collect()
    }
}

/// A key of (reach, tool) that sorts ascending as the reach descends in `f32::total_cmp`'s
/// order (a NaN first), a tool's number after: candidates are put in order by plain integer
/// comparisons. Which of two tools of equal reach is scored first changes no ranking: a tool
/// left unscored scores below `limit` others, whatever the order.
#[inline]
fn ordered(reach: f32, d: u32) -> u64 {
    let bits = reach.to_bits();
    // Ascending with the value: negative numbers' bits all turned, positive ones' sign set.
    let up = if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 };
    (u64::from(!up) << 32) | u64::from(d)
}

/// The (reach, tool) of an [`ordered`] key.
fn unordered(key: u64) -> (f32, u32) {
    let up = !((key >> 32) as u32);
    let bits = if up & 0x8000_0000 != 0 { up & 0x7FFF_FFFF } else { !up };
    (f32::from_bits(bits), key as u32)
}

#[cfg(test)]
mod tests;
