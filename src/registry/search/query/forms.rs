//! How a request's words say what it asks before they are matched: idioms that imply a verb,
//! verbs of two parts, questions, quoted text and passive participles (a part of [`super`]).

use std::borrow::Cow;

use super::super::hash::{Map, Set};
use super::super::lexicon;
use super::Token;

/// The verb the first of [`lexicon::IMPLIED_VERBS`] found in `plain` implies, and whether it
/// stands over the request's own verbs, and the cue; those that stand only where a request has none are
/// passed over when `no_verb` is false. (The cues by their first word, so that most words of a
/// long request are passed over with one look.)
pub(super) fn implied_verb(plain: &[&str], no_verb: bool) -> Option<(&'static str, bool, &'static str)> {
    type Cues = Map<&'static str, Vec<(usize, Vec<&'static str>)>>;
    static BY_FIRST: std::sync::OnceLock<Cues> = std::sync::OnceLock::new();
    let by_first = BY_FIRST.get_or_init(|| {
        let mut m: Cues = Map::default();
        for (i, (cue, _, _)) in lexicon::IMPLIED_VERBS.iter().enumerate() {
            let words: Vec<&str> = cue.split(' ').collect();
            m.entry(words[0]).or_default().push((i, words));
        }
        m
    });
    let mut first: Option<usize> = None;
    for (at, w) in plain.iter().enumerate() {
        for (i, words) in by_first.get(w).into_iter().flatten() {
            if first.is_none_or(|f| *i < f)
                && (no_verb || lexicon::IMPLIED_VERBS[*i].2)
                && plain[at..].starts_with(words)
            {
                first = Some(*i);
            }
        }
    }
    first.map(|i| (lexicon::IMPLIED_VERBS[i].1, lexicon::IMPLIED_VERBS[i].2, lexicon::IMPLIED_VERBS[i].0))
}

/// A verb of two parts ([`lexicon::PHRASAL`]) read as the one verb it means: its first word
/// replaced by that verb, its closing word dropped when a particle. Opaque tokens (addresses,
/// paths) and clause breaks end the search for the closing word.
pub(super) fn phrasal_verbs(tokens: &mut Vec<(Cow<'_, str>, Token)>) {
    // (Not a `for` over the indices: a particle read as nothing leaves the list shorter.)
    static HEADS: std::sync::OnceLock<Set<&'static str>> = std::sync::OnceLock::new();
    let heads = HEADS.get_or_init(|| lexicon::PHRASAL.iter().map(|p| p.0).collect());
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].1.opaque || !heads.contains(tokens[i].0.as_ref()) {
            i += 1;
            continue;
        }
        // The first of the verbs starting with this word that closes in reach.
        let found = lexicon::PHRASAL.iter().filter(|p| p.0 == tokens[i].0.as_ref()).find_map(
            |&(_, ends, gap, verb, particle)| {
                tokens[i + 1..]
                    .iter()
                    .take(gap + 1)
                    .take_while(|(_, t)| !t.opaque && !t.brk)
                    .position(|(w, _)| ends.contains(&w.as_ref()))
                    .map(|k| (k, verb, particle))
            },
        );
        if let Some((k, verb, particle)) = found {
            tokens[i].0 = Cow::Borrowed(verb);
            if particle {
                tokens.remove(i + 1 + k);
            }
        }
        i += 1;
    }
}

/// Which tokens stand in a clause that asks a question (none: the request asks none). A clause
/// (the request's start, or a clause break's) asks one when it starts with an auxiliary ("is",
/// "are", "was", "were", "has", "had", "did", "does"; "do" before a pronoun: "do I have"), with
/// "who" before a past form ("who commented"), or with "which" or "what" and an auxiliary after
/// it ("which tasks did maria finish", "what have people been saying"). It ends at the next clause
/// break or marker ("is the build green, and if not rerun it"; "that PR with the login fix, did
/// anyone approve it yet" asks in its second clause).
pub(super) fn questions(tokens: &[(Cow<'_, str>, Token)]) -> Vec<bool> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < tokens.len() {
        let end = tokens
            .iter()
            .enumerate()
            .skip(start + 1)
            .find(|(_, (w, t))| t.brk || !t.opaque && lexicon::classes(w) & lexicon::CLAUSE_MARKER != 0)
            .map_or(tokens.len(), |(i, _)| i);
        let first = tokens[start].0.as_ref();
        let second = tokens.get(start + 1).filter(|_| start + 1 < end).map(|(w, t)| (w.as_ref(), t.opaque));
        let asks = !tokens[start].1.opaque
            && match first {
                "is" | "are" | "was" | "were" | "has" | "had" | "did" | "does" => true,
                "do" => matches!(second, Some(("i" | "we" | "you" | "they", _))),
                "who" => second.is_some_and(|(w, opaque)| !opaque && w.len() > 4 && w.ends_with("ed")),
                // "which tasks did maria finish", "what did sam write": an auxiliary in the clause.
                "which" | "what" => tokens[start + 1..end]
                    .iter()
                    .any(|(w, _)| matches!(w.as_ref(), "did" | "was" | "were" | "has" | "had" | "have")),
                _ => false,
            };
        if asks {
            out.resize(end, false);
            out[start..end].iter_mut().for_each(|q| *q = true);
        }
        // The next clause starts at a break (a marker continues the clause's reading as before).
        start = tokens.iter().enumerate().skip(end).find(|(_, (_, t))| t.brk).map_or(tokens.len(), |(i, _)| i);
    }
    out
}

/// Which of a request's words (split at whitespace) stand inside double quotes ("...", “...”,
/// „...“, «...»). None when every word with a letter does: a request wholly quoted is still the
/// request.
pub(super) fn quoted_words(query: &str) -> Vec<bool> {
    const OPEN: &[char] = &['"', '\u{201c}', '\u{201e}', '\u{ab}'];
    const CLOSE: &[char] = &['"', '\u{201d}', '\u{201c}', '\u{bb}'];
    if !query.contains(OPEN) {
        return Vec::new();
    }
    let mut inside = false;
    let mut out = Vec::new();
    for raw in query.split_whitespace() {
        let opens = !inside && raw.starts_with(OPEN);
        if opens {
            inside = true;
        }
        out.push(inside);
        let body = raw.trim_end_matches(|c: char| c.is_ascii_punctuation() && c != '"');
        if inside && (body.ends_with(CLOSE) && (!opens || body.chars().count() > 1)) {
            inside = false;
        }
    }
    let outside = query.split_whitespace().zip(&out).any(|(w, q)| !q && w.chars().any(char::is_alphabetic));
    if outside { out } else { Vec::new() }
}

/// The verbs a regular past participle may be of ("shared" -> share, "added" -> add, "dropped"
/// -> drop, "copied" -> copy), in that order of trying; the first [`lexicon::VERBS`] knows is
/// taken.
pub(super) fn participle_verb(word: &str) -> Option<String> {
    let base = word.strip_suffix("ed")?;
    if let Some(stem) = base.strip_suffix('i') {
        return Some(format!("{stem}y")).filter(|v| lexicon::is_verb(v));
    }
    let mut tries = vec![format!("{base}e"), base.to_string()];
    let b = base.as_bytes();
    if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
        tries.push(base[..base.len() - 1].to_string());
    }
    tries.into_iter().find(|v| lexicon::is_verb(v))
}

#[cfg(test)]
mod tests {
    use super::{Cow, Token, participle_verb, phrasal_verbs, quoted_words};

    #[test]
    fn quoted_words_are_told() {
        assert_eq!(quoted_words(r#"post "deploy finished" in #ops"#), [false, true, true, false, false]);
        assert_eq!(
            quoted_words("find the page \u{201c}release checklist\u{201d} now"),
            [false, false, false, true, true, false]
        );
        assert_eq!(quoted_words(r#"reply "ok" on PR 7"#), [false, true, false, false, false]);
        // An apostrophe opens nothing; a request wholly quoted is still the request.
        assert!(quoted_words("what's on sam's plate").is_empty());
        assert!(quoted_words(r#""list open issues""#).is_empty());
        // A quote left open runs to the end.
        assert_eq!(quoted_words(r#"say "hi there"#), [false, true, true]);
    }

    #[test]
    fn participles_are_read_as_their_verbs() {
        let read = |w: &str| participle_verb(w);
        assert_eq!(read("shared").as_deref(), Some("share"));
        assert_eq!(read("added").as_deref(), Some("add"));
        assert_eq!(read("dropped").as_deref(), Some("drop"));
        assert_eq!(read("merged").as_deref(), Some("merge"));
        assert_eq!(read("refunded").as_deref(), Some("refund"));
        assert_eq!(read("emptied").as_deref(), Some("empty"));
        // Not a participle, or of no verb the search reads.
        assert_eq!(read("share"), None);
        assert_eq!(read("bored"), None);
        assert_eq!(read("ed"), None);
    }

    #[test]
    fn two_part_verbs_become_one() {
        let read = |q: &str| {
            let mut tokens: Vec<(Cow<'_, str>, Token)> = Vec::new();
            for (i, w) in q.split(' ').enumerate() {
                let brk = w == "|";
                if !brk {
                    let prev_brk = i > 0 && q.split(' ').nth(i - 1) == Some("|");
                    tokens.push((
                        Cow::Owned(w.to_string()),
                        Token { arg: false, opaque: w.contains('@'), brk: prev_brk },
                    ));
                }
            }
            phrasal_verbs(&mut tokens);
            tokens.iter().map(|(w, _)| w.to_string()).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(read("let the whole team know"), "notify the whole team");
        assert_eq!(read("drop sam a line"), "send sam a line");
        assert_eq!(read("fire off an email"), "send an email");
        // Too far apart, across a clause break or an address: no verb of two parts.
        assert_eq!(read("let the old build of the api know"), "let the old build of the api know");
        assert_eq!(read("drop it | a note"), "drop it a note");
        assert_eq!(read("shoot a@b.c note"), "shoot a@b.c note");
        assert_eq!(read("drop the table"), "drop the table");
    }
}
