//! search_tools ranking, built for finding tools: in-process, no model, scored 0..1.
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
//!   multiplied by [`UNCONNECTED`], so connected ones win ties.
//!
//! A query that is exactly a tool's name scores 1 and comes first. Results below [`MIN_SCORE`]
//! are not returned.

mod lexicon;
mod text;

use std::collections::{HashMap, HashSet};

pub use text::{stem, tokenize};
use text::{canonicalize, deletion_keys, index_tokens, is_issue_key, joined_by_dash_or_slash};

use super::Registry;

/// Results below this score are not returned: below it, matches are incidental words.
pub const MIN_SCORE: f64 = 0.3;

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
/// The factor of a product a query implies ("inbox", a misspelt name) rather than names.
const IMPLIED: f32 = 0.9;
/// The factor of tools of other products when the query names one.
pub const OTHER_PRODUCT: f32 = 0.5;
/// The factor of tools of integrations not connected, when the query names no product.
pub const UNCONNECTED: f32 = 0.85;
/// When a tool's multi-word keyword appears verbatim in the query.
const PHRASE_BONUS: f32 = 0.05;
/// Long queries: the content share is raised to a power that falls by this much per meaningful
/// word past three, down to [`SOFT_MIN`].
const SOFT_SLOPE: f32 = 0.1;
const SOFT_MIN: f32 = 0.5;
/// The factor of results for a query made of verbs only ("create").
const VERBS_ONLY: f32 = 0.5;

/// One ranked hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub name: &'static str,
    pub integration: &'static str,
    pub description: &'static str,
    pub score: f64,
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
    /// The tool's multi-word keywords, canonical tokens joined by spaces.
    phrases: Vec<String>,
}

/// The search index over a registry's tools.
pub struct SearchIndex {
    docs: Vec<Doc>,
    by_name: HashMap<&'static str, u32>,
    terms: HashMap<String, u32>,
    /// term id -> term.
    term_text: Vec<String>,
    /// term -> (doc, match strength 0..1).
    postings: Vec<Vec<(u32, f32)>>,
    idf: Vec<f32>,
    /// Surface words, sorted, for prefix matches.
    sorted: Vec<(String, u32)>,
    /// Deletion key -> surface words (typo candidates).
    typo_keys: HashMap<String, Vec<u32>>,
    /// Word (and its stem) -> the integrations it names.
    products: HashMap<String, Vec<&'static str>>,
    synonyms: HashMap<&'static str, &'static [&'static str]>,
    verbs: HashMap<&'static str, &'static [(&'static str, f32)]>,
    dual: HashSet<&'static str>,
    stopwords: HashSet<&'static str>,
}

/// A query word ready to match: its alternatives (term, discount) and its weight.
struct Word {
    alts: Vec<(u32, f32)>,
    weight: f32,
}

struct Parsed {
    words: Vec<Word>,
    /// (verb map, factor, stem of the verb): what the query asks to do.
    verbs: Vec<(&'static [(&'static str, f32)], f32, String)>,
    /// Products named or implied, with confidence.
    mentioned: HashMap<&'static str, f32>,
    /// Canonical query n-grams (2..=4 tokens), for keyword phrases.
    ngrams: HashSet<String>,
    verbs_only: bool,
    /// Words that carry meaning (for the long-query softening).
    meaningful: usize,
}

/// One token of the query, before matching.
#[derive(Clone)]
struct Token {
    /// An argument (a number, a name, an address): weighs little when unknown.
    arg: bool,
    /// Not to be matched at all (an email address, a path, a URL).
    opaque: bool,
    /// Follows a clause break (",", ";", ...): a verb may start here.
    brk: bool,
}

impl SearchIndex {
    pub fn build(registry: &Registry) -> SearchIndex {
        let tools = registry.tools();
        let descriptions: Vec<Vec<String>> = tools.iter().map(|t| index_tokens(t.description)).collect();
        let avg_description =
            (descriptions.iter().map(Vec::len).sum::<usize>() as f32 / descriptions.len().max(1) as f32).max(1.0);
        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut surface: HashSet<u32> = HashSet::new();
        let mut docs = Vec::with_capacity(tools.len());
        for (d, tool) in tools.iter().enumerate() {
            // term -> (best name-field weight, best other-field weight, sum of other weights).
            let mut tf: HashMap<String, (f32, f32, f32)> = HashMap::new();
            let mut seen: HashSet<String> = HashSet::new();
            let mut add = |tokens: &[String], weight: f32, name_field: bool, seen: &mut HashSet<String>| {
                for t in tokens {
                    seen.insert(t.clone());
                    let s = stem(t);
                    let forms = if s == *t { vec![(t.clone(), weight)] } else { vec![(t.clone(), weight), (s, weight * STEM_ONLY)] };
                    for (form, w) in forms {
                        let e = tf.entry(form).or_default();
                        if name_field {
                            e.0 = e.0.max(w);
                        } else {
                            e.1 = e.1.max(w);
                            e.2 += w;
                        }
                    }
                }
            };
            let local = tool.name.strip_prefix(tool.integration).and_then(|n| n.strip_prefix('_')).unwrap_or(tool.name);
            let name_tokens = index_tokens(&local.replace('_', " "));
            add(&name_tokens, W_NAME, true, &mut seen);
            add(&index_tokens(&tool.integration.replace('_', " ")), W_PRODUCT, true, &mut seen);
            add(&[tool.integration.replace('_', "")], W_PRODUCT, true, &mut seen);
            if let Some(integration) = tool.plugin() {
                add(&index_tokens(integration.display_name), W_PRODUCT, true, &mut seen);
                for kw in integration.keywords {
                    add(&index_tokens(kw), W_PRODUCT_KEYWORD, false, &mut seen);
                }
            }
            let mut intents: Vec<String> = name_tokens.first().map(|t| stem(t)).into_iter().collect();
            for kw in tool.keywords {
                let tokens = index_tokens(kw);
                if tokens.len() >= 2 && lexicon::is_verb(&tokens[0]) {
                    intents.push(stem(&tokens[0]));
                }
                add(&tokens, W_KEYWORD, false, &mut seen);
            }
            intents.extend(descriptions[d].iter().take(1).filter(|t| lexicon::is_verb(t)).map(|t| stem(t)));
            let norm = 1.0 - B_DESCRIPTION + B_DESCRIPTION * descriptions[d].len() as f32 / avg_description;
            add(&descriptions[d], W_DESCRIPTION / norm, false, &mut seen);
            let mut agnostic = false;
            if let Some(props) = tool.schema().get("properties").and_then(|p| p.as_object()) {
                for name in props.keys() {
                    agnostic |= name == "integration";
                    add(&index_tokens(&name.replace('_', " ")), W_PARAM, false, &mut seen);
                }
            }
            for (term, (name_w, best, sum)) in tf {
                let other = (best + DAMPING * (sum - best)).min(CAP_OTHER);
                let id = intern(&mut terms, &mut postings, &term);
                if seen.contains(&term) {
                    surface.insert(id);
                }
                postings[id as usize].push((d as u32, name_w.max(other)));
            }
            let name_terms = name_tokens
                .iter()
                .skip(1)
                .map(|t| {
                    let s = stem(t);
                    let stem_id = (s != *t).then(|| intern(&mut terms, &mut postings, &s));
                    (intern(&mut terms, &mut postings, t), stem_id)
                })
                .collect();
            let phrases = tool
                .keywords
                .iter()
                .map(|k| query_tokens(k))
                .filter(|t| t.len() >= 2)
                .map(|t| t.join(" "))
                .collect();
            docs.push(Doc {
                name: tool.name,
                integration: tool.integration,
                description: tool.description,
                verb: name_tokens.first().cloned().unwrap_or_default(),
                intents,
                name_terms,
                agnostic,
                phrases,
            });
        }
        let n = docs.len().max(1) as f32;
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut sorted: Vec<(String, u32)> =
            terms.iter().filter(|(_, id)| surface.contains(id)).map(|(t, &id)| (t.clone(), id)).collect();
        sorted.sort();
        let mut typo_keys: HashMap<String, Vec<u32>> = HashMap::new();
        for (t, id) in &sorted {
            if t.chars().count() >= 3 && t.chars().all(char::is_alphabetic) {
                for key in deletion_keys(t) {
                    typo_keys.entry(key).or_default().push(*id);
                }
            }
        }
        let products = Self::products(registry, &docs, &terms, &postings);
        let mut term_text = vec![String::new(); terms.len()];
        for (t, &id) in &terms {
            term_text[id as usize] = t.clone();
        }
        let mut index = SearchIndex {
            docs,
            by_name: HashMap::new(),
            terms,
            term_text,
            postings,
            idf,
            sorted,
            typo_keys,
            products,
            synonyms: lexicon::SYNONYMS.iter().copied().collect(),
            verbs: HashMap::new(),
            dual: lexicon::DUAL.iter().copied().collect(),
            stopwords: lexicon::STOPWORDS.iter().copied().collect(),
        };
        index.by_name = index.docs.iter().enumerate().map(|(i, d)| (d.name, i as u32)).collect();
        for (words, map) in lexicon::VERBS {
            for w in *words {
                index.verbs.insert(w, map);
            }
        }
        index
    }

    /// Words that name a product: its name, display name and single-word keywords when they are
    /// distinctive (used by at most one other integration), plus the curated product words.
    fn products(
        registry: &Registry,
        docs: &[Doc],
        terms: &HashMap<String, u32>,
        postings: &[Vec<(u32, f32)>],
    ) -> HashMap<String, Vec<&'static str>> {
        let mut candidates: Vec<(String, &'static str, bool)> = Vec::new();
        for integration in registry.integrations() {
            let own = integration.name.replace('_', "");
            candidates.push((own, integration.name, true));
            candidates.extend(tokenize(integration.name).into_iter().map(|w| (w, integration.name, false)));
            candidates.extend(index_tokens(integration.display_name).into_iter().map(|w| (w, integration.name, false)));
            for kw in integration.keywords {
                let tokens = query_tokens(kw);
                if tokens.len() == 1 {
                    candidates.push((tokens[0].clone(), integration.name, false));
                }
            }
        }
        let namespaces: HashSet<&'static str> =
            docs.iter().filter(|d| registry.integration(d.integration).is_none()).map(|d| d.integration).collect();
        for ns in namespaces {
            candidates.push((ns.to_string(), ns, false));
        }
        let all: HashSet<&'static str> = docs.iter().map(|d| d.integration).collect();
        for (word, product) in lexicon::PRODUCT_WORDS {
            if let Some(p) = all.get(product) {
                candidates.push((word.to_string(), p, true));
            }
        }
        let mut products: HashMap<String, Vec<&'static str>> = HashMap::new();
        for (word, product, forced) in candidates {
            let distinctive = forced
                || terms.get(&word).is_none_or(|&id| {
                    let others: HashSet<&str> = postings[id as usize]
                        .iter()
                        .map(|&(d, _)| docs[d as usize].integration)
                        .filter(|i| *i != product)
                        .collect();
                    others.len() < 2
                });
            if distinctive {
                let variant = match word.strip_suffix('s') {
                    Some(singular) if singular.len() >= 4 => singular.to_string(),
                    Some(_) => word.clone(),
                    None => format!("{word}s"),
                };
                for key in [variant, word] {
                    let entry = products.entry(key).or_default();
                    if !entry.contains(&product) {
                        entry.push(product);
                    }
                }
            }
        }
        products
    }

    fn idf(&self, id: u32) -> f32 {
        self.idf[id as usize]
    }

    fn mention(mentioned: &mut HashMap<&'static str, f32>, products: &[&'static str], confidence: f32) {
        for p in products {
            let e = mentioned.entry(p).or_insert(confidence);
            *e = e.max(confidence);
        }
    }

    /// The integration called `name`, when this catalogue has it.
    fn product(&self, name: &str) -> Option<&'static str> {
        self.docs.iter().map(|d| d.integration).find(|i| *i == name)
    }

    /// Reads a query into weighted words, verbs and product mentions.
    fn parse(&self, query: &str) -> Parsed {
        let mut mentioned: HashMap<&'static str, f32> = HashMap::new();
        let mut tokens: Vec<(String, Token)> = Vec::new();
        // What issue keys and #channels stand for: a product (and an issue).
        let mut hints: Vec<(&'static str, f32)> = Vec::new();
        let mut issue_key = false;
        let mut brk = false;
        for (i, raw) in query.split_whitespace().enumerate() {
            let breaks = raw.ends_with([',', ';', ':', '.', '!', '?', ')']);
            let raw = raw.trim_matches(|c: char| !(c.is_alphanumeric() || "#@$".contains(c)));
            let brk = std::mem::replace(&mut brk, breaks) && !raw.is_empty();
            if raw.is_empty() {
                continue;
            }
            if is_issue_key(raw) {
                // An issue key is an argument, but says which tracker: Linear's shape, Jira's too.
                issue_key = true;
                for (p, c) in [("linear", 1.0), ("jira", 0.97)] {
                    if let Some(p) = self.product(p) {
                        Self::mention(&mut mentioned, &[p], c);
                        hints.push((p, c));
                    }
                }
                continue;
            }
            if let Some(channel) = raw.strip_prefix('#')
                && channel.chars().next().is_some_and(char::is_alphabetic)
                && channel.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            {
                if let Some(p) = self.product("slack") {
                    Self::mention(&mut mentioned, &[p], 1.0);
                    hints.push((p, 1.0));
                }
                continue;
            }
            let opaque = raw.starts_with('@')
                || raw.contains('@')
                || raw.contains("://")
                || raw.char_indices().any(|(j, c)| {
                    c == '.' && j > 0 && raw[j + 1..].chars().next().is_some_and(char::is_alphanumeric)
                });
            let parts = tokenize(raw);
            if opaque || parts.is_empty() {
                tokens.push((raw.to_lowercase(), Token { arg: true, opaque: true, brk }));
                continue;
            }
            let capitalised = i > 0 && raw.chars().next().is_some_and(char::is_uppercase);
            if parts.len() > 1 && (raw.contains('/') || joined_by_dash_or_slash(raw)) {
                let joined = parts.concat();
                if self.terms.contains_key(&joined) || lexicon::PHRASES.iter().any(|(_, c)| *c == joined) {
                    tokens.push((joined, Token { arg: false, opaque: false, brk }));
                } else if joined_by_dash_or_slash(raw) && parts.iter().all(|p| self.knows(p)) {
                    tokens.extend(parts.into_iter().map(|p| (p, Token { arg: false, opaque: false, brk })));
                } else {
                    tokens.push((raw.to_lowercase(), Token { arg: true, opaque: true, brk }));
                }
                continue;
            }
            for p in parts {
                let arg = capitalised || p.chars().any(|c| c.is_ascii_digit()) || raw.starts_with('$');
                tokens.push((p, Token { arg, opaque: false, brk }));
            }
        }
        let tokens = canonicalize(&tokens, false);
        let mut ngrams = HashSet::new();
        let plain: Vec<&str> = tokens.iter().filter(|(_, t)| !t.opaque).map(|(w, _)| w.as_str()).collect();
        for n in 2..=4 {
            for w in plain.windows(n) {
                ngrams.insert(w.join(" "));
            }
        }
        // Where a verb may stand: a clause's first word after subjects and modals ("I need to",
        // "could you", "please") or after "to", "so", "and", "then". Not after "my", "the":
        // "my open issues", "our deploy pipeline" are things.
        let mut verb_position = vec![false; tokens.len()];
        // Unknown words inside "with ...", "for ...", "in ..." are names, places, titles.
        let mut argument = vec![false; tokens.len()];
        let mut at_start = true;
        let mut in_phrase = false;
        let mut naming = 0;
        for (i, (w, t)) in tokens.iter().enumerate() {
            if t.brk {
                at_start = true;
                in_phrase = false;
                naming = 0;
            }
            if at_start {
                if lexicon::SKIPPABLE.contains(&w.as_str()) {
                    continue;
                }
                verb_position[i] = true;
                at_start = false;
                in_phrase = false;
                continue;
            }
            if in_phrase && w == "and" {
                // "with alice and bob": still the same phrase.
                continue;
            }
            if lexicon::CLAUSE_MARKERS.contains(&w.as_str()) {
                at_start = true;
            }
            if lexicon::NAMING.contains(&w.as_str()) {
                naming = 3;
                continue;
            }
            if naming > 0 && !self.stopwords.contains(w.as_str()) {
                // "a page called roadmap": a name, whatever the words.
                argument[i] = true;
                naming -= 1;
                continue;
            }
            if lexicon::PREPOSITIONS.contains(&w.as_str()) {
                in_phrase = true;
            } else if lexicon::POSSESSIVES.contains(&w.as_str()) {
                in_phrase = false;
            } else if in_phrase && !t.opaque && !self.knows(w) {
                argument[i] = true;
            }
        }
        if std::env::var("SEARCH_EXPLAIN").is_ok() {
            eprintln!("  tokens {:?}", tokens.iter().enumerate().map(|(i, (w, t))| format!("{w}{}{}{}", if t.arg { "*" } else { "" }, if verb_position[i] { "^" } else { "" }, if argument[i] { "@" } else { "" })).collect::<Vec<_>>());
        }
        let mut verbs = Vec::new();
        // (word, token, whether it stands where the query's verb would).
        let mut words: Vec<(String, Token, bool)> = Vec::new();
        let mut fallback: Vec<(String, Token)> = Vec::new();
        let mut first_verb = true;
        for (i, (w, t)) in tokens.iter().enumerate() {
            if !t.opaque && (self.stopwords.contains(w.as_str()) || w.chars().count() < 2) {
                continue;
            }
            let mut t = t.clone();
            t.arg |= argument[i];
            fallback.push((w.clone(), t.clone()));
            let mut verb = if t.opaque { None } else { self.verbs.get(w.as_str()) };
            if verb.is_none() && verb_position[i] && !t.opaque && w.chars().count() >= 4 && !self.is_word(w) {
                // "opne a PR", "creat an issue".
                verb = self.verbs.iter().find(|(v, _)| v.len() >= 4 && crate::validate::levenshtein(w, v) <= 1).map(|(_, m)| m);
            }
            match verb {
                Some(map) if verb_position[i] => {
                    let factor = if first_verb { 1.0 } else { tun("LATER_VERB", LATER_VERB) };
                    first_verb = false;
                    verbs.push((*map, factor, stem(w)));
                    if w == "page"
                        && let Some(p) = self.product("pagerduty")
                    {
                        Self::mention(&mut mentioned, &[p], 0.9);
                        hints.push((p, 0.9));
                    }
                    if lexicon::OBJECT_VERBS.contains(&w.as_str()) || !lexicon::GENERIC_VERBS.contains(&w.as_str()) {
                        words.push((w.clone(), t, false));
                    }
                }
                Some(map) if !self.dual.contains(w.as_str()) => {
                    verbs.push((*map, tun("OFF_VERB", OFF_VERB), stem(w)));
                    if !lexicon::GENERIC_VERBS.contains(&w.as_str()) {
                        words.push((w.clone(), t, false));
                    }
                }
                _ => {
                    let lead = verb_position[i] && first_verb;
                    words.push((w.clone(), t, lead));
                }
            }
        }
        let mut verbs_only = false;
        if words.is_empty() && hints.is_empty() {
            // Only verbs ("create"): match them as words, for what little that says.
            verbs_only = !fallback.is_empty();
            words = fallback.into_iter().map(|(w, t)| (w, t, false)).collect();
        }
        let mut meaningful = 0;
        let mut expanded: Vec<Word> = Vec::with_capacity(words.len() + 2);
        for (w, t, lead) in words {
            if !t.arg && !t.opaque {
                meaningful += 1;
            }
            let word = self.expand(&w, &t, &mut mentioned);
            if lead && word.alts.is_empty() && !t.arg && !t.opaque {
                // The query starts with an action the catalogue does not know ("reserve",
                // "translate"): no tool's verb answers it.
                verbs.push((&[], 1.0, stem(&w)));
            }
            expanded.push(word);
        }
        if !hints.is_empty() {
            let mut alts: Vec<(u32, f32)> = Vec::new();
            for (p, c) in &hints {
                if let Some(&id) = self.terms.get(&p.replace('_', "")) {
                    alts.push((id, *c));
                }
            }
            expanded.push(Word { alts, weight: tun("HINT_WEIGHT", HINT_WEIGHT) });
            if issue_key {
                let mut issue = self.expand("issue", &Token { arg: false, opaque: false, brk: false }, &mut mentioned);
                issue.weight = tun("HINT_WEIGHT", HINT_WEIGHT);
                expanded.push(issue);
            }
        }
        Parsed { words: expanded, verbs, mentioned, ngrams, verbs_only, meaningful }
    }

    /// Whether a word is in the catalogue as written (not only as a stem).
    fn is_word(&self, word: &str) -> bool {
        self.sorted.binary_search_by(|(t, _)| t.as_str().cmp(word)).is_ok()
    }

    /// Whether the catalogue knows a word, directly or through a synonym.
    fn knows(&self, word: &str) -> bool {
        self.terms.contains_key(word)
            || self.terms.contains_key(&stem(word))
            || self.synonyms.contains_key(word)
            || self.verbs.contains_key(word)
    }

    /// A query word's alternatives and weight; records the products it names.
    fn expand(&self, word: &str, token: &Token, mentioned: &mut HashMap<&'static str, f32>) -> Word {
        if token.opaque {
            return Word { alts: Vec::new(), weight: tun("UNKNOWN_ARG", UNKNOWN_ARG) };
        }
        let mut alts: Vec<(u32, f32)> = Vec::new();
        let push = |alts: &mut Vec<(u32, f32)>, term: &str, discount: f32| {
            if let Some(&id) = self.terms.get(term) {
                match alts.iter_mut().find(|(t, _)| *t == id) {
                    Some(e) => e.1 = e.1.max(discount),
                    None => alts.push((id, discount)),
                }
            }
        };
        let stemmed = stem(word);
        push(&mut alts, word, 1.0);
        push(&mut alts, &stemmed, if stemmed == word { 1.0 } else { STEM_ONLY });
        if let Some(products) = self.products.get(word) {
            // A product's own name is surer than a word that implies it.
            let named = |p: &&str| p.replace('_', "") == word || tokenize(p).iter().any(|t| t == word);
            for p in products {
                Self::mention(mentioned, &[p], if named(p) { 1.0 } else { IMPLIED });
            }
        }
        let direct = !alts.is_empty();
        let mut weight = alts.iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max);
        if let Some(syns) = self.synonyms.get(word) {
            let before = alts.len();
            for s in *syns {
                push(&mut alts, s, tun("SYNONYM", SYNONYM));
                push(&mut alts, &stem(s), tun("SYNONYM", SYNONYM) * STEM_ONLY);
            }
            if !direct {
                weight = alts[before..].iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max);
            }
        }
        let len = word.chars().count();
        if alts.is_empty() && !token.arg && len >= 3 && word.chars().all(char::is_alphabetic) {
            let mut found: Vec<u32> = Vec::new();
            for key in deletion_keys(word) {
                for &id in self.typo_keys.get(&key).into_iter().flatten() {
                    if !found.contains(&id) {
                        found.push(id);
                    }
                }
            }
            let discount = if len >= 5 { tun("TYPO", TYPO) } else { tun("TYPO", TYPO) * 0.9 };
            for id in found {
                let term = &self.term_text[id as usize];
                // Three letters are too few to guess a substitution from: only a missing letter.
                let plausible = len > 3 || (term.chars().count() == 4 && term.starts_with(&word[..1]));
                if plausible && crate::validate::levenshtein(word, term) <= 1 {
                    push(&mut alts, term, discount);
                    for syn in self.synonyms.get(term.as_str()).copied().unwrap_or_default() {
                        push(&mut alts, syn, discount * tun("SYNONYM", SYNONYM));
                    }
                    if let Some(products) = self.products.get(term.as_str()) {
                        Self::mention(mentioned, products, IMPLIED);
                    }
                }
            }
        }
        if alts.is_empty() && len >= 6 {
            // "announcements" -> "announce": the longest known word the word starts with.
            for cut in (5.max(len * 3 / 5)..len).rev() {
                let head: String = word.chars().take(cut).collect();
                if let Some(&id) = self.terms.get(&head) {
                    alts.push((id, tun("PREFIX", PREFIX)));
                    break;
                }
            }
        }
        if alts.is_empty() && len >= 4 {
            let start = self.sorted.partition_point(|(t, _)| t.as_str() < word);
            for (_, id) in self.sorted[start..].iter().take_while(|(t, _)| t.starts_with(word)).take(20) {
                alts.push((*id, tun("PREFIX", PREFIX)));
            }
        }
        if weight == 0.0 {
            // A guessed word (typo, prefix) weighs no more than an unknown one: were the guess
            // wrong, it would be an unknown word.
            weight = alts.iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max).min(tun("UNKNOWN_PLAIN", UNKNOWN_PLAIN));
        }
        if alts.is_empty() {
            weight = if token.arg { tun("UNKNOWN_ARG", UNKNOWN_ARG) } else { tun("UNKNOWN_PLAIN", UNKNOWN_PLAIN) };
        }
        if lexicon::TIME_WORDS.contains(&word) || lexicon::MODIFIERS.contains(&word) {
            weight = weight.min(tun("TIME_WEIGHT", lexicon::TIME_WEIGHT));
        }
        if word.chars().any(|c| c.is_ascii_digit()) {
            // "3pm", "2026", "v2": arguments, whatever a description's example says.
            weight = weight.min(tun("UNKNOWN_ARG", UNKNOWN_ARG));
        }
        Word { alts, weight }
    }

    /// How well a tool's verb answers the query's verbs, 0..1.
    fn intent(&self, parsed: &Parsed, doc: &Doc) -> f32 {
        let lookup = |map: &[(&str, f32)], other: f32| {
            map.iter().find(|(v, _)| *v == doc.verb).map(|(_, s)| *s).unwrap_or(other)
        };
        if parsed.verbs.is_empty() {
            return lookup(lexicon::READ_DEFAULT, lexicon::READ_DEFAULT_OTHER);
        }
        parsed
            .verbs
            .iter()
            .map(|(map, f, word)| {
                let also = if doc.intents.contains(word) { tun("INTENT_ALSO", INTENT_ALSO) } else { 0.0 };
                f * lookup(map, lexicon::OTHER_VERB).max(also)
            })
            .fold(0.0, f32::max)
    }

    /// The share of a tool's name words (after its verb) the query covers, 0..1.
    fn coverage(&self, matched: &HashMap<u32, f32>, doc: &Doc) -> f32 {
        if doc.name_terms.is_empty() {
            return 1.0;
        }
        let get = |id: &u32| matched.get(id).copied().unwrap_or(0.0);
        let sum: f32 = doc.name_terms.iter().map(|(t, s)| get(t).max(s.as_ref().map_or(0.0, |s| get(s) * STEM_ONLY))).sum();
        sum / doc.name_terms.len() as f32
    }

    /// Ranks tools for `query`; `connected` tells which integrations the user has connected.
    pub fn search(&self, query: &str, limit: usize, connected: &dyn Fn(&str) -> bool) -> Vec<Hit> {
        let trimmed = query.trim();
        if trimmed.is_empty() || limit == 0 {
            return Vec::new();
        }
        let exact = self.by_name.get(trimmed.to_ascii_lowercase().as_str()).copied();
        let parsed = self.parse(trimmed);
        if std::env::var("SEARCH_EXPLAIN").is_ok() {
            for w in &parsed.words {
                let alts: Vec<String> = w.alts.iter().take(6).map(|(id, d)| format!("{}:{d:.2}", self.term_text[*id as usize])).collect();
                eprintln!("  word w={:.2} {:?}", w.weight, alts);
            }
            eprintln!("  verbs {:?} mentioned {:?} meaningful {}", parsed.verbs.iter().map(|v| (&v.2, v.1)).collect::<Vec<_>>(), parsed.mentioned, parsed.meaningful);
        }
        let n = self.docs.len();
        let mut acc = vec![0.0_f32; n];
        let mut best = vec![0.0_f32; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut candidates: Vec<u32> = Vec::new();
        let mut total = 0.0;
        for word in &parsed.words {
            total += word.weight;
            for &(id, discount) in &word.alts {
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
                best[d as usize] = 0.0;
            }
            touched.clear();
        }
        if let Some(e) = exact
            && acc[e as usize] == 0.0
        {
            candidates.push(e);
        }
        // Long queries carry more context than intent: the share of words a tool matches means
        // more the longer the query is.
        let softening = if parsed.meaningful <= 3 {
            1.0
        } else {
            (1.0 - tun("SOFT_SLOPE", SOFT_SLOPE) * (parsed.meaningful - 3) as f32).max(tun("SOFT_MIN", SOFT_MIN))
        };
        let mut matched: HashMap<u32, f32> = HashMap::new();
        for word in &parsed.words {
            for &(id, discount) in &word.alts {
                let e = matched.entry(id).or_default();
                *e = e.max(discount);
            }
        }
        let mut connection: HashMap<&str, bool> = HashMap::new();
        let mut hits: Vec<(f32, bool, u32)> = candidates
            .into_iter()
            .filter_map(|d| {
                let doc = &self.docs[d as usize];
                if Some(d) == exact {
                    return Some((1.0, true, d));
                }
                let content = if total > 0.0 { (acc[d as usize] / total).min(1.0).powf(softening) } else { 0.0 };
                let intent = tun("INTENT_FLOOR", INTENT_FLOOR) + (1.0 - tun("INTENT_FLOOR", INTENT_FLOOR)) * self.intent(&parsed, doc);
                let cover = tun("COVER_FLOOR", COVER_FLOOR) + (1.0 - tun("COVER_FLOOR", COVER_FLOOR)) * self.coverage(&matched, doc);
                let mut score = content * intent * cover;
                if parsed.verbs_only {
                    score *= VERBS_ONLY;
                }
                if !parsed.mentioned.is_empty() {
                    score *= match parsed.mentioned.get(doc.integration) {
                        Some(c) => *c,
                        None if doc.agnostic => 1.0,
                        None => tun("OTHER_PRODUCT", OTHER_PRODUCT),
                    };
                } else if !*connection.entry(doc.integration).or_insert_with(|| connected(doc.integration)) {
                    score *= tun("UNCONNECTED", UNCONNECTED);
                }
                if doc.phrases.iter().any(|p| parsed.ngrams.contains(p)) {
                    score += tun("PHRASE_BONUS", PHRASE_BONUS);
                }
                if std::env::var("SEARCH_EXPLAIN").is_ok_and(|v| doc.name.contains(&v)) {
                    eprintln!(
                        "  {:<36} content {:.3} (acc {:.2}/{:.2}^{softening:.2}) intent {intent:.2} cover {cover:.2} -> {score:.3}",
                        doc.name, content, acc[d as usize], total
                    );
                }
                (f64::from(score) >= std::env::var("SEARCH_MIN").ok().and_then(|v| v.parse().ok()).unwrap_or(MIN_SCORE)).then_some((score, false, d))
            })
            .collect();
        hits.sort_by(|a, b| {
            b.1.cmp(&a.1).then(b.0.total_cmp(&a.0)).then_with(|| self.docs[a.2 as usize].name.cmp(self.docs[b.2 as usize].name))
        });
        hits.truncate(limit);
        hits.into_iter()
            .map(|(score, _, d)| {
                let doc = &self.docs[d as usize];
                Hit {
                    name: doc.name,
                    integration: doc.integration,
                    description: doc.description,
                    score: (f64::from(score.min(1.0)) * 1000.0).round() / 1000.0,
                }
            })
            .collect()
    }
}

fn tun(name: &str, default: f32) -> f32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The id of a term, added when new.
fn intern(terms: &mut HashMap<String, u32>, postings: &mut Vec<Vec<(u32, f32)>>, term: &str) -> u32 {
    if let Some(&id) = terms.get(term) {
        return id;
    }
    let id = terms.len() as u32;
    terms.insert(term.to_string(), id);
    postings.push(Vec::new());
    id
}

/// A keyword's canonical tokens, as a query would read them.
fn query_tokens(text: &str) -> Vec<String> {
    let tokens: Vec<(String, ())> = tokenize(text).into_iter().map(|t| (t, ())).collect();
    canonicalize(&tokens, false).into_iter().map(|(t, _)| t).collect()
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
    }

    #[test]
    fn phrases_and_compounds_become_one_token() {
        assert_eq!(query_tokens("open a pull request"), vec!["open", "a", "pr"]);
        assert!(index_tokens("who is on-call").contains(&"oncall".to_string()));
        assert!(index_tokens("CI/CD pipelines").contains(&"cicd".to_string()));
    }

    #[test]
    fn deletion_keys_meet_within_one_edit() {
        let share = |a: &str, b: &str| deletion_keys(a).iter().any(|k| deletion_keys(b).contains(k));
        assert!(share("calender", "calendar"));
        assert!(share("jria", "jira"));
        assert!(share("pul", "pull"));
        assert!(!share("jira", "jazz"));
    }
}
