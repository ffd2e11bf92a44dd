//! Building the index: tools as weighted fields, terms, typo keys and product words.

use std::collections::{HashMap, HashSet};

use super::text::{self, deletion_keys, index_tokens, stem, tokenize};
use super::*;

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
                    let forms = if s == *t {
                        vec![(t.clone(), weight)]
                    } else {
                        vec![(t.clone(), weight), (s, weight * STEM_ONLY)]
                    };
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
            // The name's verb is the tool's intent (matched as such), not a word of its topic:
            // as a word it weighs like a keyword.
            add(&name_tokens[..1.min(name_tokens.len())], W_KEYWORD, false, &mut seen);
            add(&name_tokens[1.min(name_tokens.len())..], W_NAME, true, &mut seen);
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
            let (examples, prose) = text::split_examples(tool.description);
            add(&index_tokens(&prose), W_DESCRIPTION / norm, false, &mut seen);
            add(&index_tokens(&examples), W_EXAMPLE, false, &mut seen);
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
            let phrases =
                tool.keywords.iter().map(|k| query_tokens(k)).filter(|t| t.len() >= 2).map(|t| t.join(" ")).collect();
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
        let term_max = postings.iter().map(|p| p.iter().map(|&(_, s)| s).fold(0.0, f32::max)).collect();
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
            term_max,
            sorted,
            typo_keys,
            products,
            synonyms: lexicon::SYNONYMS.iter().copied().collect(),
            synonyms_by_stem: lexicon::SYNONYMS.iter().rev().map(|(w, s)| (stem(w), *s)).collect(),
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
