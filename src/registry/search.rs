//! search_tools ranking: field-weighted term matching with synonyms, typo tolerance and product
//! intent, scored 0..1.
//!
//! Each tool is a document with fields of different weight: its name tokens, its integration (name,
//! display name, product keywords), its own keywords, its description and its parameter names. A
//! query word contributes the best weighted match it finds in a tool, discounted when it matched
//! only as a synonym, a prefix or a typo, and weighted by how rare the word is in the catalogue
//! (so "create" counts less than "refund"). The score is the share of the query's weight a tool
//! matched, so 1.0 means every word matched in the tool's name, and scores below
//! [`MIN_SCORE`] are not returned at all.

use std::collections::{HashMap, HashSet};

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use super::Registry;

/// Results below this score are noise and are not returned.
pub const MIN_SCORE: f64 = 0.25;

const W_NAME: f64 = 1.0;
const W_INTEGRATION: f64 = 0.9;
const W_KEYWORD: f64 = 0.8;
const W_DESCRIPTION: f64 = 0.6;
const W_PARAM: f64 = 0.3;

const SYNONYM: f64 = 0.85;
const PREFIX: f64 = 0.75;
const TYPO: f64 = 0.7;

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "to", "in", "on", "for", "of", "my", "me", "and", "or", "with", "please", "i", "want", "can",
    "you", "how", "do", "is", "are", "it", "this", "that", "from", "at", "by", "some", "all", "our", "we", "about",
    "into", "be", "should", "would", "could", "need", "let", "lets", "let's", "using", "via", "tool", "whats", "s",
];

/// Groups of words that mean the same thing in this domain.
const SYNONYMS: &[&[&str]] = &[
    &["create", "open", "new", "add", "make", "file", "raise", "start", "post", "write"],
    &["get", "show", "fetch", "read", "view", "retrieve", "see", "lookup", "details"],
    &["list", "show", "all", "browse", "enumerate"],
    &["search", "find", "query", "lookup", "look"],
    &["update", "edit", "change", "modify", "set", "rename"],
    &["delete", "remove", "trash", "cancel", "drop"],
    &["send", "post", "message", "notify", "tell", "dm"],
    &["story", "stories", "post", "posts", "article", "articles", "headline", "headlines", "news"],
    &["weather", "forecast", "temperature", "rain", "conditions"],
    &["historical", "history", "past", "archive", "previous"],
    &["location", "locations", "place", "city", "coordinates", "geocode"],
    &["article", "page", "entry", "wiki", "encyclopedia"],
    &["summary", "summarize", "overview", "intro", "brief"],
    &["user", "profile", "person", "account", "member"],
    &["json", "jmespath", "jsonpath"],
    &["csv", "tsv", "spreadsheet", "table"],
    &["convert", "transform", "turn", "format"],
    &["time", "date", "clock", "now", "today", "timezone"],
    &["audit", "log", "history", "activity"],
    &["item", "comment", "comments", "thread", "discussion"],
];

/// `ENG-123`, `PROJ-7`: an issue key as Linear and Jira write them.
fn is_issue_key(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '-'));
    match word.split_once('-') {
        Some((key, num)) => {
            !key.is_empty()
                && key.chars().all(|c| c.is_ascii_alphabetic())
                && key.chars().any(|c| c.is_ascii_uppercase())
                && !num.is_empty()
                && num.chars().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// A bonus when a tool's multi-word keyword appears verbatim in the query.
const PHRASE_BONUS: f64 = 0.08;

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
    /// term -> best field weight it appears in.
    terms: HashMap<String, f64>,
    /// Multi-word keywords of the tool and its integration, as token lists ("share a file").
    phrases: Vec<Vec<String>>,
}

/// The search index over a registry's tools.
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// term -> inverse document frequency.
    idf: HashMap<String, f64>,
    /// integration name -> words that name it (name, display name, keywords).
    products: HashMap<&'static str, HashSet<String>>,
    synonyms: HashMap<&'static str, Vec<&'static str>>,
}

pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '#'))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_start_matches('#').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Crude English stemming: enough to match "issues"/"issue", "listing"/"list", "created"/"create".
pub fn stem(word: &str) -> String {
    let w = word;
    for suffix in ["ies", "ing", "ed", "es", "s"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            let base = &w[..w.len() - suffix.len()];
            return match suffix {
                "ies" => format!("{base}y"),
                "es" if !(base.ends_with('s')
                    || base.ends_with('x')
                    || base.ends_with("ch")
                    || base.ends_with("sh")) =>
                {
                    format!("{base}e")
                }
                _ => base.to_string(),
            };
        }
    }
    w.to_string()
}

impl SearchIndex {
    pub fn build(registry: &Registry) -> SearchIndex {
        let mut docs = Vec::new();
        let mut products: HashMap<&'static str, HashSet<String>> = HashMap::new();
        for integration in registry.integrations() {
            let mut words: HashSet<String> = tokenize(integration.name).into_iter().collect();
            words.insert(integration.name.replace('_', ""));
            words.extend(tokenize(integration.display_name));
            for kw in integration.keywords {
                if !kw.contains(' ') {
                    words.extend(tokenize(kw));
                }
            }
            products.insert(integration.name, words);
        }
        for tool in registry.tools() {
            let mut terms: HashMap<String, f64> = HashMap::new();
            let mut add = |text: &str, weight: f64| {
                for t in tokenize(text) {
                    for term in [stem(&t), t] {
                        let e = terms.entry(term).or_insert(0.0);
                        if weight > *e {
                            *e = weight;
                        }
                    }
                }
            };
            add(&tool.name.replace('_', " "), W_NAME);
            add(tool.integration, W_INTEGRATION);
            if let Some(integration) = tool.plugin() {
                add(integration.display_name, W_INTEGRATION);
                for kw in integration.keywords {
                    add(kw, W_KEYWORD * 0.8);
                }
            }
            for kw in tool.keywords {
                add(kw, W_KEYWORD);
            }
            add(tool.description, W_DESCRIPTION);
            if let Some(props) = tool.schema().get("properties").and_then(|p| p.as_object()) {
                for name in props.keys() {
                    add(&name.replace('_', " "), W_PARAM);
                }
            }
            let mut phrases: Vec<Vec<String>> =
                tool.keywords.iter().filter(|k| k.contains(' ')).map(|k| tokenize(k)).collect();
            if let Some(integration) = tool.plugin() {
                phrases.extend(integration.keywords.iter().filter(|k| k.contains(' ')).map(|k| tokenize(k)));
            }
            docs.push(Doc {
                name: tool.name,
                integration: tool.integration,
                description: tool.description,
                terms,
                phrases,
            });
        }
        // A product word only names a product when other integrations do not use it too: "open"
        // (Open-Meteo) or "google" (four integrations) would otherwise tilt every query.
        for (product, words) in products.iter_mut() {
            words.retain(|w| {
                let others: HashSet<&str> = docs
                    .iter()
                    .filter(|d| d.integration != *product && d.terms.contains_key(w))
                    .map(|d| d.integration)
                    .collect();
                others.len() < 2 || w.as_str() == product.replace('_', "")
            });
        }
        let n = docs.len().max(1) as f64;
        let mut df: HashMap<String, usize> = HashMap::new();
        for d in &docs {
            for t in d.terms.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let idf = df.into_iter().map(|(t, f)| (t, (1.0 + (n - f as f64 + 0.5) / (f as f64 + 0.5)).ln())).collect();
        let mut synonyms: HashMap<&'static str, Vec<&'static str>> = HashMap::new();
        for group in SYNONYMS {
            for &w in *group {
                synonyms.entry(w).or_default().extend(group.iter().filter(|&&o| o != w));
            }
        }
        SearchIndex { docs, idf, products, synonyms }
    }

    /// Records that the query implies `product` (when this catalogue has it).
    fn hint(&self, mentioned: &mut HashMap<&'static str, f64>, product: &str, factor: f64) {
        if let Some((p, _)) = self.products.get_key_value(product) {
            let e = mentioned.entry(p).or_insert(factor);
            *e = e.max(factor);
        }
    }

    fn idf(&self, term: &str) -> f64 {
        self.idf.get(term).copied().unwrap_or_else(|| (self.docs.len().max(1) as f64).ln() + 1.0)
    }

    /// Alternatives for a query word: (term, discount).
    fn expand(&self, word: &str) -> Vec<(String, f64)> {
        let mut alts = vec![(word.to_string(), 1.0), (stem(word), 1.0)];
        if let Some(syns) = self.synonyms.get(word).or_else(|| self.synonyms.get(stem(word).as_str())) {
            alts.extend(syns.iter().map(|s| (s.to_string(), SYNONYM)));
        }
        let known = self.idf.contains_key(word) || self.idf.contains_key(&stem(word));
        if !known && word.len() >= 4 {
            let max_d = if word.len() >= 8 { 2 } else { 1 };
            for term in self.idf.keys() {
                if term.len() + 2 < word.len() || term.len() > word.len() + 2 {
                    continue;
                }
                if crate::validate::levenshtein(word, term) <= max_d {
                    alts.push((term.clone(), TYPO));
                }
            }
        }
        alts
    }

    /// Ranks tools for `query`; `connected` tells which integrations the user has connected.
    pub fn search(&self, query: &str, limit: usize, connected: &dyn Fn(&str) -> bool) -> Vec<Hit> {
        let trimmed = query.trim();
        // A query that is a tool's exact name finds that tool first, whatever else matches.
        let exact = trimmed.to_ascii_lowercase();
        // Issue keys (ENG-123) are arguments, not intent: they hint at a product (below) and are
        // not matched as words.
        let keyless: String = trimmed.split_whitespace().filter(|w| !is_issue_key(w)).collect::<Vec<_>>().join(" ");
        let words: Vec<String> = tokenize(&keyless).into_iter().filter(|w| !STOPWORDS.contains(&w.as_str())).collect();
        let all_tokens = tokenize(trimmed);
        let words = if words.is_empty() { tokenize(trimmed) } else { words };
        if words.is_empty() {
            return Vec::new();
        }
        let mut mentioned: HashMap<&'static str, f64> = self
            .products
            .iter()
            .filter(|(_, names)| words.iter().any(|w| names.contains(w)))
            .map(|(p, _)| (*p, 1.0))
            .collect();
        for raw in trimmed.split_whitespace() {
            let raw = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#' || c == '-'));
            // "#general" is a Slack channel; "ENG-123" an issue key (Linear's shape, Jira's too).
            if raw.len() > 1
                && raw.starts_with('#')
                && raw[1..].chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            {
                self.hint(&mut mentioned, "slack", 1.0);
            }
            if is_issue_key(raw) {
                self.hint(&mut mentioned, "linear", 1.0);
                self.hint(&mut mentioned, "jira", 0.97);
            }
        }
        let expansions: Vec<(f64, Vec<(String, f64)>)> = words
            .iter()
            .map(|w| {
                let alts = self.expand(w);
                let weight = alts.iter().map(|(t, _)| self.idf(t)).fold(0.0_f64, f64::max).max(0.5);
                // A word no tool knows (a place, a person, a ticket number) is most likely an
                // argument, not the intent: it counts for little in the denominator.
                let known = alts.iter().any(|(t, _)| self.idf.contains_key(t))
                    || (w.len() >= 4 && self.idf.keys().any(|k| k.starts_with(w.as_str())));
                (if known { weight } else { weight * 0.25 }, alts)
            })
            .collect();
        let total: f64 = expansions.iter().map(|(w, _)| w).sum();
        let matcher = SkimMatcherV2::default();
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .filter_map(|doc| {
                if doc.name == exact {
                    return Some(Hit {
                        name: doc.name,
                        integration: doc.integration,
                        description: doc.description,
                        score: 1.0,
                    });
                }
                let mut got = 0.0;
                for (weight, alts) in &expansions {
                    let best = alts
                        .iter()
                        .filter_map(|(t, discount)| doc.terms.get(t).map(|field| field * discount))
                        .fold(0.0_f64, f64::max);
                    let best = if best == 0.0 {
                        // Prefix match on a longer term ("calend" -> "calendar").
                        alts.first()
                            .filter(|(t, _)| t.len() >= 4)
                            .and_then(|(t, _)| {
                                doc.terms
                                    .iter()
                                    .filter(|(k, _)| k.starts_with(t.as_str()))
                                    .map(|(_, f)| f * PREFIX)
                                    .reduce(f64::max)
                            })
                            .unwrap_or(0.0)
                    } else {
                        best
                    };
                    got += weight * best;
                }
                let mut score = got / total;
                if !mentioned.is_empty() {
                    score *= mentioned.get(doc.integration).copied().unwrap_or(0.6);
                }
                if doc.phrases.iter().any(|p| !p.is_empty() && all_tokens.windows(p.len()).any(|w| w == p.as_slice())) {
                    score += PHRASE_BONUS;
                }
                // A query that spells the tool's name loosely ("hackernews get item") gets a nudge.
                if let Some(f) = matcher.fuzzy_match(doc.name, &trimmed.replace(' ', "_"))
                    && f > 0
                    && trimmed.len() >= 6
                {
                    score += 0.02;
                }
                if connected(doc.integration) {
                    score += 0.005;
                }
                (score >= MIN_SCORE).then(|| Hit {
                    name: doc.name,
                    integration: doc.integration,
                    description: doc.description,
                    score: (score.min(1.0) * 1000.0).round() / 1000.0,
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.name.cmp(b.name)));
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_common_forms() {
        assert_eq!(stem("issues"), "issue");
        assert_eq!(stem("stories"), "story");
        assert_eq!(stem("listing"), "list");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("gas"), "gas");
    }

    #[test]
    fn tokenizes_channels_and_punctuation() {
        assert_eq!(tokenize("Post to #general, please!"), vec!["post", "to", "general", "please"]);
    }
}
