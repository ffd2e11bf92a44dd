//! Text handling shared by the index and the query: words, stems, phrases, typo keys.

use super::lexicon;

/// Lower-cased alphanumeric runs: "Post to #general, please!" -> post, to, general, please.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// A light English stemmer, applied alike to the catalogue and the query, so that "issues",
/// "issue"; "created", "create", "creating"; "replies", "reply" meet. Stems are index keys, not
/// words ("create" -> "creat").
pub fn stem(word: &str) -> String {
    let mut w = word.to_string();
    let len = w.chars().count();
    if len <= 3 || !w.is_ascii() {
        return w;
    }
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if let Some(base) = w.strip_suffix("ied").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !(w.ends_with("ss") || w.ends_with("us") || w.ends_with("is")) {
        w.pop();
    } else if let Some(base) = w.strip_suffix("ing").filter(|b| b.len() >= 3) {
        w = undouble(base);
    } else if let Some(base) = w.strip_suffix("ed").filter(|b| b.len() >= 3) {
        w = undouble(base);
    }
    // "assignee", "attendee" -> assign, attend; "owner", "commenter" -> own, comment.
    if let Some(base) = w.strip_suffix("ee").filter(|b| b.len() >= 4) {
        w = base.to_string();
    } else if let Some(base) = w.strip_suffix("er").filter(|b| b.len() >= 4) {
        w = undouble(base);
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// "runn" -> "run", "plann" -> "plan"; "bill", "pass" and "buzz" keep theirs.
fn undouble(base: &str) -> String {
    let b = base.as_bytes();
    let n = b.len();
    if n >= 4 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u') {
        base[..n - 1].to_string()
    } else {
        base.to_string()
    }
}

/// `ENG-123`, `PROJ-7`: an issue key as Linear and Jira write them.
pub fn is_issue_key(word: &str) -> bool {
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

/// Replaces the multi-word phrases of [`lexicon::PHRASES`] by their single canonical token
/// ("pull request" -> "pr", "on call" -> "oncall"). `keep` also keeps the original words (the
/// index does, so "request" alone still finds the tool; the query does not, so that a phrase
/// counts as one idea).
pub fn canonicalize<T: Clone>(tokens: &[(String, T)], keep: bool) -> Vec<(String, T)> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    'outer: while i < tokens.len() {
        for (phrase, canonical) in lexicon::PHRASES {
            let n = phrase.len();
            if i + n <= tokens.len() && phrase.iter().zip(&tokens[i..i + n]).all(|(p, (t, _))| p == t) {
                if keep {
                    out.extend(tokens[i..i + n].iter().cloned());
                }
                out.push((canonical.to_string(), tokens[i].1.clone()));
                i += n;
                continue 'outer;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// The tokens of a catalogue text: words, joined compounds ("on-call" also gives "oncall",
/// "CI/CD" "cicd") and canonical phrase tokens.
pub fn index_tokens(text: &str) -> Vec<String> {
    let mut tokens: Vec<(String, ())> = Vec::new();
    for raw in text.split_whitespace() {
        // Search syntax in descriptions ("author:alice", "name~'jen'"): the key is vocabulary,
        // the example value is not.
        let raw = raw.split([':', '~', '=']).next().unwrap_or(raw);
        let parts = tokenize(raw);
        let compound = parts.len() > 1 && joined_by_dash_or_slash(raw);
        if compound {
            tokens.push((parts.concat(), ()));
        }
        tokens.extend(parts.into_iter().map(|p| (p, ())));
    }
    canonicalize(&tokens, true).into_iter().map(|(t, _)| t).collect()
}

/// Whether a raw word's parts are letters joined by '-' or '/' only ("on-call", "CI/CD").
pub fn joined_by_dash_or_slash(raw: &str) -> bool {
    let core = raw.trim_matches(|c: char| !c.is_alphanumeric());
    core.contains(['-', '/']) && core.chars().all(|c| c.is_alphabetic() || c == '-' || c == '/')
}

/// Every string one deletion away from `word` (and `word` itself): the keys of the typo index.
/// Two words within one edit (insertion, deletion, substitution or transposition) share a key.
pub fn deletion_keys(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut keys = Vec::with_capacity(chars.len() + 1);
    keys.push(word.to_string());
    for i in 0..chars.len() {
        let key: String = chars.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, c)| c).collect();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}
