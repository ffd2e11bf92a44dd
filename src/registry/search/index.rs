//! Building the index: tools as weighted fields, terms, typo keys and product words.

use super::hash::{Map, Set};

use super::embed;
use super::hash::deletion_hashes;
use super::text::{self, index_tokens, stem, tokenize};
use super::*;

impl SearchIndex {
    /// The index of `registry`'s tools. The build's temporaries (texts, token lists, maps) are
    /// all dropped before the freed heap is given back: trimmed while they were still alive,
    /// 10,000 upstream tools left about 37 MiB resident for nothing.
    pub fn build(registry: &Registry) -> SearchIndex {
        let index = Self::build_inner(registry);
        release_freed_memory();
        index
    }

    fn build_inner(registry: &Registry) -> SearchIndex {
        let tools = registry.tools();
        let mut vocab = Vocab::default();
        // Each integration's own words, read once: (name and display name, keywords).
        let mut products_words: Map<&str, (Vec<Form>, Vec<Form>)> = Map::default();
        // What the build reads of each tool's text: from the committed catalogue data for a
        // compiled tool recorded as it is (`super::precomputed`), from an upstream server's
        // stored row when it has one for these very tools, else read now (`super::store`).
        let model = embed::model();
        let mut pool = Pool::default();
        let mut pre = super::precomputed::lookup(model, tools, &mut pool);
        let committed: Vec<Option<Keywords>> =
            pre.iter_mut().map(|e| e.as_mut().map(|e| std::mem::take(&mut e.keywords))).collect();
        let (analyses, vectors) = super::store::tool_data(model, tools, &mut pre, &mut pool, registry.vector_store());
        let keywords: Vec<Keywords> = tools
            .iter()
            .zip(committed)
            .map(|(tool, committed)| committed.unwrap_or_else(|| keyword_analysis(tool, &mut pool)))
            .collect();
        // Each pooled string's term and stem, once looked up (a server's row holds each of its
        // strings once).
        let mut memo: Vec<Option<Form>> = vec![None; pool.len()];
        let avg_description =
            (analyses.iter().map(|a| a.prose.len()).sum::<usize>() as f32 / analyses.len().max(1) as f32).max(1.0);
        let mut docs = Vec::with_capacity(tools.len());
        let mut phrases: Map<String, Vec<u32>> = Map::default();
        // term -> (best name-field weight, best other-field weight, sum of other weights).
        let mut tf: Map<u32, (f32, f32, f32)> = Map::default();
        for (d, tool) in tools.iter().enumerate() {
            tf.clear();
            let mut add = |forms: &[Form], weight: f32, name_field: bool| {
                for &(id, stem_id) in forms {
                    for (form, w) in [(Some(id), weight), (stem_id, weight * STEM_ONLY)] {
                        let Some(form) = form else { continue };
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
            let analysis = &analyses[d];
            let name_tokens: Vec<&str> = analysis.name.iter().map(|&i| pool.get(i)).collect();
            let name_forms = vocab.forms_of(&pool, &mut memo, &analysis.name);
            // The name's verb is the tool's intent (matched as such), not a word of its topic:
            // as a word it weighs like a keyword.
            let split = 1.min(name_forms.len());
            add(&name_forms[..split], W_KEYWORD, false);
            add(&name_forms[split..], W_NAME, true);
            let (own, product_keywords) = products_words.entry(tool.integration).or_insert_with(|| {
                let mut own = index_tokens(&tool.integration.replace('_', " "));
                own.push(tool.integration.replace('_', ""));
                let mut keywords = Vec::new();
                if let Some(integration) = tool.plugin() {
                    own.extend(index_tokens(integration.display_name));
                    keywords = integration.keywords.iter().flat_map(|kw| index_tokens(kw)).collect();
                }
                (vocab.forms(&own), vocab.forms(&keywords))
            });
            add(own, W_PRODUCT, true);
            add(product_keywords, W_PRODUCT_KEYWORD, false);
            let mut intents: Vec<String> = name_tokens.first().map(|t| stem(t)).into_iter().collect();
            let keywords = &keywords[d];
            intents.extend(keywords.intents.iter().map(|&i| pool.get(i).to_string()));
            add(&vocab.forms_of(&pool, &mut memo, &keywords.tokens), W_KEYWORD, false);
            intents
                .extend(analysis.prose.iter().take(1).map(|&i| pool.get(i)).filter(|t| lexicon::is_verb(t)).map(stem));
            let norm = 1.0 - B_DESCRIPTION + B_DESCRIPTION * analysis.prose.len() as f32 / avg_description;
            add(&vocab.forms_of(&pool, &mut memo, &analysis.prose), W_DESCRIPTION / norm, false);
            add(&vocab.forms_of(&pool, &mut memo, &analysis.examples), W_EXAMPLE, false);
            // Every parameter's words weigh alike: read in one run, in order.
            add(&vocab.forms_of(&pool, &mut memo, &analysis.params), W_PARAM, false);
            for (&id, &(name_w, best, sum)) in &tf {
                let other = (best + DAMPING * (sum - best)).min(CAP_OTHER);
                vocab.postings[id as usize].push((d as u32, name_w.max(other)));
            }
            for phrase in keywords.phrases.iter().map(|&i| pool.get(i)) {
                let tools = phrases.entry(phrase.to_string()).or_default();
                if tools.last() != Some(&(d as u32)) {
                    tools.push(d as u32);
                }
            }
            docs.push(Doc {
                name: tool.name,
                integration: tool.integration,
                description: tool.description,
                verb: name_tokens.first().map(|v| lexicon::tool_verb(v).to_string()).unwrap_or_default(),
                intents,
                name_terms: name_forms[split..].to_vec(),
                agnostic: analysis.agnostic,
                bare: tool.keywords.is_empty() && tool.plugin().is_none(),
                remote: tool.plugin().is_some() || tool.custom().is_some(),
            });
        }
        let Vocab { terms, text: term_text, postings, surface, .. } = vocab;
        let n = docs.len().max(1) as f32;
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let term_max = postings.iter().map(|p| p.iter().map(|&(_, s)| s).fold(0.0, f32::max)).collect();
        let mut sorted: Vec<(String, u32)> =
            terms.iter().filter(|(_, id)| surface[**id as usize]).map(|(t, &id)| (t.clone(), id)).collect();
        sorted.sort();
        let mut typo_pairs: Vec<(u64, u32)> = Vec::new();
        for (t, id) in &sorted {
            let letters = t.chars().filter(|c| c.is_alphabetic()).count();
            if t.chars().count() >= 3 && t.chars().all(char::is_alphanumeric) && letters >= 3 {
                typo_pairs.extend(deletion_hashes(t).into_iter().map(|key| (key, *id)));
            }
        }
        let typo_keys = TypoKeys::new(typo_pairs);
        let products = Self::products(registry, &docs, &terms, &postings);
        let bm25 = bm25::Bm25::from_terms(analyses.iter().map(|a| a.bm25.iter().map(|&i| pool.get(i))));
        // Each phrase's leading words as keys too, with no tools of their own: a query's run is
        // looked up a word at a time, and stops where no phrase goes on.
        let whole: Vec<String> = phrases.keys().cloned().collect();
        for phrase in whole {
            let mut end = 0;
            while let Some(space) = phrase[end..].find(' ') {
                end += space;
                phrases.entry(phrase[..end].to_string()).or_default();
                end += 1;
            }
        }
        let mut index = SearchIndex {
            docs,
            by_name: Map::default(),
            terms,
            term_text,
            postings,
            idf,
            term_max,
            sorted,
            typo_keys,
            phrases,
            products,
            synonyms: lexicon::SYNONYMS.iter().copied().collect(),
            synonyms_by_stem: lexicon::SYNONYMS.iter().rev().map(|(w, s)| (stem(w), *s)).collect(),
            verbs: Map::default(),
            verbs_by_len: Vec::new(),
            dual: lexicon::DUAL.iter().copied().collect(),
            stopwords: lexicon::STOPWORDS.iter().copied().collect(),
            vectors,
            foreign: std::sync::OnceLock::new(),
            bm25,
            layout: std::sync::OnceLock::new(),
            scratch: std::sync::Mutex::new(Vec::new()),
        };
        index.by_name = index.docs.iter().enumerate().map(|(i, d)| (d.name, i as u32)).collect();
        for (words, map) in lexicon::VERBS {
            for w in *words {
                index.verbs.insert(w, map);
            }
        }
        for (at, &v) in index.verbs.keys().enumerate() {
            if v.len() >= 4 {
                if index.verbs_by_len.len() <= v.len() {
                    index.verbs_by_len.resize_with(v.len() + 1, Vec::new);
                }
                index.verbs_by_len[v.len()].push((at as u32, v));
            }
        }
        index
    }

    /// Words that name a product: its name, display name and single-word keywords when they are
    /// distinctive (used by at most one other integration), plus the curated product words.
    fn products(
        registry: &Registry,
        docs: &[Doc],
        terms: &Map<String, u32>,
        postings: &[Vec<(u32, f32)>],
    ) -> Map<String, Vec<&'static str>> {
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
        let namespaces: Set<&'static str> =
            docs.iter().filter(|d| registry.integration(d.integration).is_none()).map(|d| d.integration).collect();
        // A server's own name is the user's word for it: a name that is no English word ("git",
        // "sqlite") names it wherever else the word occurs; an English one ("time", "fetch")
        // only when it is distinctive, as other words are.
        let model = embed::model();
        let english = |w: &str| model.is_some_and(|m| m.knows_word(w));
        for ns in namespaces {
            let forced = !ns.contains('_') && !english(ns);
            candidates.push((ns.to_string(), ns, forced));
        }
        let all: Set<&'static str> = docs.iter().map(|d| d.integration).collect();
        for (word, product) in lexicon::PRODUCT_WORDS {
            if let Some(p) = all.get(product) {
                candidates.push((word.to_string(), p, true));
            }
        }
        let mut products: Map<String, Vec<&'static str>> = Map::default();
        for (word, product, forced) in candidates {
            let distinctive = forced
                || terms.get(&word).is_none_or(|&id| {
                    let others: Set<&str> = postings[id as usize]
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
}

/// The strings of the build's [`Analysis`]es, in one buffer (a string per token would be a
/// million allocations at 10,000 tools).
#[derive(Default)]
pub(super) struct Pool {
    text: String,
    spans: Vec<(usize, usize)>,
}

impl Pool {
    pub fn push(&mut self, s: &str) -> u32 {
        self.spans.push((self.text.len(), s.len()));
        self.text.push_str(s);
        (self.spans.len() - 1) as u32
    }

    pub fn get(&self, id: u32) -> &str {
        let (start, len) = self.spans[id as usize];
        &self.text[start..start + len]
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }
}

/// What the index reads of one tool's text, as strings of a [`Pool`]: computed by [`analyse`] or
/// read back from an upstream server's stored row ([`super::store`]), so that a restart neither
/// embeds nor tokenises again.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Analysis {
    /// The name's words after its integration prefix ([`name_words`]).
    pub name: Vec<u32>,
    /// The quoted examples' tokens (syntax, weighed as such).
    pub examples: Vec<u32>,
    /// The description's prose tokens, with its English reading's when it is written in another
    /// language the glossary knows.
    pub prose: Vec<u32>,
    /// Every parameter name's tokens, in order.
    pub params: Vec<u32>,
    /// The tool takes an `integration` argument.
    pub agnostic: bool,
    /// BM25's terms of the integration's name, the name's words and the prose.
    pub bm25: Vec<u32>,
}

/// `tool`'s [`Analysis`], its strings pushed to `pool`, and its parameter names.
pub(super) fn analyse(tool: &crate::registry::ToolEntry, pool: &mut Pool) -> (Analysis, Vec<String>) {
    // A description not written in English is read with its English words too (the glossary's
    // reading): lexical and BM25 match an English request, or a request glossed from any of
    // the glossary's languages, against it.
    let (examples, mut prose) = text::split_examples(tool.description);
    if let Some(english) = glossed_description(&prose) {
        prose.push_str(" \n");
        prose.push_str(&english);
    }
    let name = name_words(tool.name, tool.integration);
    let plain = format!("{} {} {prose}", tool.integration.replace('_', " "), name.join(" "));
    let params = param_names(tool);
    let param_tokens: Vec<String> = params.iter().flat_map(|p| index_tokens(&p.replace('_', " "))).collect();
    let mut ids = |tokens: &[String]| tokens.iter().map(|t| pool.push(t)).collect::<Vec<u32>>();
    let analysis = Analysis {
        name: ids(&name),
        examples: ids(&index_tokens(&examples)),
        prose: ids(&index_tokens(&prose)),
        params: ids(&param_tokens),
        agnostic: params.iter().any(|p| p == "integration"),
        bm25: ids(&bm25::terms(&plain)),
    };
    (analysis, params)
}

/// What the index reads of a tool's own keywords, as strings of a [`Pool`]: computed by
/// [`keyword_analysis`] or read back from the compiled catalogue's committed data.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Keywords {
    /// Every keyword's tokens, in order (they weigh alike).
    pub tokens: Vec<u32>,
    /// The stems of the verbs that start a keyword of two words or more (the tool's intents).
    pub intents: Vec<u32>,
    /// The keywords of two canonical tokens or more, those tokens joined by spaces.
    pub phrases: Vec<u32>,
}

/// `tool`'s [`Keywords`], their strings pushed to `pool`.
pub(super) fn keyword_analysis(tool: &crate::registry::ToolEntry, pool: &mut Pool) -> Keywords {
    let mut out = Keywords::default();
    for kw in tool.keywords {
        let tokens = index_tokens(kw);
        if tokens.len() >= 2 && lexicon::is_verb(&tokens[0]) {
            out.intents.push(pool.push(&stem(&tokens[0])));
        }
        out.tokens.extend(tokens.iter().map(|t| pool.push(t)));
        let phrase = query_tokens(kw);
        if phrase.len() >= 2 {
            out.phrases.push(pool.push(&phrase.join(" ")));
        }
    }
    out
}

/// A tool name's words after its integration prefix, as the index reads them. Upstream servers'
/// tool names often repeat the server's name (`git` + `git_commit`) and join words with '-'
/// (`get-sum`): the repeated name is the product, not the verb, and a hyphen parts words as '_'
/// does (`getsum` is no word anyone types).
fn name_words(name: &str, integration: &str) -> Vec<String> {
    let local = name.strip_prefix(integration).and_then(|n| n.strip_prefix('_')).unwrap_or(name);
    let mut words = index_tokens(&local.replace(['_', '-'], " "));
    let product = tokenize(&integration.replace('_', " "));
    let repeated = words.iter().zip(&product).take_while(|(w, p)| w == p).count();
    if repeated == product.len() && words.len() > repeated {
        words.drain(..repeated);
    }
    words
}

/// A tool description's English reading through the glossary, when it is written in one of the
/// glossary's languages ([`super::glossary::written_in_glossary_language`]: stricter than a
/// request's test, since a description in English with Latin terms and abbreviations, "et al.",
/// must not be read as French).
fn glossed_description(prose: &str) -> Option<String> {
    if !super::glossary::written_in_glossary_language(prose) {
        return None;
    }
    super::glossary::gloss(prose, &|_| false)
}

/// What the semantic tier embeds of a tool: its name's words, its integration's display name,
/// its description and its parameters' names.
pub fn embedded_text(tool: &crate::registry::ToolEntry) -> String {
    embedded_text_with(tool, &param_names(tool))
}

/// A tool's parameter names. The index reads them for every tool, but an agent asks for few
/// schemas: a schema not generated yet is generated for this and dropped, not kept (the
/// catalogue's schemas took about 1 MiB of heap once the index had read them all).
pub(super) fn param_names(tool: &crate::registry::ToolEntry) -> Vec<String> {
    let names = |schema: &serde_json::Value| {
        schema.get("properties").and_then(|p| p.as_object()).map(|p| p.keys().cloned().collect()).unwrap_or_default()
    };
    tool.with_schema(names)
}

/// How much of a description the semantic tier reads: where a description says what its tool
/// does. Long descriptions of real servers go on with parameter lists, questionnaires, examples
/// and usage rules ("Little interest or pleasure in doing things", "You MUST use this tool
/// BEFORE ..."), which pulled each of them toward the same generic centre, where a chatty request
/// lands too. The lexical tier and BM25 still read the whole description. Tuned on the dev two
/// thirds of MCP-Bench (120, 200, 300, 450 bytes, and the first paragraph): at 300, single-step
/// top-1 0.639 -> 0.689 and recall@5 0.852 -> 0.885, multi-step recall@10 0.452 -> 0.463, every
/// own-catalogue and multilingual dev figure the same.
const SEMANTIC_DESCRIPTION: usize = 300;

/// The first [`SEMANTIC_DESCRIPTION`] bytes of a description (at a character boundary).
fn summary(description: &str) -> &str {
    text::prefix(description, SEMANTIC_DESCRIPTION)
}

pub(super) fn embedded_text_with(tool: &crate::registry::ToolEntry, params: &[String]) -> String {
    let mut text = tool.name.replace('_', " ");
    if let Some(integration) = tool.plugin() {
        text.push(' ');
        text.push_str(integration.display_name);
    }
    text.push_str(". ");
    text.push_str(summary(tool.description));
    for name in params {
        text.push(' ');
        text.push_str(&name.replace('_', " "));
    }
    text
}

/// What the multilingual tier embeds of a tool: its integration's and name's words (camelCase
/// and snake_case parted) and its description.
pub(super) fn foreign_text(name: &str, integration: &str, description: &str) -> String {
    let mut text = integration.replace('_', " ");
    text.push(' ');
    let local = name.strip_prefix(integration).unwrap_or(name);
    let mut prev_lower = false;
    for c in local.chars() {
        if c == '_' || c == '-' {
            text.push(' ');
        } else {
            if c.is_uppercase() && prev_lower {
                text.push(' ');
            }
            text.push(c);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    text.push_str(". ");
    text.push_str(description);
    text
}

/// Gives the build's freed heap back to the system: glibc keeps freed memory in the arena of the
/// thread that freed it (a tokio worker's, here), so the build's temporary strings and maps
/// would stay resident for the life of the process (docs/footprint.md, "Round 3").
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of glibc's own arenas to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A surface word's term and, when it differs, its stem's.
type Form = (u32, Option<u32>);

/// The terms being collected.
#[derive(Default)]
struct Vocab {
    terms: Map<String, u32>,
    text: Vec<String>,
    postings: Vec<Vec<(u32, f32)>>,
    /// Whether the term is a word as written somewhere (not only a stem).
    surface: Vec<bool>,
    /// A surface word's stem term, once known.
    stems: Map<u32, Option<u32>>,
}

impl Vocab {
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.terms.get(term) {
            return id;
        }
        let id = self.text.len() as u32;
        self.terms.insert(term.to_string(), id);
        self.text.push(term.to_string());
        self.postings.push(Vec::new());
        self.surface.push(false);
        id
    }

    fn form(&mut self, t: &str) -> Form {
        let id = self.id(t);
        self.surface[id as usize] = true;
        let stem_id = match self.stems.get(&id) {
            Some(&s) => s,
            None => {
                let s = stem(t);
                let s = (s != t).then(|| self.id(&s));
                self.stems.insert(id, s);
                s
            }
        };
        (id, stem_id)
    }

    fn forms(&mut self, tokens: &[String]) -> Vec<Form> {
        tokens.iter().map(|t| self.form(t)).collect()
    }

    /// [`Vocab::forms`] of pooled strings, each looked up once (`memo`: by pool id).
    fn forms_of(&mut self, pool: &Pool, memo: &mut [Option<Form>], ids: &[u32]) -> Vec<Form> {
        ids.iter()
            .map(|&i| match memo[i as usize] {
                Some(form) => {
                    self.surface[form.0 as usize] = true;
                    form
                }
                None => {
                    let form = self.form(pool.get(i));
                    memo[i as usize] = Some(form);
                    form
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_words_drop_a_repeated_server_name_and_split_hyphens() {
        let w = |name: &str, integration: &str| name_words(name, integration);
        assert_eq!(w("git_git_commit", "git"), ["commit"]);
        assert_eq!(w("git_git_diff_staged", "git"), ["diff", "staged"]);
        assert_eq!(w("everything_get-sum", "everything"), ["get", "sum"]);
        assert_eq!(w("google_drive_search_files", "google_drive"), ["search", "files"]);
        // The server's name alone stays: it is all the name says.
        assert_eq!(w("git_git", "git"), ["git"]);
        assert_eq!(w("time_time", "time"), ["time"]);
        // Names an agent or a server may choose: nothing panics, nothing is invented.
        for (name, integration) in [("", ""), ("-", "x"), ("x_", "x"), ("x_-_-", "x"), ("é_ü-ö", "é"), ("a_b", "a_b_c")]
        {
            let words = w(name, integration);
            assert!(words.iter().all(|t| !t.is_empty()), "{name:?}: {words:?}");
        }
    }

    #[test]
    fn tool_verbs_read_as_the_verbs_queries_ask_for() {
        assert_eq!(lexicon::tool_verb("list"), "list");
        assert_eq!(lexicon::tool_verb("read"), "get");
        assert_eq!(lexicon::tool_verb("write"), "create");
        assert_eq!(lexicon::tool_verb("edit"), "update");
        assert_eq!(lexicon::tool_verb("show"), "get");
        assert_eq!(lexicon::tool_verb("move"), "transition");
        assert_eq!(lexicon::tool_verb("commit"), "commit");
        assert_eq!(lexicon::tool_verb(""), "");
    }

    #[test]
    fn the_semantic_tier_reads_a_description_s_start_only() {
        assert_eq!(summary("Reads a note."), "Reads a note.");
        let long = format!("Scores depression severity. {}", "Little interest in doing things. ".repeat(40));
        let s = summary(&long);
        assert_eq!(s.len(), SEMANTIC_DESCRIPTION);
        assert!(s.starts_with("Scores depression severity."));
        // Never inside a character: a description of multi-byte letters is cut before one.
        let wide = "é".repeat(400);
        let s = summary(&wide);
        assert!(s.len() <= SEMANTIC_DESCRIPTION && s.len() >= SEMANTIC_DESCRIPTION - 1 && s.chars().all(|c| c == 'é'));
    }
}
