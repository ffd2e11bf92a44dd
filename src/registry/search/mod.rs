//! search_tools ranking, built for finding tools: in-process, nothing downloaded, scored 0..1.
//! Two tiers: the lexical one described here, and a semantic one ([`embed`]: a static token
//! table compiled in) whose cosine joins each tool's score as [`Fusion`] says.
//!
//! A tool is a document with weighted fields — its name, its integration's name and display
//! name, its integration's keywords, its own keywords, its description and its parameter names —
//! combined BM25F-style (weighted term frequency per field, length-normalised description,
//! saturation) into one match strength per term and tool, at most 1.
//!
//! A query is read as people write it: phrases become one token ("pull request" -> `pr`), verbs
//! are intents, not words to match ("open", "file", "raise" ask for a `create` tool, "close",
//! "resolve" for `update`, "show", "find" for `get`/`list`/`search`), the remaining words are
//! matched in any order, exactly, by stem, through a curated synonym and jargon table, or, when
//! the catalogue does not know the word, as a typo (one edit) or a prefix — each at a discount,
//! so exact matches stay ahead. Words the catalogue does not know at all (a city, a person, a
//! number) still count against every tool, a little when they look like arguments, more when
//! they are plain words, so that "order a pizza" finds nothing.
//!
//! Score = content × intent × product × connection (+ a small bonus for a tool's multi-word
//! keyword found verbatim), capped at 1:
//! * content: the share of the query's word weight (rarer words weigh more) the tool matches,
//!   softened for long queries, where more of the words are context;
//! * intent: 1 when the tool's verb is what the query's verb asks for, down to [`INTENT_FLOOR`];
//! * product: when the query names or implies a product (its name, "#channel", "inbox", "JQL",
//!   "ENG-123", ...), tools of other products are multiplied by [`OTHER_PRODUCT`];
//! * connection: when it names none, tools of integrations the user has not connected are
//!   multiplied by [`UNCONNECTED`], so connected ones win ties;
//! * place: a query that puts its request on the user's own machine ("the local file", "on my
//!   disk", "this computer") names the machine as its product: remote services' tools (the
//!   catalogue's, custom apps') count as another product's unless the query names them, and the
//!   words themselves are matched by neither tier.
//!
//! A tool's verb is the first word of its name after the integration's, the server's name
//! repeated by many MCP servers (`git` + `git_commit`) skipped and hyphens read as '_'; a verb
//! queries use of their own (`read`, `edit`) stands for the tool verb it asks for (`get`,
//! `update`). A query naming one item by number or key ("issue 4521", "PAY-3") prefers a tool
//! that gets one item to tools that list or search ([`ONE_ITEM`]).
//!
//! With the semantic tier, `max((1 - b) * lexical + b * semantic, floor * lexical)` replaces the
//! lexical score before the product and connection factors ([`Fusion`]).
//! A request not written in English ([`multilingual::is_foreign`]) is read through a glossary
//! into English words and ranked as English ([`glossary`]), that ranking scored together with
//! the one a second, multilingual table ([`multilingual`]) gives the request as written
//! ([`Fusion::gloss_table`]); when the glossary knows none of its words, the table's ranking
//! alone, with its own blend and floor.
//!
//! A query that is exactly a tool's name scores 1 and comes first. Results below [`MIN_SCORE`]
//! are not returned; those below [`RELEVANT_SCORE`] are weak guesses, marked as such, filling
//! the list up to its limit. A request of several steps is ranked whole and clause by clause
//! ([`clauses`]), the lists merged a rank at a time.

mod bm25;
mod direction;
mod embed;
mod foreign;
mod glossary;
mod hash;
mod heap;
mod index;
mod lexicon;
mod lines;
mod multilingual;
mod precomputed;
mod query;
mod rank;
mod store;
mod text;

pub use embed::tool_embeddings;
pub use rank::set_threads;
pub use store::VectorStore;

use hash::{Map, Set};

/// What the semantic tier embeds of a tool (for the evaluation's model experiments).
#[doc(hidden)]
pub use index::embedded_text;

use text::canonicalize;
#[cfg(test)]
use text::index_tokens;
pub use text::{stem, tokenize};

use super::Registry;

/// Results below this score are not returned at all (a word in common with nothing else to go on).
pub const MIN_SCORE: f64 = 0.02;
/// Results from here up are relevant. Below it, between [`MIN_SCORE`] and this, a result is a weak
/// guess (a long query that only partly matches, an unusual word), marked `weak`; weak guesses
/// fill the list up to its limit, after the relevant ones. Calibrated on the dev two thirds of the evaluation
/// (a table that did not see them): a first result scored 0.4 and up is the right tool 92% of
/// the time, one between 0.35 and 0.4 only 69% — no surer than a guess should claim.
pub const RELEVANT_SCORE: f64 = 0.4;
const WEAK_FLOOR: f32 = MIN_SCORE as f32;

/// Field weights. The name fields (the tool's own name, its integration's name) give a word's
/// strength outright; the others add up, the strongest first and the rest damped by
/// [`DAMPING`], to at most [`CAP_OTHER`]: a word the tool's name carries beats one its
/// description and keywords both mention.
const W_NAME: f32 = 1.0;
const W_PRODUCT: f32 = 0.9;
const W_KEYWORD: f32 = 0.8;
const W_DESCRIPTION: f32 = 0.5;
const W_PRODUCT_KEYWORD: f32 = 0.35;
const W_PARAM: f32 = 0.3;
/// Quoted examples in a description ('search: dentist', "#Work & p1") are syntax, not topic.
const W_EXAMPLE: f32 = 0.2;
const DAMPING: f32 = 0.3;
const CAP_OTHER: f32 = 0.95;
/// Description length normalisation (BM25's b).
const B_DESCRIPTION: f32 = 0.4;
/// The factor of a tool none of whose name words (after the verb) the query covers.
const COVER_FLOOR: f32 = 0.75;
/// The intent match of a tool whose keywords or description's first word carry the query's verb
/// although its name's verb is another ("convert" for time_get_current).
const INTENT_ALSO: f32 = 0.9;
/// Weight of the word an issue key or a #channel stands for.
const HINT_WEIGHT: f32 = 1.0;

/// Discounts of the ways a query word can match.
const STEM_ONLY: f32 = 0.95;
const SYNONYM: f32 = 0.85;
const TYPO: f32 = 0.8;
const PREFIX: f32 = 0.7;

/// Weights of query words the catalogue does not know: argument-like ones (numbers, names,
/// addresses) and plain words.
const UNKNOWN_ARG: f32 = 0.25;
const UNKNOWN_PLAIN: f32 = 1.5;

/// The intent factor of a tool whose verb the query does not ask for.
pub const INTENT_FLOOR: f32 = 0.6;
/// A verb starting a later clause counts this much (the first one is the intent) ...
const LATER_VERB: f32 = 0.85;
/// ... and a verb elsewhere ("mark as read", "issues assigned to me") this much.
const OFF_VERB: f32 = 0.6;
/// ... and a verb a request without one implies ("the title should say 2.0": update) this much.
const IMPLIED_VERB: f32 = 0.85;
/// The factor of a product a query implies ("inbox", a misspelt name) rather than names.
const IMPLIED: f32 = 0.9;
/// The factor of tools of other products when the query names one.
pub const OTHER_PRODUCT: f32 = 0.5;
/// A tool of the product the query names gets this share of what its score lacks to 1.
const PRODUCT_BONUS: f32 = 0.2;
/// The factor of tools of integrations not connected, when the query names no product.
pub const UNCONNECTED: f32 = 0.85;
/// The intent factor of a tool that lists or searches, when the query names one item by its
/// number or key; and of a tool that gets one item, when the query asks for all of a kind.
const ONE_ITEM: f32 = 0.9;
/// When a tool's multi-word keyword appears verbatim in the query.
const PHRASE_BONUS: f32 = 0.05;
/// Long queries: the content share is raised to a power that falls by this much per meaningful
/// word past three, down to [`SOFT_MIN`].
const SOFT_SLOPE: f32 = 0.1;
const SOFT_MIN: f32 = 0.5;
/// The factor of a tool that matches only verbs, dates or qualifiers of the query.
const UNANCHORED: f32 = 0.3;
/// The matched weight (about one specific word, matched well) below which a tool's content
/// is scaled down.
const MIN_EVIDENCE: f32 = 1.5;
/// The factor of results for a query made of verbs only ("create").
const VERBS_ONLY: f32 = 0.5;

/// How the semantic tier's cosine joins the lexical score: a tool's base is
/// `(1 - blend) * lexical + blend * semantic`, where `semantic` is the query's cosine with the
/// tool, mapped from `lo..hi` onto 0..1 (below `lo` it adds nothing); the intent, product and
/// connection factors then apply to the base as they do to the lexical score alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    pub blend: f32,
    /// The blend for tools with no curated words (custom apps, upstream servers' tools): their
    /// lexical score has no synonyms or jargon behind it, so their meaning weighs more.
    pub bare_blend: f32,
    pub lo: f32,
    pub hi: f32,
    /// Whether the cosine is taken relative to the query's mean cosine over all tools (what
    /// every tool shares with the query, "my", "please", says nothing about any one of them).
    pub centre: bool,
    /// The factor of tools of integrations not connected, when the query names no product: the
    /// semantic part says which kind of tool fits ("report a bug" -> an issue tracker), the
    /// user's connections say whose.
    pub unconnected: f32,
    /// How much of the intent factor (the query's verb against the tool's) the semantic part
    /// takes: it is multiplied by `intent ^ semantic_intent` (0: not at all, the embedding
    /// carries the verb's meaning itself; 1: as the lexical part is).
    pub semantic_intent: f32,
    /// The share of its lexical score a tool keeps however little the semantic tier sees in it:
    /// a second opinion may lower a plain word match ("who is ada lovelace"), not erase it.
    pub lexical_floor: f32,
    /// The share of a tool's base that BM25 over its name and description gives (its score over
    /// the best tool's), for the catalogue's tools and for tools with no curated words.
    pub bm25: f32,
    pub bare_bm25: f32,
    /// A request not written in English ([`multilingual::is_foreign`]) is ranked with the
    /// multilingual table's cosine in place of the English one: this blend for every tool, the
    /// cosine mapped from `foreign_lo..foreign_hi` onto 0..1, and this lexical floor.
    pub foreign_blend: f32,
    pub foreign_lo: f32,
    pub foreign_hi: f32,
    pub foreign_floor: f32,
    /// A request read through the glossary is scored `(1 - gloss_table)` by the ranking of its
    /// English words and `gloss_table` by the multilingual table's ranking of it as written
    /// (0: the glossary's ranking alone).
    pub gloss_table: f32,
}

impl Fusion {
    /// Lexical only, as before the semantic tier.
    pub const LEXICAL: Fusion = Fusion {
        blend: 0.0,
        bare_blend: 0.0,
        lo: 1.0,
        hi: 2.0,
        centre: false,
        unconnected: UNCONNECTED,
        semantic_intent: 1.0,
        lexical_floor: 0.0,
        bm25: 0.0,
        bare_bm25: 0.0,
        foreign_blend: 0.0,
        foreign_lo: 1.0,
        foreign_hi: 2.0,
        foreign_floor: 0.0,
        gloss_table: 0.0,
    };
}

impl Default for Fusion {
    /// Tuned on the dev two thirds of tests/it/data/search_dev.json, with a token table trained
    /// without them (scripts/train-embeddings.py, TRAIN=nodev) so that the dev queries judge it
    /// as unseen queries would (`SEARCH_TUNE=1`, tests/it/search_eval.rs).
    fn default() -> Fusion {
        // The catalogue's own tools: a blend of 0.3 to 0.4 scored higher on the dev two thirds,
        // but lets the semantic tier reorder near lexical ties that the per-integration
        // tests pin ("assign the ticket to someone else" -> jira_update_issue, "find trello card
        // about login" -> trello_search_cards); at 0.1 they hold.
        Fusion {
            blend: 0.1,
            bare_blend: 0.6,
            lo: 0.2,
            hi: 0.7,
            centre: false,
            unconnected: 0.7,
            semantic_intent: 0.0,
            lexical_floor: 0.6,
            // BM25 for the tools with no curated words: tuned on the dev two thirds of the
            // MCP-Bench set (tests/it/data/mcpbench); 0.2 to 0.5 are within a few points, 0.3 the
            // best on single-step top-1. The catalogue's own tools keep their curated tiers.
            bm25: 0.0,
            bare_bm25: 0.3,
            // Tuned on the dev translations (tests/it/data/mcpbench/multilingual_dev.json):
            // top-1 0.175 without the tier, 0.275 to 0.300 for blends 0.2 to 0.4, upper ends 0.3
            // to 0.6 and floors 0.5 to 0.8 (this setting is in the middle of the plateau).
            foreign_blend: 0.3,
            foreign_lo: 0.0,
            foreign_hi: 0.5,
            foreign_floor: 0.6,
            // Tuned on the dev translations: 0.708 alone, 0.733 to 0.742 from 0.3 to 0.5.
            gloss_table: 0.35,
        }
    }
}

/// One ranked hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub name: &'static str,
    pub integration: &'static str,
    pub description: &'static str,
    pub score: f64,
    /// A guess: scored below [`RELEVANT_SCORE`].
    pub weak: bool,
}

struct Doc {
    name: &'static str,
    integration: &'static str,
    description: &'static str,
    /// The word after the integration prefix: `create`, `list`, ...
    verb: String,
    /// Other words that say what the tool does: the first word of its description and of each
    /// keyword ("convert time", "close issue").
    intents: Vec<String>,
    /// The name's words after the verb (`list_workflow_runs` -> workflow, runs): term and stem.
    name_terms: Vec<(u32, Option<u32>)>,
    /// The tool takes an `integration` argument (disconnect, audit log): naming a product does
    /// not make it less relevant.
    agnostic: bool,
    /// The tool has no curated words (no keywords, no catalogue integration): a custom app's or
    /// an upstream server's. The lexicon's implied products ("folder" -> Drive) say nothing
    /// about it, and its meaning (semantic tier) weighs more.
    bare: bool,
    /// The tool acts on a remote service (a catalogue integration or a custom app's API), not on
    /// the user's machine.
    remote: bool,
}

/// The search index over a registry's tools.
pub struct SearchIndex {
    docs: Vec<Doc>,
    by_name: Map<&'static str, u32>,
    terms: Map<String, u32>,
    /// term id -> term.
    term_text: Vec<String>,
    /// term -> (doc, match strength 0..1).
    postings: Vec<Vec<(u32, f32)>>,
    idf: Vec<f32>,
    /// The strongest match of a term in any tool: a word only examples or parameter names carry
    /// weighs less than one a tool's name carries.
    term_max: Vec<f32>,
    /// Surface words, sorted, for prefix matches.
    sorted: Vec<(String, u32)>,
    /// Deletion key -> surface words (typo candidates).
    typo_keys: TypoKeys,
    /// A tool keyword of several words (canonical tokens joined by spaces) -> its tools; each
    /// such keyword's leading words -> no tools (where a query's run may still become one).
    phrases: Map<String, Vec<u32>>,
    /// Word (and its stem) -> the integrations it names.
    products: Map<String, Vec<&'static str>>,
    synonyms: Map<&'static str, &'static [&'static str]>,
    /// The same, by the stem of the word ("threads" -> thread's).
    synonyms_by_stem: Map<String, &'static [&'static str]>,
    verbs: Map<&'static str, lexicon::VerbMap>,
    /// The verbs of four bytes or more by their length, each with its place in `verbs`' order:
    /// what a misspelt verb is looked up among (one edit moves the length by one at most).
    verbs_by_len: Vec<Vec<(u32, &'static str)>>,
    dual: Set<&'static str>,
    stopwords: Set<&'static str>,
    /// Each tool's vector (semantic tier); empty when the model is not available.
    vectors: embed::Vectors,
    /// Each tool's vector in the multilingual table, made when the first request not in
    /// English arrives.
    foreign: std::sync::OnceLock<embed::Vectors>,
    bm25: bm25::Bm25,
    /// What ranking reads of every tool, laid out compactly (made on the first search).
    layout: std::sync::OnceLock<rank::Layout>,
    /// Buffers of the tool count, zeroed, kept from one search for the next, one set for each
    /// thread a search ranks on (a search that finds none kept, running beside another, makes
    /// its own).
    scratch: std::sync::Mutex<Vec<rank::Scratch>>,
}

/// The typo index: deletion keys and the surface words that have them, as two sorted columns
/// (a map of lists took three times the memory: a table entry and an allocation per key).
struct TypoKeys {
    keys: Vec<u64>,
    ids: Vec<u32>,
}

impl TypoKeys {
    /// From (key, word) pairs; a key's words keep the order they came in.
    fn new(mut pairs: Vec<(u64, u32)>) -> TypoKeys {
        pairs.sort_by_key(|&(key, _)| key);
        TypoKeys { keys: pairs.iter().map(|p| p.0).collect(), ids: pairs.iter().map(|p| p.1).collect() }
    }

    /// The words with deletion key `key`.
    fn get(&self, key: u64) -> &[u32] {
        let start = self.keys.partition_point(|&k| k < key);
        let end = start + self.keys[start..].partition_point(|&k| k == key);
        &self.ids[start..end]
    }
}

/// A query word ready to match: its alternatives (term, discount) and its weight.
#[derive(Clone)]
struct Word {
    /// (term, discount): shared by every place the request has the word (a clause repeats the
    /// request's words), never changed once made.
    alts: std::sync::Arc<[(u32, f32)]>,
    weight: f32,
    /// Whether matching it can make a tool relevant at all: verbs, dates and qualifiers
    /// ("approve", "tomorrow", "best") only add to a tool that matches something else.
    anchor: bool,
    /// Known as written, by stem or by a synonym (not only as a typo or a prefix).
    direct: bool,
}

struct Parsed {
    words: Vec<Word>,
    /// (verb map, factor, stem of the verb): what the query asks to do.
    verbs: Vec<(lexicon::VerbMap, f32, String)>,
    /// Products named or implied, with confidence.
    mentioned: Map<&'static str, f32>,
    /// The tools a keyword phrase of which is a run of 2 to 4 of the query's canonical tokens.
    phrase_hits: Set<u32>,
    verbs_only: bool,
    /// The query places what it asks for on the user's own machine ("the local file", "on my
    /// disk"): a service's tools fit it less, unless the query names that service.
    local: bool,
    /// The query names one item by its number or key: a tool that gets one item fits it better
    /// than one that lists or searches many.
    identifier: bool,
    /// The query asks for every item of a kind ("all my files", "every contact from Globex")
    /// and names none: a tool that lists or searches fits it better than one that gets one.
    many: bool,
    /// Words that carry meaning (for the long-query softening).
    meaningful: usize,
    /// The request's tokens that are words (not arguments taken as they are).
    plain: usize,
}

impl Parsed {
    /// What the semantic tier embeds of a query: the query without the words that place it on
    /// the user's machine. They say where, not what, and a tool's text repeating them ("read a
    /// local file on disk") must not make it look like the request.
    /// (The request itself, borrowed, when nothing places it: most requests.)
    fn semantic_text<'a>(&self, query: &'a str) -> std::borrow::Cow<'a, str> {
        if !self.local {
            return query.into();
        }
        let mut kept: Vec<&str> = Vec::new();
        for word in query.split_whitespace() {
            let bare = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            let phrase = kept.last().map(|prev| format!("{} {bare}", prev.to_lowercase()));
            if lexicon::LOCAL_WORDS.contains(&bare.as_str()) {
                continue;
            }
            if phrase.is_some_and(|p| lexicon::LOCAL_PHRASES.contains(&p.as_str())) {
                kept.pop();
                continue;
            }
            kept.push(word);
        }
        kept.join(" ").into()
    }
}

impl SearchIndex {
    /// How well a tool's verb answers the query's verbs, 0..1.
    fn intent(&self, parsed: &Parsed, doc: &Doc) -> f32 {
        let lookup = |map: &[(&str, f32)], other: f32| {
            map.iter().find(|(v, _)| *v == doc.verb || *v == "*").map(|(_, s)| *s).unwrap_or(other)
        };
        if parsed.verbs.is_empty() {
            return lookup(lexicon::READ_DEFAULT, lexicon::READ_DEFAULT_OTHER);
        }
        parsed
            .verbs
            .iter()
            .map(|(map, f, word)| {
                // The tool is named for this very action ("commit", "echo"): as sure as a verb map.
                let also = if doc.intents.first() == Some(word) {
                    1.0
                } else if doc.intents.contains(word) {
                    INTENT_ALSO
                } else {
                    0.0
                };
                f * lookup(map, lexicon::OTHER_VERB).max(also)
            })
            .fold(0.0, f32::max)
    }

    /// The share of a tool's name words (after its verb) the query covers, 0..1.
    fn coverage(&self, matched: &Map<u32, f32>, doc: &Doc) -> f32 {
        if doc.name_terms.is_empty() {
            return 1.0;
        }
        let get = |id: &u32| matched.get(id).copied().unwrap_or(0.0);
        let sum: f32 =
            doc.name_terms.iter().map(|(t, s)| get(t).max(s.as_ref().map_or(0.0, |s| get(s) * STEM_ONLY))).sum();
        sum / doc.name_terms.len() as f32
    }

    /// Ranks tools for `query`; `connected` tells which integrations the user has connected.
    pub fn search(&self, query: &str, limit: usize, connected: &dyn Fn(&str) -> bool) -> Vec<Hit> {
        self.search_with(query, limit, connected, Fusion::default())
    }

    /// [`SearchIndex::search`] with the fusion's parameters given (for tuning and comparison).
    /// A request of several steps is ranked clause by clause as well as whole, and the lists
    /// merged a rank at a time, so that every step's tools get places ([`clauses`]).
    #[doc(hidden)]
    pub fn search_with(&self, query: &str, limit: usize, connected: &dyn Fn(&str) -> bool, fusion: Fusion) -> Vec<Hit> {
        let trimmed = query.trim();
        if trimmed.is_empty() || limit == 0 {
            return Vec::new();
        }
        let english_word = |w: &str| self.knows(w) || embed::model().is_some_and(|m| m.knows_word(w));
        let foreign = fusion.foreign_blend > 0.0 && multilingual::is_foreign(trimmed, &english_word);
        // A request not in English is read through the glossary as English words, when it
        // gives any, and ranked as English beside the multilingual table's ranking of it
        // ([`glossary`], [`foreign`]); else by the multilingual table alone.
        let glossed = foreign.then(|| glossary::gloss(trimmed, &|w| self.products.contains_key(w))).flatten();
        if let (Some(g), true) = (&glossed, cfg!(debug_assertions) && std::env::var_os("SEARCH_GLOSS_PRINT").is_some())
        {
            eprintln!("gloss {trimmed:?} -> {g:?}");
        }
        let mut ranked = match &glossed {
            Some(english) => self.ranked_glossed(trimmed, english, limit, connected, fusion),
            None => self.ranked(trimmed, limit, connected, fusion, foreign),
        };
        // A conversion's direction orders what its words cannot ([`direction`]).
        if let Some(target) = direction::target(glossed.as_deref().unwrap_or(trimmed)) {
            let mut moved = false;
            for (score, d) in ranked.iter_mut() {
                let agrees = direction::agreement(&target, self.docs[*d as usize].description);
                if agrees != 0 {
                    *score = (*score + f32::from(agrees) * direction::DIRECTION).clamp(0.0, 1.0);
                    moved = true;
                }
            }
            if moved {
                // (A stable sort: tools the direction leaves alone keep their order.)
                ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
            }
        }
        ranked.into_iter().map(|(s, d)| self.hit(s, d)).collect()
    }

    /// Every tool's vector in the multilingual table (made on first use).
    fn foreign_vectors(&self, table: &multilingual::Table) -> &embed::Vectors {
        self.foreign.get_or_init(|| {
            let mut vectors = embed::Vectors::with_capacity(table.dim(), self.docs.len());
            for doc in &self.docs {
                let v = table.embed(&index::foreign_text(doc.name, doc.integration, doc.description));
                vectors.push(v.map(|v| embed::Quantized::new(&v)).as_ref());
            }
            vectors
        })
    }

    fn hit(&self, score: f32, d: u32) -> Hit {
        let doc = &self.docs[d as usize];
        let score = (f64::from(score.min(1.0)) * 1000.0).round().max(1.0) / 1000.0;
        Hit {
            name: doc.name,
            integration: doc.integration,
            description: doc.description,
            score,
            weak: score < RELEVANT_SCORE,
        }
    }
}

/// Verbs that start a step besides the lexicon's (which knows the catalogue's actions).
const STEP_VERBS: &[&str] = &[
    "plot",
    "draw",
    "save",
    "export",
    "upload",
    "download",
    "convert",
    "calculate",
    "compute",
    "summarize",
    "summarise",
    "translate",
    "compare",
    "share",
    "email",
    "notify",
    "print",
    "render",
    "analyze",
    "analyse",
    "check",
    "book",
    "make",
    "build",
    "deploy",
    "extract",
    "generate",
    "visualize",
    "visualise",
    "store",
    "tell",
    "give",
    "identify",
    "determine",
    "estimate",
    "pick",
    "choose",
    "filter",
    "sort",
    "rank",
    "count",
    "merge",
    "combine",
];

fn starts_step(word: &str) -> bool {
    // The lexicon's verbs and these, as one set (made on first use).
    static STEPS: std::sync::OnceLock<Set<&'static str>> = std::sync::OnceLock::new();
    STEPS
        .get_or_init(|| {
            lexicon::VERBS
                .iter()
                .flat_map(|(words, _)| words.iter().copied())
                .chain(STEP_VERBS.iter().copied())
                .collect()
        })
        .contains(word)
}

/// Most clauses one request is ranked by (a pasted document must not cost a search per line).
const MAX_CLAUSES: usize = 8;

/// The steps of a request: its sentences, bullet points and the parts of a sentence that start
/// with a verb after ", ", "then", "and" ("read the sales sheet, plot it as a bar chart and save
/// it" -> three). One clause (a plain request) when there are no such parts.
pub fn clauses(query: &str) -> Vec<String> {
    clauses_with_rest(query).0
}

/// [`clauses`], and what of the request they leave out for their number ([`MAX_CLAUSES`]): the
/// clauses past it and the text after them, joined (empty when every step is a clause).
pub(super) fn clauses_with_rest(query: &str) -> (Vec<String>, String) {
    let mut out: Vec<String> = Vec::new();
    let mut rest = String::new();
    let mut start = 0;
    let mut chars = query.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if out.len() >= MAX_CLAUSES {
            push_rest(&mut rest, &query[start..]);
            return (out, rest);
        }
        let next = chars.peek().map(|&(_, n)| n);
        let current = &query[start..i];
        let ends = match c {
            '\n' | ';' | '•' | '?' | '!' => true,
            // A full stop or colon before a space ends a sentence; "e.g.", "3.5", "p.V600E" do not.
            '.' | ':' => {
                next.is_none_or(char::is_whitespace)
                    && !current.ends_with(|p: char| p.is_ascii_uppercase() && current.len() < 3)
            }
            _ => false,
        };
        if ends {
            sentence_clauses(current, &mut out, &mut rest);
            start = i + c.len_utf8();
        }
    }
    sentence_clauses(&query[start..], &mut out, &mut rest);
    (out, rest)
}

/// `part` added to the text the clauses leave out, after a full stop.
fn push_rest(rest: &mut String, part: &str) {
    let part = part.trim();
    if !part.is_empty() {
        if !rest.is_empty() {
            rest.push_str(". ");
        }
        rest.push_str(part);
    }
}

/// The clauses of one sentence ([`clauses`]) added to `out`, those of two words or more, while
/// it has fewer than [`MAX_CLAUSES`]; those past it to `rest`.
fn sentence_clauses(sentence: &str, out: &mut Vec<String>, rest: &mut String) {
    // A clause is kept when it has two words with a letter or digit: counted as its words are
    // taken (the commas trimmed off its end take no letter away), and only a kept clause is
    // joined into a string.
    let mut keep = |part: &[&str], words: usize, trim_commas: bool| {
        if words >= 2 {
            let mut clause = part.join(" ");
            if trim_commas {
                clause.truncate(clause.trim_end_matches(',').len());
            }
            if out.len() < MAX_CLAUSES {
                out.push(clause);
            } else {
                push_rest(rest, &clause);
            }
        }
    };
    fn trim(w: &str) -> &str {
        w.trim_matches(|c: char| !c.is_alphanumeric())
    }
    let bare = |w: &str| trim(w).to_lowercase();
    // (Bytes: ',' is ASCII, and no other character's last byte is.)
    let comma = |w: &str| w.as_bytes().last() == Some(&b',');
    let mut part: Vec<&str> = Vec::new();
    let mut words_in_part = 0;
    let words: Vec<&str> = sentence.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        // ("then", "and" and "afterwards" are what no other word lower-cases to; their lengths
        // tell most words apart before their letters are compared.)
        let core = trim(word);
        let joiner = matches!(core.len(), 3 | 4 | 10)
            && ["then", "and", "afterwards"].iter().any(|j| core.eq_ignore_ascii_case(j))
            && !comma(word);
        let next_verb = || {
            words.get(i + 1).is_some_and(|w| {
                let b = bare(w);
                starts_step(&b) || b == "then"
            })
        };
        let joins_step = joiner && next_verb();
        let after_comma = i > 0 && comma(words[i - 1]);
        let starts = (after_comma && starts_step(&core.to_lowercase())) || joins_step;
        if starts && part.len() >= 2 {
            keep(&part, words_in_part, true);
            part.clear();
            words_in_part = 0;
        }
        if !joins_step {
            part.push(word);
            // (A word's core is empty exactly when it has no letter or digit.)
            words_in_part += usize::from(!core.is_empty());
        }
    }
    if !part.is_empty() {
        keep(&part, words_in_part, false);
    }
}

/// A keyword's canonical tokens, as a query would read them.
fn query_tokens(text: &str) -> Vec<String> {
    let tokens: Vec<(String, ())> = tokenize(text).into_iter().map(|t| (t, ())).collect();
    canonicalize(tokens, false).into_iter().map(|(t, _)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_common_forms_alike() {
        for (a, b) in [
            ("issues", "issue"),
            ("stories", "story"),
            ("listing", "list"),
            ("created", "create"),
            ("creating", "create"),
            ("replies", "reply"),
            ("merged", "merge"),
            ("running", "run"),
            ("planned", "plan"),
            ("boxes", "box"),
            ("added", "add"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_eq!(stem("gas"), "gas");
        assert_eq!(stem("status"), "status");
        assert_ne!(stem("bill"), stem("bil"));
    }

    #[test]
    fn tokenizes_channels_and_punctuation() {
        assert_eq!(tokenize("Post to #general, please!"), vec!["post", "to", "general", "please"]);
        // Chinese and Japanese runs part from the Latin names written into them.
        assert_eq!(tokenize("jira看板上的冲刺"), vec!["jira", "看板上的冲刺"]);
        assert_eq!(tokenize("notionページのステータス"), vec!["notion", "ページのステータス"]);
        assert_eq!(tokenize("café über"), vec!["café", "über"]);
    }

    #[test]
    fn requests_split_into_their_steps() {
        assert_eq!(
            clauses("read the sales sheet, plot it as a bar chart and save it"),
            vec!["read the sales sheet", "plot it as a bar chart", "save it"]
        );
        assert_eq!(clauses("list open pull requests"), vec!["list open pull requests"]);
        assert_eq!(clauses("find the issue. Then close it; notify the team").len(), 3);
        // Abbreviations and decimals do not end a sentence.
        assert_eq!(clauses("convert 3.5 km to miles").len(), 1);
        // A hostile request of many lines costs at most MAX_CLAUSES rankings.
        assert_eq!(clauses(&"search the web\n".repeat(1000)).len(), MAX_CLAUSES);
        // What the first eight leave out is kept apart, for the request's whole reading.
        assert_eq!(clauses_with_rest("read the sales sheet, plot it as a bar chart and save it").1, "");
        let many: String = (1..=10).map(|i| format!("search the web for item {i}; ")).collect();
        let (parts, rest) = clauses_with_rest(&many);
        assert_eq!(parts.len(), MAX_CLAUSES);
        assert_eq!(rest, "search the web for item 9; search the web for item 10;");
        let (parts, rest) = clauses_with_rest(
            "find a, b, update c, d, fix e, f, close g, h, tag i, j, ping k, l, list m, n, show o, p, send q, r",
        );
        assert_eq!(parts.len(), MAX_CLAUSES, "{parts:?}");
        assert_eq!(rest, "send q, r");
        // Clauses of one word are left out before the first eight are taken.
        let mixed: String = (0..12).map(|i| format!("ok. search the web for item {i}. ")).collect();
        let read = clauses(&mixed);
        assert_eq!(read.len(), MAX_CLAUSES);
        assert_eq!(read[0], "search the web for item 0");
        assert_eq!(read[MAX_CLAUSES - 1], format!("search the web for item {}", MAX_CLAUSES - 1));
    }

    #[test]
    fn phrases_and_compounds_become_one_token() {
        assert_eq!(query_tokens("open a pull request"), vec!["open", "a", "pr"]);
        assert!(index_tokens("who is on-call").contains(&"oncall".to_string()));
        assert!(index_tokens("CI/CD pipelines").contains(&"cicd".to_string()));
    }

    #[test]
    fn deletion_hashes_meet_within_one_edit() {
        let share = |a: &str, b: &str| hash::deletion_hashes(a).iter().any(|k| hash::deletion_hashes(b).contains(k));
        assert!(share("calender", "calendar"));
        assert!(share("jria", "jira"));
        assert!(share("pul", "pull"));
        assert!(!share("jira", "jazz"));
    }
}
