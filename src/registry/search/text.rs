//! Text handling shared by the index and the query: words, stems, phrases, typo keys.

use super::lexicon;

/// Lower-cased alphanumeric runs: "Post to #general, please!" -> post, to, general, please.
/// Apostrophes go ("what's" -> whats, "customer's" -> customers).
pub fn tokenize(text: &str) -> Vec<String> {
    text.replace(['\'', '\u{2019}'], "")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
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

/// Like [`canonicalize`] (without keeping), for a query: a two-word phrase may also be
/// misspelt by one edit, judged on the whole phrase ("pul request" -> `pr`).
pub fn canonicalize_query<T: Clone>(tokens: &[(String, T)]) -> Vec<(String, T)> {
    let mut fixed: Vec<(String, T)> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if i + 1 < tokens.len() {
            let joined = format!("{}{}", tokens[i].0, tokens[i + 1].0);
            let exact = lexicon::PHRASES.iter().any(|(p, _)| p.len() == 2 && p.concat() == joined);
            let phrase = lexicon::PHRASES.iter().filter(|_| !exact).find(|(p, _)| {
                p.len() == 2 && {
                    let target = p.concat();
                    target.len() >= 8 && plausible_typo(&joined, &target)
                }
            });
            if let Some((p, _)) = phrase {
                fixed.push((p[0].to_string(), tokens[i].1.clone()));
                fixed.push((p[1].to_string(), tokens[i + 1].1.clone()));
                i += 2;
                continue;
            }
        }
        fixed.push(tokens[i].clone());
        i += 1;
    }
    canonicalize(&fixed, false)
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

/// Whether `word` may be a misspelling of `term`: one edit apart, and for words of four letters
/// or fewer, not a substitution ("wash" is not "cash"), only a swap or a missing/extra letter.
pub fn plausible_typo(word: &str, term: &str) -> bool {
    if word == term || crate::validate::levenshtein(word, term) > 1 {
        return false;
    }
    let (lw, lt) = (word.chars().count(), term.chars().count());
    if lw >= 5 && lt >= 5 {
        return true;
    }
    if lw != lt {
        return lw >= 4;
    }
    let mut a: Vec<char> = word.chars().collect();
    let mut b: Vec<char> = term.chars().collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// Whether `word` is `term` with two neighbouring letters swapped.
pub fn is_transposition(word: &str, term: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (word.chars().collect(), term.chars().collect());
    if a.len() != b.len() {
        return false;
    }
    let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    diff.len() == 2 && diff[1] == diff[0] + 1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]]
}

/// A description's quoted examples ("...", '...', `...`) and the rest of its prose.
pub fn split_examples(text: &str) -> (String, String) {
    let (mut examples, mut prose) = (String::new(), String::new());
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                examples.push(' ');
            }
            Some(_) => examples.push(c),
            // An apostrophe inside a word ("Slack's") opens nothing.
            None if (c == '"' || c == '`' || c == '\'') && !prev.is_alphanumeric() => quote = Some(c),
            None => prose.push(c),
        }
        prev = c;
    }
    (examples, prose)
}
