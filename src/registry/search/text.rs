//! Text handling shared by the index and the query: words, stems, phrases, typo keys.

use super::hash::{Map, Set};
use std::borrow::Cow;
use std::sync::LazyLock;

use super::lexicon;

/// Lower-cased alphanumeric runs: "Post to #general, please!" -> post, to, general, please.
/// Apostrophes go ("what's" -> whats, "customer's" -> customers).
/// The first `max` bytes of `text`, cut back to a character boundary: how every bounded read of
/// an agent's request or a server's text takes its start.
pub fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

pub fn tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    tokenize_into(text, &mut words);
    words
}

/// [`tokenize`] into `words` (cleared first): a caller that reads many texts one at a time keeps
/// one list for them all.
pub fn tokenize_into(text: &str, words: &mut Vec<String>) {
    words.clear();
    // Most words are ASCII: split at what is not a letter or digit, lower-case in place (what
    // `tokenize_any` gives them, faster). Most of a request's words are one such run.
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric()) {
        words.push(text.to_ascii_lowercase());
    } else if text.is_ascii() && !text.contains('\'') {
        words.extend(
            text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_ascii_lowercase),
        );
    } else {
        words.extend(tokenize_any(text));
    }
}

/// [`tokenize`] of any text.
fn tokenize_any(text: &str) -> Vec<String> {
    // Chinese and Japanese are written without spaces: a run of their script is a word of its
    // own beside the Latin names in it ("jira看板上的冲刺" -> "jira", "看板上的冲刺").
    let split = |text: &str| -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut cjk = false;
        for c in text.chars() {
            if !c.is_alphanumeric() || (!word.is_empty() && is_cjk(c) != cjk) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word).to_lowercase());
                }
                if !c.is_alphanumeric() {
                    continue;
                }
            }
            cjk = is_cjk(c);
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word.to_lowercase());
        }
        words
    };
    if text.contains(['\'', '\u{2019}']) { split(&text.replace(['\'', '\u{2019}'], "")) } else { split(text) }
}

/// Han ideographs, kana and Hangul: scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0xFF66..=0xFF9F)
}

/// A light English stemmer, applied alike to the catalogue and the query, so that "issues",
/// "issue"; "created", "create", "creating"; "replies", "reply" meet. Stems are index keys, not
/// words ("create" -> "creat").
pub fn stem(word: &str) -> String {
    stem_str(word).into_owned()
}

/// [`stem`] of a word the caller owns: cut in place where the stem is a prefix of it.
pub fn stem_owned(mut word: String) -> String {
    let cut = match stem_str(&word) {
        Cow::Borrowed(stem) => stem.len(),
        Cow::Owned(stem) => return stem,
    };
    word.truncate(cut);
    word
}

/// [`stem`], borrowed from the word where the stem is a prefix of it (all but "-ies", "-ied"):
/// a query's words are stemmed to be looked up, and most lookups need no new string.
pub fn stem_str(word: &str) -> Cow<'_, str> {
    // (An ASCII word's letters are its bytes: every cut below is at a letter. The endings are
    // matched as byte patterns, which compile to a few comparisons: stemming is asked of most
    // words of every request.)
    if word.len() <= 3 || !word.is_ascii() {
        return Cow::Borrowed(word);
    }
    let n = word.len();
    let mut w = match word.as_bytes() {
        // "-ies", "-ied" on two letters or more -> "-y" (ending in "y", the stem has none of the
        // endings below).
        [.., b'i', b'e', b's' | b'd'] if n >= 5 => return Cow::Owned(format!("{}y", &word[..n - 3])),
        [.., b's', b's', b'e', b's'] => &word[..n - 2],
        [.., b's' | b'u' | b'i', b's'] => word,
        [.., b's'] => &word[..n - 1],
        [.., b'i', b'n', b'g'] if n >= 6 => undouble(&word[..n - 3]),
        [.., b'e', b'd'] if n >= 5 => undouble(&word[..n - 2]),
        _ => word,
    };
    // "assignee", "attendee" -> assign, attend; "owner", "commenter" -> own, comment.
    let m = w.len();
    match w.as_bytes() {
        [.., b'e', b'e'] if m >= 6 => w = &w[..m - 2],
        [.., b'e', b'r'] if m >= 6 => w = undouble(&w[..m - 2]),
        _ => {}
    }
    if w.len() > 3 && w.as_bytes().last() == Some(&b'e') {
        w = &w[..w.len() - 1];
    }
    Cow::Borrowed(w)
}

/// "runn" -> "run", "plann" -> "plan"; "bill", "pass" and "buzz" keep theirs.
fn undouble(base: &str) -> &str {
    let b = base.as_bytes();
    let n = b.len();
    if n >= 4 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u') {
        &base[..n - 1]
    } else {
        base
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

/// A token's text as [`canonicalize`] reads it: an owned string (the index's) or one that may
/// borrow the request (the query's, most of whose words are already lower-case).
pub trait TokenText: AsRef<str> + Default {
    /// A canonical token of the lexicon's.
    fn lexicon(word: &'static str) -> Self;
}

impl TokenText for String {
    fn lexicon(word: &'static str) -> String {
        word.to_string()
    }
}

impl TokenText for Cow<'_, str> {
    fn lexicon(word: &'static str) -> Self {
        Cow::Borrowed(word)
    }
}

/// Replaces the multi-word phrases of [`lexicon::PHRASES`] by their single canonical token
/// ("pull request" -> "pr", "on call" -> "oncall"). `keep` also keeps the original words (the
/// index does, so "request" alone still finds the tool; the query does not, so that a phrase
/// counts as one idea).
pub fn canonicalize<S: TokenText, T: Clone>(mut tokens: Vec<(S, T)>, keep: bool) -> Vec<(S, T)> {
    // The phrases by their first word, longest first.
    static BY_FIRST: LazyLock<Map<&str, Vec<lexicon::Phrase>>> = LazyLock::new(|| {
        let mut map: Map<&str, Vec<lexicon::Phrase>> = Map::default();
        for &(phrase, canonical) in lexicon::PHRASES {
            map.entry(phrase[0]).or_default().push((phrase, canonical));
        }
        for list in map.values_mut() {
            list.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        }
        map
    });
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let found = BY_FIRST.get(tokens[i].0.as_ref()).and_then(|list| {
            list.iter().find(|(phrase, _)| {
                i + phrase.len() <= tokens.len() && phrase.iter().zip(&tokens[i..]).all(|(p, (t, _))| *p == t.as_ref())
            })
        });
        // Matching looks ahead only: a token behind `i` is moved out, not cloned.
        if let Some(&(phrase, canonical)) = found {
            let tag = tokens[i].1.clone();
            if keep {
                out.extend(tokens[i..i + phrase.len()].iter_mut().map(|(w, t)| (std::mem::take(w), t.clone())));
            }
            out.push((S::lexicon(canonical), tag));
            i += phrase.len();
        } else {
            out.push((std::mem::take(&mut tokens[i].0), tokens[i].1.clone()));
            i += 1;
        }
    }
    out
}

/// Like [`canonicalize`] (without keeping), for a query: a two-word phrase may also be
/// misspelt by one edit, judged on the whole phrase ("pul request" -> `pr`).
pub fn canonicalize_query<S: TokenText, T: Clone>(mut tokens: Vec<(S, T)>) -> Vec<(S, T)> {
    // The two-word phrases, written together ("pullrequest"), long enough to judge a typo on.
    static PAIRS: LazyLock<Vec<(String, [&str; 2])>> = LazyLock::new(|| {
        lexicon::PHRASES.iter().filter(|(p, _)| p.len() == 2).map(|(p, _)| (p.concat(), [p[0], p[1]])).collect()
    });
    // The pairs by (length, first letter) and by (length, last letter), in PAIRS' order: a word
    // one edit from a pair of seven letters or more shares its first letter with it or its last
    // (an edit at the start leaves the end).
    static BY_END: LazyLock<Map<(usize, char, bool), Vec<usize>>> = LazyLock::new(|| {
        let mut by_end: Map<(usize, char, bool), Vec<usize>> = Map::default();
        for (i, (target, _)) in PAIRS.iter().enumerate() {
            for (c, last) in [(target.chars().next(), false), (target.chars().next_back(), true)] {
                if let Some(c) = c {
                    by_end.entry((target.len(), c, last)).or_default().push(i);
                }
            }
        }
        by_end
    });
    static JOINED: LazyLock<Set<&'static str>> = LazyLock::new(|| PAIRS.iter().map(|(t, _)| t.as_str()).collect());
    let mut fixed: Vec<(S, T)> = Vec::with_capacity(tokens.len());
    let mut joined = String::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(next) = tokens.get(i + 1) {
            joined.clear();
            joined.push_str(tokens[i].0.as_ref());
            joined.push_str(next.0.as_ref());
            let exact = JOINED.contains(joined.as_str());
            // The first pair in PAIRS' order, eight letters or more, that is a plausible typo of
            // the joined word (none can be when the joined word is shorter than seven).
            let near = if exact || joined.len() + 1 < 8 {
                None
            } else {
                let (first, last) = (joined.chars().next(), joined.chars().next_back());
                let bucket = |l: usize, c: Option<char>, end: bool| {
                    c.and_then(|c| BY_END.get(&(l, c, end))).map_or(&[][..], Vec::as_slice)
                };
                [joined.len() - 1, joined.len(), joined.len() + 1]
                    .into_iter()
                    .filter(|&l| l >= 8)
                    .flat_map(|l| bucket(l, first, false).iter().chain(bucket(l, last, true)))
                    .copied()
                    .filter(|&p| plausible_typo(&joined, &PAIRS[p].0))
                    .min()
            };
            if !exact && let Some((_, [a, b])) = near.map(|p| &PAIRS[p]) {
                fixed.push((S::lexicon(a), tokens[i].1.clone()));
                fixed.push((S::lexicon(b), next.1.clone()));
                i += 2;
                continue;
            }
        }
        fixed.push((std::mem::take(&mut tokens[i].0), tokens[i].1.clone()));
        i += 1;
    }
    canonicalize(fixed, false)
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
    canonicalize(tokens, true).into_iter().map(|(t, _)| t).collect()
}

/// Whether a raw word's parts are letters joined by '-' or '/' only ("on-call", "CI/CD").
pub fn joined_by_dash_or_slash(raw: &str) -> bool {
    let core = raw.trim_matches(|c: char| !c.is_alphanumeric());
    core.contains(['-', '/']) && core.chars().all(|c| c.is_alphabetic() || c == '-' || c == '/')
}

/// Whether `word` may be a misspelling of `term`: one edit apart, and for words of four letters
/// or fewer, not a substitution ("wash" is not "cash"), only a swap or a missing/extra letter.
pub fn plausible_typo(word: &str, term: &str) -> bool {
    if word == term || word.len().abs_diff(term.len()) > 1 || !within_one_edit(word, term) {
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

/// Whether two words are at most one edit apart (a letter changed, added, dropped, or two
/// neighbouring letters swapped): `crate::validate::levenshtein(a, b) <= 1`, without its table
/// (typo matching asks this of hundreds of verbs per query word).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    fn within<T: PartialEq>(a: &[T], b: &[T]) -> bool {
        let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        if long.len() - short.len() > 1 {
            return false;
        }
        let Some(i) = long.iter().zip(short).position(|(x, y)| x != y) else {
            // Equal, or one letter added at the end.
            return true;
        };
        if long.len() != short.len() {
            return long[i + 1..] == short[i..];
        }
        long[i + 1..] == short[i + 1..]
            || (i + 1 < long.len()
                && long[i] == short[i + 1]
                && long[i + 1] == short[i]
                && long[i + 2..] == short[i + 2..])
    }
    if a.is_ascii() && b.is_ascii() {
        return within(a.as_bytes(), b.as_bytes());
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    within(&a, &b)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick check says what the full edit distance says, for every pair of short words over
    /// a small alphabet (every kind of edit, repeated letters, non-ASCII) and for real words.
    #[test]
    fn one_edit_check_agrees_with_the_edit_distance() {
        let alphabet = ['a', 'b', 'é'];
        let mut words = vec![String::new()];
        for len in 1..=4 {
            let mut next = Vec::new();
            for w in words.iter().filter(|w| w.chars().count() == len - 1) {
                for c in alphabet {
                    next.push(format!("{w}{c}"));
                }
            }
            words.extend(next);
        }
        for a in &words {
            for b in &words {
                assert_eq!(within_one_edit(a, b), crate::validate::levenshtein(a, b) <= 1, "{a:?} {b:?}");
            }
        }
        for (a, b) in [("calender", "calendar"), ("jria", "jira"), ("opne", "open"), ("sned", "send"), ("pul", "pull")]
        {
            assert!(within_one_edit(a, b), "{a} {b}");
        }
        assert!(!within_one_edit("jira", "jazz"));
    }

    /// The stemmer as it was written first, a new string at each step: [`stem_str`] gives what
    /// it gives.
    fn stem_as_first_written(word: &str) -> String {
        fn undouble(base: &str) -> String {
            let b = base.as_bytes();
            let n = b.len();
            if n >= 4
                && b[n - 1] == b[n - 2]
                && !matches!(b[n - 1], b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u')
            {
                base[..n - 1].to_string()
            } else {
                base.to_string()
            }
        }
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

    /// Every ending the stemmer knows, on short and long stems, doubled letters and not, and
    /// the lexicon's words: the borrowed stem is the first one's.
    #[test]
    fn stem_str_stems_as_first_written() {
        let bases = ["", "a", "ab", "abc", "t", "ti", "run", "runn", "plan", "bill", "pass", "buzz", "agr", "assign"];
        let bases = bases.iter().chain(&["own", "comment", "stor", "repl", "bo", "statu", "gas", "é", "caf", "ss"]);
        let endings = ["", "s", "es", "ies", "ied", "sses", "ss", "us", "is", "ing", "ed", "ee", "er", "e", "y"];
        let endings = endings.iter().chain(&["ers", "ees", "eed", "ering", "erred", "ning", "ned", "ee's", "é", "ers"]);
        let mut words: Vec<String> = Vec::new();
        for b in bases {
            for e in endings.clone() {
                for f in ["", "s", "ed", "ing", "er", "e"] {
                    words.push(format!("{b}{e}{f}"));
                }
            }
        }
        words.extend(lexicon::STOPWORDS.iter().map(|w| w.to_string()));
        words.extend(
            lexicon::SYNONYMS.iter().flat_map(|(w, s)| std::iter::once(*w).chain(s.iter().copied())).map(String::from),
        );
        words.extend(lexicon::VERBS.iter().flat_map(|(w, _)| w.iter()).map(|w| w.to_string()));
        for w in &words {
            assert_eq!(stem_str(w), stem_as_first_written(w), "{w:?}");
            assert_eq!(stem(w), stem_as_first_written(w), "{w:?}");
            assert_eq!(stem_owned(w.clone()), stem_as_first_written(w), "{w:?}");
        }
        assert!(words.len() > 2000, "{} words", words.len());
    }

    /// The ASCII path of `tokenize` splits and lower-cases as the path for any text does.
    #[test]
    fn ascii_text_is_split_as_any_text() {
        for text in [
            "Post to #general, please!",
            "list_open PRs in ENG-123 (v2.0)",
            "snake_case camelCase  trailing-- dots... 3.5km",
            "a",
            "",
            "!!!",
            "what's the customer's order", // apostrophes: the general path
            "Word",
            "v2",
            "ENG",
        ] {
            assert_eq!(tokenize(text), tokenize_any(text), "{text:?}");
        }
    }

    /// A misspelt two-word phrase is found through the pairs that share its first or its last
    /// letter as it was by trying every pair: the same pair for every kind of edit, at the start,
    /// inside and at the end (the first letter changed, dropped or swapped; the last one too).
    #[test]
    fn a_misspelt_phrase_is_found_as_by_trying_every_phrase() {
        let pairs: Vec<(String, [&str; 2])> =
            lexicon::PHRASES.iter().filter(|(p, _)| p.len() == 2).map(|(p, _)| (p.concat(), [p[0], p[1]])).collect();
        // Every pair in order, as the query reads it: the first one eight letters or more that the
        // joined word may be a misspelling of, unless it is one exactly.
        let every = |joined: &str| {
            if pairs.iter().any(|(t, _)| t == joined) {
                return None;
            }
            pairs.iter().find(|(t, _)| t.len() >= 8 && plausible_typo(joined, t)).map(|(_, p)| *p)
        };
        let mut checked = 0;
        for (_, [a, b]) in
            pairs.iter().filter(|(t, [a, b])| t.len() >= 7 && t.is_ascii() && a.len() >= 2 && b.len() >= 2)
        {
            let (a, b) = (a.to_string(), b.to_string());
            let mut typos: Vec<(String, String)> = Vec::new();
            let first = |s: &str, c: char| format!("{c}{}", &s[1..]);
            let last = |s: &str, c: char| format!("{}{c}", &s[..s.len() - 1]);
            typos.push((first(&a, 'q'), b.clone()));
            typos.push((a[1..].to_string(), b.clone()));
            typos.push((format!("{}{}{}", &a[1..2], &a[..1], &a[2..]), b.clone()));
            typos.push((a.clone(), last(&b, 'q')));
            typos.push((a.clone(), b[..b.len() - 1].to_string()));
            typos.push((a.clone(), format!("{b}s")));
            typos.push((a[..a.len() - 1].to_string(), b.clone()));
            typos.push((a.clone(), b.clone()));
            for (x, y) in typos.into_iter().filter(|(x, y)| !x.is_empty() && !y.is_empty()) {
                let joined = format!("{x}{y}");
                let read: Vec<String> =
                    canonicalize_query(vec![(x.clone(), ()), (y.clone(), ())]).into_iter().map(|(w, _)| w).collect();
                let want: Vec<String> = match every(&joined) {
                    Some([p, q]) => canonicalize(vec![(p.to_string(), ()), (q.to_string(), ())], false),
                    None => canonicalize(vec![(x.clone(), ()), (y.clone(), ())], false),
                }
                .into_iter()
                .map(|(w, _)| w)
                .collect();
                assert_eq!(read, want, "{x} {y}");
                checked += 1;
            }
        }
        assert!(checked >= 40, "{checked} typos checked");
    }
}
