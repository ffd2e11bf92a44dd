//! A request that is not written in English, read as English words.
//!
//! `model/glossary-<lang>.z` (zlib-compressed text, built by `scripts/build-glossary.py` from open wordnets: Princeton
//! WordNet 3.0, the Open Multilingual Wordnet's Wiktionary, French, Portuguese and Chinese
//! wordnets and the Spanish MCR 3.0; licences in `model/GLOSSARY-LICENSES.md`) gives each
//! Spanish, German, French, Portuguese, Japanese and Chinese lemma up to three English words.
//! [`gloss`] turns a request into those words, so that the English tiers, which carry over to
//! tools nobody here wrote, rank it: "envía el informe por correo" reads as "send report mail".
//!
//! - Spanish, German, French and Portuguese words meet the glossary as they are, or else at
//!   their Snowball stem ("envía" and "enviar" both at `envi`). The request's language is the
//!   one under which most of its words are found; only that language's entries are read, so a
//!   French "envie" (envy) does not translate a Portuguese "envie" (send).
//! - Chinese and Japanese runs are read by the longest entry at each position; kana mark
//!   Japanese.
//! - Function words of these languages are dropped; words with no entry (product names, ids,
//!   English words) are kept as written.
//!
//! Each language's part is inflated and its lookup table (hashes of entries, sorted) made on the
//! first request that needs it, never for an English one; a language that cannot be the
//! request's is not read.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use forms::{
    PLURAL_FR, compound, determiners, eigen, endings, english_plural, infinitives, noun, noun_sense, participle,
    participle_of, passive, plural_noun,
};
use function_words::{LIGHT, SEPARABLE, question, stop_words};

/// The glossary, one zlib-compressed part per language (`scripts/build-glossary.py`), in the
/// order of [`Lang`].
static COMPRESSED: [&[u8]; 6] = [
    include_bytes!("model/glossary-es.z"),
    include_bytes!("model/glossary-de.z"),
    include_bytes!("model/glossary-fr.z"),
    include_bytes!("model/glossary-pt.z"),
    include_bytes!("model/glossary-ja.z"),
    include_bytes!("model/glossary-zh.z"),
];
/// What a part may inflate to at most (the largest is about 1.3 MB).
const MAX_INFLATED: usize = 8 << 20;

/// At most this much of a request is read (as the other tiers).
const MAX_TEXT: usize = 4096;
/// At most this many characters in a Chinese or Japanese entry.
const MAX_CJK: usize = 6;
/// The fewest characters of an entry read inside a katakana word that entries do not cover whole.
const MIN_UNTILED: usize = 4;
/// At most this many characters in a katakana entry (a loanword).
const MAX_KATAKANA: usize = 16;
/// At most this many characters in a German compound that is split.
const MAX_COMPOUND: usize = 32;
/// The most words in a phrase of the glossary.
const MAX_PHRASE: usize = 3;
/// English words given for one foreign word.
const PER_WORD: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Es,
    De,
    Fr,
    Pt,
    Ja,
    Zh,
}

const LATIN: [Lang; 4] = [Lang::Es, Lang::De, Lang::Fr, Lang::Pt];

impl Lang {
    #[cfg(test)]
    fn code(self) -> &'static str {
        match self {
            Lang::Es => "es",
            Lang::De => "de",
            Lang::Fr => "fr",
            Lang::Pt => "pt",
            Lang::Ja => "ja",
            Lang::Zh => "zh",
        }
    }

    fn stemmer(self) -> Option<Stemmer> {
        Some(Stemmer::create(match self {
            Lang::Es => Algorithm::Spanish,
            Lang::De => Algorithm::German,
            Lang::Fr => Algorithm::French,
            Lang::Pt => Algorithm::Portuguese,
            Lang::Ja | Lang::Zh => return None,
        }))
    }
}

/// One language's glossary, inflated on the first request that needs it: its text (lines
/// `<lemma>\t<english> ...`, sorted) and its lookup table (hash of a key, the entry's byte
/// offset in the text), sorted. Each entry is filed under its lemma and, for the Latin
/// languages, under its Snowball stem (but a noun entry, `=<lemma>`, only under itself).
struct Part {
    text: String,
    keys: Vec<(u64, u32)>,
}

fn hash(key: &str) -> u64 {
    // FNV-1a: stable, and two entries sharing a hash only cost a wrong-but-harmless gloss.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

static PARTS: [OnceLock<Part>; 6] = [const { OnceLock::new() }; 6];

fn part(lang: Lang) -> &'static Part {
    PARTS[lang as usize].get_or_init(|| {
        let text = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(COMPRESSED[lang as usize], MAX_INFLATED)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .unwrap_or_default();
        let stemmer = lang.stemmer();
        let mut keys = Vec::with_capacity(text.len() / 12);
        let mut offset = 0usize;
        for line in text.split_inclusive('\n') {
            let at = offset as u32;
            offset += line.len();
            let Some((lemma, _)) = line.split_once('\t') else { continue };
            let exact = hash(lemma);
            keys.push((exact, at));
            if let Some(stemmer) = stemmer.as_ref().filter(|_| !lemma.starts_with('=')) {
                let h = hash(&stemmer.stem(lemma));
                if h != exact {
                    keys.push((h, at));
                }
            }
        }
        keys.sort_unstable();
        keys.shrink_to_fit();
        Part { text, keys }
    })
}

/// Heap bytes of the parts inflated so far (text and lookup table).
pub fn heap_bytes() -> usize {
    PARTS
        .iter()
        .filter_map(OnceLock::get)
        .map(|p| p.text.capacity() + p.keys.capacity() * std::mem::size_of::<(u64, u32)>())
        .sum()
}

/// An entry's lemma and English words.
fn entry(lang: Lang, at: u32) -> (&'static str, &'static str) {
    let line = part(lang).text[at as usize..].split('\n').next().unwrap_or_default();
    line.split_once('\t').unwrap_or((line, ""))
}

/// The entries filed under `key` (their byte offsets).
fn find(lang: Lang, key: &str) -> impl Iterator<Item = u32> {
    let keys = &part(lang).keys;
    let h = hash(key);
    let start = keys.partition_point(|(k, _)| *k < h);
    keys[start..].iter().take_while(move |(k, _)| *k == h).map(|(_, at)| *at)
}

/// The English words of the entry whose lemma is `word`.
fn exact(lang: Lang, word: &str) -> Option<&'static str> {
    find(lang, word).map(|at| entry(lang, at)).find(|(lemma, _)| *lemma == word).map(|(_, english)| english)
}

/// The English words for a Latin-script word in `lang`: the word itself, else the entry sharing
/// its stem whose lemma shares the longest beginning with the word.
fn latin(lang: Lang, word: &str) -> Option<&'static str> {
    if let Some(english) = exact(lang, word) {
        return Some(english);
    }
    // A verb as requests write it ("abre", "sende", "crée", "envie") is found at its
    // infinitive more surely than at a stem it may share with nouns ("sender", "envio").
    if let Some(english) = infinitives(lang, word).find_map(|w| exact(lang, &w)) {
        return Some(english);
    }
    let stem = lang.stemmer()?.stem(word).into_owned();
    let common = |a: &str| a.chars().zip(word.chars()).take_while(|(x, y)| x == y).count();
    find(lang, &stem)
        .map(|at| entry(lang, at))
        .max_by_key(|(lemma, _)| (common(lemma), std::cmp::Reverse(lemma.len())))
        .map(|(_, english)| english)
}

/// The longest entry starting at `chars[i..]`: its English words and its length in characters.
fn cjk(lang: Lang, chars: &[char], i: usize) -> Option<(&'static str, usize)> {
    let mut key = String::new();
    let mut best = None;
    // A loanword is read whole, however long its katakana ("コンピューティング").
    let katakana = chars[i..].iter().take(MAX_KATAKANA).take_while(|c| is_katakana(**c)).count();
    for (n, c) in chars[i..].iter().take(MAX_CJK.max(katakana)).enumerate() {
        if n >= MAX_CJK && n >= katakana {
            break;
        }
        key.push(*c);
        if let Some(english) = exact(lang, &key) {
            best = Some((english, n + 1));
        }
    }
    // A Japanese entry that ends with a particle ("今月の" instant, as in "the 5th instant") where
    // the word before it is one: the word ("今月", this month), the particle read apart.
    if let Some((_, n)) = best
        && lang == Lang::Ja
        && n >= 3
        && matches!(chars[i + n - 1], 'の' | 'を' | 'に' | 'が' | 'は' | 'で' | 'と' | 'へ' | 'も')
    {
        let shorter: String = chars[i..i + n - 1].iter().collect();
        if let Some(english) = exact(lang, &shorter) {
            best = Some((english, n - 1));
        }
    }
    // An ichidan verb's stem that is also a noun ("調べ" tune) before its ending ("調べて"): the
    // verb ("調べる", look into).
    let stem = best.filter(|(_, n)| {
        lang == Lang::Ja && is_kana(chars[i + n - 1]) && matches!(chars.get(i + n), Some('て' | 'た' | 'ま' | 'な'))
    });
    if let Some((_, n)) = stem {
        let verb: String = chars[i..i + n].iter().chain(['る'].iter()).collect();
        if let Some(english) = exact(lang, &verb) {
            return Some((english, n));
        }
    }
    if lang == Lang::Ja && best.is_none_or(|(_, n)| n < 2) {
        // A verb written with its ending in kana ("探して", "送って", "丸めて") is found at
        // its dictionary form: the kanji, up to two kana of its stem, then a verb ending.
        let kanji = chars[i..].iter().take(2).take_while(|c| !is_kana(**c)).count();
        for k in (1..=kanji).rev() {
            for j in (0..=2).rev() {
                let stem = &chars[i..(i + k + j).min(chars.len())];
                if stem.len() < k + j || !stem[k..].iter().all(|c| is_kana(*c)) {
                    continue;
                }
                let stem: String = stem.iter().collect();
                for ending in endings(chars.get(i + k + j).copied()) {
                    if let Some(english) = exact(lang, &format!("{stem}{ending}")) {
                        return Some((english, k + j));
                    }
                }
            }
        }
    }
    best
}

fn is_cjk(c: char) -> bool {
    matches!(u32::from(c), 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0x31f0..=0x31ff)
}

fn is_katakana(c: char) -> bool {
    matches!(u32::from(c), 0x30a0..=0x30ff | 0x31f0..=0x31ff)
}

fn is_kana(c: char) -> bool {
    matches!(u32::from(c), 0x3040..=0x30ff | 0x31f0..=0x31ff)
}

/// A piece of the request: a word of letters and digits (with the characters that join names:
/// `#`, `@`, `.`, `-`, `_`, `/`), or a run of Chinese or Japanese characters.
enum Piece<'a> {
    Word(&'a str),
    Cjk(Vec<char>),
}

fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut run: Vec<char> = Vec::new();
    let joins = |c: char| c.is_alphanumeric() || matches!(c, '#' | '@' | '.' | '-' | '_' | '/' | ':' | '\'');
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                out.push(Piece::Word(&text[s..i]));
            }
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            out.push(Piece::Cjk(std::mem::take(&mut run)));
        }
        if joins(c) && !c.is_whitespace() && !matches!(c, '\u{3000}'..='\u{303f}' | '\u{ff00}'..='\u{ffef}') {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push(Piece::Word(&text[s..i]));
        }
    }
    if let Some(s) = start {
        out.push(Piece::Word(&text[s..]));
    }
    if !run.is_empty() {
        out.push(Piece::Cjk(run));
    }
    out
}

/// English function words, to tell a text in English from one in the glossary's languages.
const ENGLISH_FUNCTION: &[&str] = &[
    "the", "of", "a", "an", "to", "and", "in", "for", "is", "are", "with", "on", "by", "from", "this", "that", "it",
    "or", "as", "be", "at", "if", "not", "all", "which", "returns", "your", "you",
];

/// Whether a text (a tool's description) is written in one of the glossary's languages: a third
/// or more of its letters Chinese or Japanese; or, counting the first 4 KiB's words, at least
/// two function words of Spanish, German, French or Portuguese and more than twice as many as
/// English ones.
pub fn written_in_glossary_language(text: &str) -> bool {
    let text = super::text::prefix(text, MAX_TEXT);
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    let cjk = text.chars().filter(|c| is_cjk(*c)).count();
    if cjk * 3 >= letters && cjk >= 2 {
        return true;
    }
    // Function words are short: longer words are not looked at (nor lower-cased).
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty() && w.len() <= 10)
        .map(str::to_lowercase)
        .collect();
    let english = words.iter().filter(|w| ENGLISH_FUNCTION.contains(&w.as_str())).count();
    LATIN.iter().any(|l| {
        let foreign = words.iter().filter(|w| stop_words(*l).contains(&w.as_str())).count();
        foreign >= 2 && foreign > 2 * english
    })
}

/// The request read as English words, or `None` when the glossary gives none of its words.
/// Words `keep` says are names (of a product or server the index knows: Spanish "jira" is an
/// outing, French "notion" a notion) are kept as written.
pub fn gloss(query: &str, keep: &dyn Fn(&str) -> bool) -> Option<String> {
    let text = super::text::prefix(query, MAX_TEXT);
    let pieces = pieces(text);
    // Latin-script words as (lower-cased, as written, capitalised after the first word); a
    // hyphenated or elided word of letters ("Notion-Seite", "d'argent", "est-il") is read as
    // its parts, an id ("PROJ-42") as it is.
    let mut first = true;
    let mut words_of = |raw: &str| -> Vec<(String, String, bool)> {
        let capital = !first && raw.chars().next().is_some_and(char::is_uppercase);
        first = false;
        // A handle or a channel ("@maria", "#general") is a name: kept whole, as written.
        let trimmed = if raw.starts_with(['@', '#']) {
            raw.trim_end_matches(|c: char| !c.is_alphanumeric())
        } else {
            raw.trim_matches(|c: char| !c.is_alphanumeric())
        };
        let parts: Vec<&str> = trimmed.split(['-', '\'', '’']).collect();
        if parts.len() > 1 && parts.iter().all(|p| p.chars().all(char::is_alphabetic)) {
            // A capitalised part after a hyphen is a noun even at the start ("Asana-Projekte").
            let upper = |p: &str| p.chars().next().is_some_and(char::is_uppercase);
            parts
                .iter()
                .filter(|p| !p.is_empty())
                .enumerate()
                .map(|(j, p)| (p.to_lowercase(), p.to_string(), capital || (j > 0 && upper(p))))
                .collect()
        } else if parts.len() > 1
            && parts[0].chars().all(|c| c.is_ascii_digit())
            && parts[1..].iter().all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic))
        {
            // A number joined to words ("5-Tage-Wettervorhersage", "10-Tage"): the number, then
            // the words (capitalised as written).
            parts
                .iter()
                .filter(|p| !p.is_empty())
                .map(|p| (p.to_lowercase(), p.to_string(), p.chars().next().is_some_and(char::is_uppercase)))
                .collect()
        } else if trimmed.is_empty() {
            Vec::new()
        } else {
            vec![(trimmed.to_lowercase(), raw.to_string(), capital)]
        }
    };
    let words_by_piece: Vec<Option<Vec<(String, String, bool)>>> = pieces
        .iter()
        .map(|p| match p {
            Piece::Word(w) => Some(words_of(w)),
            Piece::Cjk(_) => None,
        })
        .collect();
    let unspaced = pieces.iter().any(|p| matches!(p, Piece::Cjk(_)));
    // The language: Japanese when kana are written, Chinese for other ideographs, else the Latin
    // language whose function words and entries the request has most of.
    let lang = if unspaced {
        let kana = pieces.iter().any(|p| matches!(p, Piece::Cjk(run) if run.iter().any(|c| is_kana(*c))));
        if kana { Lang::Ja } else { Lang::Zh }
    } else {
        let words: Vec<&String> = words_by_piece.iter().flatten().flatten().map(|(w, _, _)| w).collect();
        let stops = |lang: Lang| words.iter().filter(|w| stop_words(lang).contains(&w.as_str())).count();
        let content = words.iter().filter(|w| !LATIN.iter().any(|l| stop_words(*l).contains(&w.as_str()))).count();
        // Each function word counts 4, each word found as an entry (or at its infinitive) 2 and
        // each word found only at a stem it shares 1 ("données" is at a Spanish stem too); a
        // language that cannot beat the best so far even if all its other words were found is
        // not read (nor inflated).
        let mut order: Vec<(usize, Lang)> = LATIN.iter().map(|l| (4 * stops(*l) + 2 * content, *l)).collect();
        order.sort_by_key(|(bound, l)| (std::cmp::Reverse(*bound), *l as usize));
        let mut best: Option<(usize, Lang)> = None;
        for (bound, lang) in order {
            let beats =
                |score: usize| best.is_none_or(|(b, l)| score > b || (score == b && (lang as usize) < (l as usize)));
            if !beats(bound) {
                continue;
            }
            let found: usize = words
                .iter()
                .filter(|w| {
                    !stop_words(lang).contains(&w.as_str())
                        && !keep(w)
                        && w.chars().count() > 1
                        && w.chars().all(char::is_alphabetic)
                })
                .map(|w| {
                    if exact(lang, w).is_some() || infinitives(lang, w).any(|i| exact(lang, &i).is_some()) {
                        2
                    } else {
                        usize::from(latin(lang, w).is_some())
                    }
                })
                .sum();
            let score = 4 * stops(lang) + found;
            if score > 0 && beats(score) {
                best = Some((score, lang));
            }
        }
        best?.1
    };
    let stop = stop_words(lang);
    let mut out: Vec<String> = Vec::new();
    let mut translated = 0;
    let mut dropped = 0;
    let mut participles = 0;
    let mut english = |words: &'static str, out: &mut Vec<String>| {
        translated += 1;
        // A light verb ("get", "make") as a second or third sense is mostly noise ("通过", pass
        // through, also reads "get"): only a first sense gives it.
        let mut senses = words.split(' ').filter(|w| !w.is_empty()).take(PER_WORD);
        out.extend(senses.next().map(str::to_string));
        out.extend(senses.filter(|w| !LIGHT.contains(w)).map(str::to_string));
    };
    // A German separable verb: the request's first word with the particle that ends its first
    // clause ("lege ... an" is anlegen, "rufe ... ab" abrufen, "schlage ... vor, ..." vorschlagen:
    // a particle may stand before the comma of a clause that follows; "„Denver, CO“" is no
    // particle's).
    let all: Vec<&String> = words_by_piece.iter().flatten().flatten().map(|(w, _, _)| w).collect();
    let mut particle_at = all.len().saturating_sub(1);
    let mut count = 0;
    for (piece, words) in pieces.iter().zip(&words_by_piece) {
        count += words.as_ref().map_or(0, Vec::len);
        if let Piece::Word(w) = piece {
            let end = w.as_ptr() as usize - text.as_ptr() as usize + w.len();
            let particle = count > 0 && SEPARABLE.contains(&all[count - 1].as_str());
            if particle && text[end..].trim_start().starts_with([',', ';']) {
                particle_at = count - 1;
                break;
            }
        }
    }
    let separable = match (lang, all.first(), all.get(particle_at)) {
        (Lang::De, Some(verb), Some(particle)) if particle_at > 1 && SEPARABLE.contains(&particle.as_str()) => {
            latin(Lang::De, &format!("{particle}{verb}")).map(|english| (verb.to_string(), english))
        }
        _ => None,
    };
    let mut first_word = true;
    let mut which = false;
    let subtraction = lang == Lang::Ja && text.find("から").is_some_and(|from| text[from..].contains('引'));
    let (mut next, mut skip) = (0, 0);
    for (at, (piece, words)) in pieces.iter().zip(&words_by_piece).enumerate() {
        match piece {
            Piece::Word(_) => {
                for (w, raw, capital) in words.iter().flatten() {
                    let k = next;
                    next += 1;
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    // A set phrase of requests ("wie spät ist es", "quel temps fait-il"), read
                    // whole though it starts or ends with function words.
                    if !unspaced {
                        let end = (k + phrases::MAX_WORDS).min(all.len());
                        if let Some((english_words, n)) = phrases::words(lang, &all[k..end]) {
                            english(english_words, &mut out);
                            skip = n - 1;
                            first_word = false;
                            continue;
                        }
                    }
                    // A phrase the glossary has ("correo electrónico", "previsão do tempo",
                    // "base de données"), longest first, neither starting nor ending with a
                    // function word.
                    if !unspaced && !stop.contains(&w.as_str()) {
                        let phrase = (2..=MAX_PHRASE).rev().find_map(|n| {
                            let words = all.get(k..k + n)?;
                            if stop.contains(&words[n - 1].as_str()) {
                                return None;
                            }
                            let text = words.iter().map(|w| w.as_str()).collect::<Vec<_>>().join(" ");
                            exact(lang, &text).map(|e| (e, n))
                        });
                        if let Some((english_words, n)) = phrase {
                            english(english_words, &mut out);
                            skip = n - 1;
                            continue;
                        }
                    }
                    // A term of linear algebra: "valores propios", "autovalores" (eigenvalue).
                    if let Some((term, n)) = eigen(lang, w, all.get(k + 1).map(|n| n.as_str())) {
                        english(term, &mut out);
                        skip = n - 1;
                        first_word = false;
                        continue;
                    }
                    // The separable verb's particle, read with its verb ("herunter", "hinzu").
                    if separable.is_some() && k == particle_at {
                        continue;
                    }
                    let first = std::mem::take(&mut first_word);
                    if let Some((_, english_words)) = separable.as_ref().filter(|(v, _)| first && v == w) {
                        english(english_words, &mut out);
                        continue;
                    }
                    let plain = w.chars().all(char::is_alphabetic);
                    if plain && stop.contains(&w.as_str()) {
                        dropped += 1;
                        out.extend(question(w).map(str::to_string));
                        continue;
                    }
                    // A name (of a product, a person, a place) is kept as written; German
                    // capitalises every noun, so there only known names are.
                    let name = *capital && lang != Lang::De && find(lang, w).next().is_none();
                    // A single letter (a variable: "f(x, y)", "el v original") and an acronym
                    // ("DNS", "API") are as written: "x" is not ten, German "DNS" not DNA.
                    let letters = || raw.chars().filter(|c| c.is_alphabetic());
                    let symbol =
                        w.chars().count() == 1 || (letters().count() >= 2 && letters().all(char::is_uppercase));
                    if keep(w)
                        || name
                        || symbol
                        || branch_name(lang, w, k.checked_sub(1).map(|j| all[j].as_str()))
                        || !plain
                        || unspaced
                    {
                        out.push(raw.clone());
                        continue;
                    }
                    let is_noun = match lang {
                        Lang::De => *capital,
                        Lang::Fr => k > 0 && PLURAL_FR.contains(&all[k - 1].as_str()),
                        _ => false,
                    };
                    // A past participle ("guardados", "enregistrés", "gespeichert") as one:
                    // saved, not save.
                    if let Some(verb) = (!is_noun).then(|| participle_of(lang, w)).flatten() {
                        participles += 1;
                        let mut senses = verb.split(' ').filter(|w| !w.is_empty()).take(PER_WORD);
                        out.extend(senses.next().map(participle));
                        out.extend(senses.filter(|w| !LIGHT.contains(w)).map(participle));
                        continue;
                    }
                    // A word between a determiner and a function word (or the end) is a noun:
                    // "al entero más cercano" the integer, not entire.
                    let noun_senses = matches!(lang, Lang::Es | Lang::Fr | Lang::Pt)
                        && k > 0
                        && determiners(lang).contains(&all[k - 1].as_str())
                        && all.get(k + 1).is_none_or(|n| stop.contains(&n.as_str()));
                    let found = noun_senses
                        .then(|| noun_sense(lang, w))
                        .flatten()
                        .or_else(|| if is_noun { noun(lang, w) } else { latin(lang, w) });
                    if let Some(words) = found {
                        if words == w {
                            // Its own English word ("message", "article"): as written.
                            out.push(raw.clone());
                        } else {
                            let start = out.len();
                            english(words, &mut out);
                            // A plural noun's first English word as a plural: "los comentarios"
                            // comments (a request for several things asks for a list).
                            if start < out.len() && plural_noun(lang, &all, k, *capital) {
                                out[start] = english_plural(&out[start]);
                            }
                        }
                    } else if let Some((head, tail)) = (lang == Lang::De).then(|| compound(w)).flatten() {
                        if let Some(head) = head {
                            english(head, &mut out);
                        }
                        english(tail, &mut out);
                    } else {
                        out.push(raw.clone());
                    }
                }
            }
            Piece::Cjk(run) => {
                let mut i = 0;
                // A number's unit or counter right after it ("3月14日", "下午3点", "20件"): a
                // date, an hour, a count; a number before it ("第512号") is an ordinal.
                let number = at.checked_sub(1).and_then(|j| match &pieces[j] {
                    Piece::Word(w) if w.chars().all(|c| c.is_ascii_digit()) => Some(*w),
                    _ => None,
                });
                if let Some(number) = number
                    && let Some((read, n)) = numbered(number, run)
                {
                    match read {
                        Numbered::Instead(word) => {
                            out.pop();
                            out.push(word.to_string());
                        }
                        Numbered::After(word) => out.push(word.to_string()),
                        Numbered::As => {}
                        // A Chinese count of more than one makes the noun after it plural
                        // ("3张卡片" three cards), as "which" does; a Japanese count follows
                        // its noun ("カード3枚").
                        Numbered::Count => which = lang == Lang::Zh && number != "1",
                    }
                    i = n;
                }
                // 第 before a number marks it an ordinal: the number is read alone.
                let ordinal = run.last() == Some(&'第')
                    && matches!(pieces.get(at + 1), Some(Piece::Word(w)) if w.starts_with(|c: char| c.is_ascii_digit()));
                let run = &run[..run.len() - usize::from(ordinal)];
                // The end of the katakana word `i` is in, when the glossary's entries do not
                // cover it whole: a name or a word the glossary lacks ("ズンドコベロンチョ" is not
                // read as "ロンチ", launch), of which only long entries are read.
                let mut unread_until = 0;
                while i < run.len() {
                    if katakana_word(run[i]) && (i == 0 || !katakana_word(run[i - 1])) {
                        let end = i + run[i..].iter().take_while(|c| katakana_word(**c)).count();
                        if !tiled(lang, &run[..end], i) {
                            unread_until = end;
                        }
                    }
                    // A set phrase of requests ("几点了", "何曜日").
                    if let Some((words, n)) = phrases::chars(lang, &run[i..]) {
                        english(words, &mut out);
                        i += n;
                        continue;
                    }
                    // A Japanese request also reads Chinese entries for kanji compounds the
                    // Japanese glossary lacks, and the other way round.
                    let other = if lang == Lang::Ja { Lang::Zh } else { Lang::Ja };
                    let found = cjk(lang, run, i)
                        .filter(|(_, n)| readable(run, i, *n))
                        .or_else(|| cjk(other, run, i).filter(|(_, n)| *n >= 2 && readable(run, i, *n)))
                        .filter(|(_, n)| i >= unread_until || *n >= MIN_UNTILED);
                    // A function character that starts a word only by taking the start of a longer
                    // word after it is read alone: "为数据库" for the database (为 + 数据库), not
                    // 为数 (a number of) + 据库.
                    let longer_after = |n: usize| {
                        n >= 2
                            && stop.contains(&&*run[i].encode_utf8(&mut [0; 4]))
                            && cjk(lang, run, i + 1).is_some_and(|(_, m)| 1 + m > n && readable(run, i + 1, m))
                    };
                    if found.is_some_and(|(_, n)| longer_after(n)) {
                        i += 1;
                        continue;
                    }
                    // Japanese "A から B を引く" is A minus B: 引く is subtract there, not pull.
                    let found = found.map(|(words, n)| match subtraction {
                        true if run[i] == '引' && matches!(run.get(i + 1), Some('く' | 'い')) => {
                            ("subtract minus", n)
                        }
                        _ => (words, n),
                    });
                    match found {
                        Some((words, n)) => {
                            let word: String = run[i..i + n].iter().collect();
                            if let Some(q) = question(&word) {
                                // A question word is read ("Slackの@jdoeは誰ですか": who), though
                                // no word of the request was translated.
                                dropped += 1;
                                out.push(q.to_string());
                                which = q == "which";
                            } else if !stop.contains(&word.as_str()) {
                                let start = out.len();
                                english(words, &mut out);
                                if passive(lang, &run[i + n..]) {
                                    for w in &mut out[start..] {
                                        *w = participle(w);
                                    }
                                } else if std::mem::take(&mut which) && start < out.len() {
                                    // Chinese and Japanese mark no plural; "which" asks of
                                    // several ("哪些成员", "どのシークレット": which members,
                                    // which secrets).
                                    out[start] = english_plural(&out[start]);
                                }
                            }
                            i += n;
                        }
                        None => i += 1,
                    }
                }
            }
        }
    }
    // Even with no word found, a request rid of its function words reads better in English.
    (translated + participles > 0 || (dropped > 0 && !out.is_empty())).then(|| out.join(" "))
}

/// Whether a word is a branch's name as git writes it ("main", "master"), kept as written: the
/// requests of every language name their branches in English ("la rama main", "na main"), and
/// only French has such a word, "main" (hand), after a determiner or "en" ("à la main", "en main").
fn branch_name(lang: Lang, word: &str, before: Option<&str>) -> bool {
    match word {
        "main" => lang != Lang::Fr || !before.is_some_and(|b| FRENCH_BEFORE_HAND.contains(&b)),
        "master" => true,
        _ => false,
    }
}

/// The French words "main" (hand) follows as a noun.
const FRENCH_BEFORE_HAND: &[&str] = &["la", "une", "ma", "ta", "sa", "cette", "en", "notre", "votre", "leur"];

/// A character of a katakana word (the middle dot separates two).
/// What a Chinese or Japanese unit or counter right after a number reads as, and how many
/// characters it takes: a month in the number's place ("3月" March), rows after it ("3行"), or
/// the number as it is (a day, an hour, a year, a count: "14日", "3点", "2023年", "20件"). A
/// duration is not a date ("3日間", "24時間", "3年" years: only a four-digit year drops 年).
fn numbered(number: &str, run: &[char]) -> Option<(Numbered, usize)> {
    const MONTHS: &str = "january february march april may june july august september october november december";
    let next = run.get(1).copied();
    let n: usize = number.parse().ok()?;
    match run.first()? {
        '月' if (1..=12).contains(&n) => Some((Numbered::Instead(MONTHS.split(' ').nth(n - 1)?), 1)),
        '行' => Some((Numbered::After("rows"), 1)),
        '日' | '号' | '號' | '時' | '时' | '点' | '點' if !matches!(next, Some('間' | '间')) => {
            Some((Numbered::As, 1))
        }
        '年' if number.len() == 4 => Some((Numbered::As, 1)),
        '件' | '个' | '個' | '条' | '條' | '枚' | 'つ' | '張' | '张' | '篇' | '封' | '台' => {
            Some((Numbered::Count, 1))
        }
        _ => None,
    }
}

/// How a number reads with the unit after it ([`numbered`]).
enum Numbered {
    /// A word in its place (a month).
    Instead(&'static str),
    /// The number, then a word.
    After(&'static str),
    /// The number alone.
    As,
    /// The number alone, counting what follows.
    Count,
}

fn katakana_word(c: char) -> bool {
    is_katakana(c) && c != '・'
}

/// Whether entries cover `run[i..]` (a katakana word) end to end, longest first ("ビジターセンター":
/// ビジター + センター).
fn tiled(lang: Lang, run: &[char], mut i: usize) -> bool {
    while i < run.len() {
        match cjk(lang, run, i).filter(|(_, n)| *n >= 2) {
            Some((_, n)) => i += n,
            None => return false,
        }
    }
    true
}

/// Whether `run[i..i + n]` may be read as a word: not a single kana (a particle), and a short
/// katakana word only when it is the whole loanword ("シークレット" is not "シーク" + "レット").
fn readable(run: &[char], i: usize, n: usize) -> bool {
    let katakana = is_katakana;
    if n == 1 && is_kana(run[i]) {
        return false;
    }
    if n < 3 && run[i..i + n].iter().all(|c| katakana(*c)) {
        let before = i > 0 && katakana(run[i - 1]);
        let after = run.get(i + n).is_some_and(|c| katakana(*c));
        return !before && !after;
    }
    true
}

mod forms;
mod function_words;
mod phrases;
#[cfg(test)]
mod tests;
