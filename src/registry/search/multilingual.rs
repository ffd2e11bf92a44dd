//! The multilingual semantic tier: a static token table over XLM-R's SentencePiece pieces,
//! distilled from multilingual-e5-small by scripts/distill-multilingual.py and committed under
//! `model/` (multilingual.bin: a unigram log-probability byte, an f16 scale and a 4-bit row per
//! piece; multilingual.txt: the pieces). A request not written in English ([`is_foreign`]) is
//! ranked with it: the table puts "enviar", "senden", "envoyer" and "send" near each other, and
//! reads Chinese and Japanese, which have no spaces, by the pieces a unigram segmenter finds.
//!
//! A text is lower-cased, full-width forms folded, split into runs of letters and digits (a run
//! after a space starts with SentencePiece's word marker U+2581), each run segmented by Viterbi
//! over the pieces' log-probabilities, and its vector is the pieces' rows weighted by SIF
//! (`a / (a + p)`, frequent pieces weigh less), L2 normalised.
//!
//! Nothing is read at start-up: the table is read in place from the binary's static bytes, and
//! its lookup table of piece ids (about 128 KiB) is built when the first non-English request
//! arrives, as are the tools' vectors ([`super::SearchIndex`] keeps them in a `OnceLock`).

use std::sync::OnceLock;

use super::lines::Lines;

const MODEL_BYTES: &[u8] = include_bytes!("model/multilingual.bin");
static PIECES: &str = include_str!("model/multilingual.txt");

/// SentencePiece's word marker.
const MARKER: char = '\u{2581}';
/// Only a text's first this many bytes are embedded (as in [`super::embed`]).
const MAX_TEXT: usize = 4096;
/// Longest piece tried, in characters.
const MAX_PIECE: usize = 24;
/// The log-probability of a character no piece covers (it carries nothing).
const UNKNOWN: f32 = -30.0;
/// SIF's `a`: a piece of probability `a` weighs half as much as a rare one.
const SIF: f32 = 1e-3;

/// The table, read in place.
pub struct Table {
    dim: usize,
    count: usize,
    /// count bytes: -log-probability * 8.
    scores: &'static [u8],
    /// count little-endian f16 scales.
    scales: &'static [u8],
    /// count x dim/2 bytes, two 4-bit values (+8) a byte, low nibble first.
    data: &'static [u8],
    /// The pieces of [`PIECES`], one a line, found by their text.
    pieces: Lines,
    /// The longest piece, in characters (at most [`MAX_PIECE`]).
    longest: usize,
}

/// The table, made ready on first use; `None` if the committed table does not parse.
pub fn table() -> Option<&'static Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Table::decode(MODEL_BYTES, PIECES)).as_ref()
}

/// An IEEE half-precision value.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

impl Table {
    fn decode(bytes: &'static [u8], pieces: &'static str) -> Option<Table> {
        let header = bytes.get(..16)?;
        if &header[..8] != b"WBMLE1\0\0" {
            return None;
        }
        let count = u32::from_le_bytes(header[8..12].try_into().ok()?) as usize;
        let dim = u32::from_le_bytes(header[12..16].try_into().ok()?) as usize;
        if dim == 0 || !dim.is_multiple_of(2) {
            return None;
        }
        let scores = bytes.get(16..16 + count)?;
        let scales = bytes.get(16 + count..16 + 3 * count)?;
        let data_start = 16 + 3 * count;
        let data = bytes.get(data_start..data_start.checked_add(count.checked_mul(dim / 2)?)?)?;
        let pieces = Lines::new(pieces, count)?;
        let longest = (0..count).map(|id| pieces.get(id).chars().count().min(MAX_PIECE)).max().unwrap_or(0).max(1);
        Some(Table { dim, count, scores, scales, data, pieces, longest })
    }

    fn id(&self, piece: &str) -> Option<usize> {
        self.pieces.id(piece)
    }

    fn log_prob(&self, id: usize) -> f32 {
        -f32::from(self.scores[id]) / 8.0
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bytes of heap the table takes (its line starts and its table of ids).
    pub fn heap_bytes(&self) -> usize {
        self.pieces.heap_bytes()
    }

    /// The pieces of `text` (ids), in order.
    pub fn segment(&self, text: &str, out: &mut Vec<usize>) {
        let mut run: Vec<char> = Vec::new();
        let mut marked = true;
        for c in super::text::prefix(text, MAX_TEXT).chars().flat_map(fold) {
            if c.is_alphanumeric() {
                if run.is_empty() && marked {
                    run.push(MARKER);
                }
                run.push(c);
            } else {
                self.viterbi(&run, out);
                run.clear();
                marked = c.is_whitespace();
            }
        }
        self.viterbi(&run, out);
    }

    /// The most probable segmentation of one run into known pieces; characters no piece
    /// covers are skipped.
    fn viterbi(&self, run: &[char], out: &mut Vec<usize>) {
        let n = run.len();
        if n == 0 {
            return;
        }
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        // (start, piece id or usize::MAX for an unknown character)
        let mut back = vec![(0usize, usize::MAX); n + 1];
        best[0] = 0.0;
        let mut key = String::new();
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            key.clear();
            for e in i + 1..=n.min(i + self.longest) {
                key.push(run[e - 1]);
                if let Some(id) = self.id(&key) {
                    let s = best[i] + self.log_prob(id);
                    if s > best[e] {
                        best[e] = s;
                        back[e] = (i, id);
                    }
                }
            }
            let s = best[i] + UNKNOWN;
            if s > best[i + 1] {
                best[i + 1] = s;
                back[i + 1] = (i, usize::MAX);
            }
        }
        let start = out.len();
        let mut i = n;
        while i > 0 {
            let (from, id) = back[i];
            if id != usize::MAX {
                out.push(id);
            }
            i = from;
        }
        out[start..].reverse();
    }

    /// The text's vector (unit length), or `None` when no piece of it is known.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut ids = Vec::new();
        self.segment(text, &mut ids);
        let mut v = vec![0.0_f32; self.dim];
        let half = self.dim / 2;
        for id in ids {
            if id >= self.count {
                continue;
            }
            let p = self.log_prob(id).exp();
            let scale = f16_to_f32(u16::from_le_bytes([self.scales[2 * id], self.scales[2 * id + 1]]));
            if !scale.is_finite() {
                continue;
            }
            let w = SIF / (SIF + p) * scale;
            for (k, &b) in self.data[id * half..(id + 1) * half].iter().enumerate() {
                v[2 * k] += w * (f32::from(b & 0x0f) - 8.0);
                v[2 * k + 1] += w * (f32::from(b >> 4) - 8.0);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm <= f32::EPSILON || !norm.is_finite() {
            return None;
        }
        v.iter_mut().for_each(|x| *x /= norm);
        Some(v)
    }
}

/// A character as the teacher's normaliser reads it, as far as search needs: lower case, and
/// full-width Latin letters, digits and the ideographic space as their ASCII forms.
fn fold(c: char) -> impl Iterator<Item = char> {
    let c = match u32::from(c) {
        0xff01..=0xff5e => char::from_u32(u32::from(c) - 0xfee0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    };
    c.to_lowercase()
}

/// English function words: evidence that a Latin-script request is English.
static ENGLISH: super::lexicon::Words = super::lexicon::Words::new(&[
    "the", "a", "an", "of", "to", "in", "on", "for", "with", "and", "or", "is", "are", "my", "me", "i", "it", "this",
    "that", "what", "which", "how", "from", "by", "all", "our", "your", "do", "can", "please", "about", "at", "be",
    "there", "any", "new", "show", "find", "get", "list", "who", "where", "when", "will", "should", "into", "out",
]);

/// Function words of Spanish, German, French and Portuguese that English does not use: evidence
/// that a request is not English.
static FOREIGN: super::lexicon::Words = super::lexicon::Words::new(&[
    // Spanish
    "el",
    "los",
    "las",
    "una",
    "unos",
    "del",
    "al",
    "que",
    "qué",
    "por",
    "para",
    "con",
    "mi",
    "mis",
    "tu",
    "está",
    "están",
    "cuál",
    "cuáles",
    "cuánto",
    "cuántos",
    "hay",
    "sobre",
    "es",
    "y",
    "en",
    "se",
    "su",
    "sus",
    "muéstrame",
    "dame",
    "busca",
    "crea",
    "cierra",
    "comparte",
    "publica",
    "suma",
    "resta",
    "multiplica",
    "grafica",
    "convierte",
    "redondea",
    "calcula",
    "obtén",
    "encuentra",
    "elimina",
    "borra",
    "añade",
    "actualiza",
    "descarga",
    "sube",
    "abre",
    "muestra",
    "enumera",
    "consulta",
    "envía",
    "lista",
    "todos",
    "todas",
    "mañana",
    "hoy",
    "como",
    "cómo",
    "dónde",
    "cuando",
    // (The frames of a polite request, which the glossary reads as nothing: "necesito convertir
    // 100 fahrenheit a celsius" had no other word that counts.)
    "necesito",
    "quiero",
    "quisiera",
    "puedes",
    "podrías",
    // German
    "der",
    "das",
    "zum",
    "zur",
    "vom",
    "beim",
    "und",
    "ist",
    "ein",
    "eine",
    "einen",
    "einem",
    "mit",
    "für",
    "von",
    "zu",
    "im",
    "auf",
    "nicht",
    "wie",
    "was",
    "welche",
    "welcher",
    "welches",
    "mein",
    "meine",
    "meinem",
    "meinen",
    "meiner",
    "den",
    "dem",
    "des",
    "nach",
    "über",
    "bitte",
    "zeig",
    "zeige",
    "mir",
    "mich",
    "ich",
    "habe",
    "gibt",
    "sind",
    "alle",
    "aus",
    "bei",
    "oder",
    "finde",
    "teile",
    "durch",
    "addiere",
    "multipliziere",
    "berechne",
    "runde",
    "rechne",
    "wandle",
    "lösche",
    "schreibe",
    "zeige",
    "hole",
    "rufe",
    "aktuelle",
    "aktuellen",
    "suche",
    "erstelle",
    "schicke",
    "sende",
    "liste",
    "heute",
    "morgen",
    "wo",
    "wann",
    "möchte",
    "brauche",
    "kannst",
    "könntest",
    "würdest",
    // French
    "le",
    "les",
    "une",
    "du",
    "au",
    "aux",
    "et",
    "est",
    "sont",
    "pour",
    "avec",
    "dans",
    "sur",
    "mon",
    "ma",
    "mes",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "où",
    "je",
    "moi",
    "montre",
    "trouve",
    "par",
    "divise",
    "additionne",
    "soustrais",
    "multiplie",
    "convertis",
    "arrondis",
    "calcule",
    "donne",
    "ajoute",
    "supprime",
    "affiche",
    "télécharge",
    "récupère",
    "crée",
    "envoie",
    "cherche",
    "demain",
    "aujourd",
    "ce",
    "cette",
    "ces",
    "qui",
    "il",
    "y",
    "des",
    "pas",
    "nous",
    "vous",
    "voudrais",
    "besoin",
    "pourrais",
    "pouvez",
    // Portuguese
    "os",
    "ao",
    "aos",
    "um",
    "uma",
    "do",
    "da",
    "dos",
    "das",
    "em",
    "no",
    "na",
    "nos",
    "nas",
    "com",
    "meu",
    "minha",
    "meus",
    "minhas",
    "quais",
    "qual",
    "quanto",
    "onde",
    "há",
    "mostre",
    "encontre",
    "feche",
    "pegue",
    "compartilhe",
    "busque",
    "divida",
    "subtraia",
    "multiplique",
    "converta",
    "arredonde",
    "obtenha",
    "adicione",
    "remova",
    "apague",
    "baixe",
    "atual",
    "envie",
    "liste",
    "crie",
    "amanhã",
    "hoje",
    "para",
    "pelo",
    "pela",
    "não",
    "é",
    "são",
    "você",
    "gostaria",
    "preciso",
]);

/// Function words of Spanish, French and Portuguese that also stand in English names ("de la
/// Cruz", "LA", "O'Neil", "UN"): half the evidence of the others ("elimina filas de la tabla", "altere
/// o número de telefone do contato" have few others).
const HALF_FOREIGN: &[&str] = &["de", "la", "o", "e", "die", "un"];
/// The words English "do" follows.
const BEFORE_DO: &[&str] = &[
    "i", "you", "we", "they", "how", "what", "why", "where", "when", "to", "not", "can", "please", "should", "would",
    "could", "did", "does", "will", "must", "which", "who",
];

/// Whether a request is not written in English: a fifth or more of its letters (two at least)
/// are of a script other than Latin (Chinese, Japanese, Korean, Cyrillic, ...: a Greek letter in
/// a formula is not enough), or it has Spanish, German, French or Portuguese function words or
/// accented words, and these with the words the English vocabulary does not have
/// (`english_word`, half as sure: a typo is one too) outweigh its English function words.
pub fn is_foreign(query: &str, english_word: &dyn Fn(&str) -> bool) -> bool {
    let query = super::text::prefix(query, MAX_TEXT);
    let letters = query.chars().filter(|c| c.is_alphabetic()).count();
    let other = query.chars().filter(|&c| c.is_alphabetic() && !is_latin(c)).count();
    if other >= 2 && other * 5 >= letters {
        return true;
    }
    // The words that count, lower-cased: addresses, paths, names with digits say nothing of
    // the language. A hyphenated word of letters counts as its parts ("Todoist-Projekte").
    let mut strong = 0.0_f32;
    // (A word already in small ASCII letters is borrowed: most of an English request's are.)
    fn lower(p: &str) -> std::borrow::Cow<'_, str> {
        if p.bytes().all(|b| b.is_ascii_lowercase()) { p.into() } else { p.to_lowercase().into() }
    }
    let mut words: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for raw in query.split_whitespace() {
        if raw.contains(['@', '/', '.', '#']) {
            continue;
        }
        let trimmed = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if trimmed.split('-').any(|p| p.is_empty() || !p.chars().all(char::is_alphabetic)) {
            continue;
        }
        if !trimmed.contains('-') {
            words.push(lower(trimmed));
            continue;
        }
        let parts: Vec<&str> = trimmed.split('-').collect();
        // A name joined to a capitalised noun English does not have ("GitLab-Projekte",
        // "Stripe-Abonnements"): German writes its compounds so, English "GitLab projects".
        // Half the evidence of a function word ("Rolls-Royce" is a name).
        let compound = |p: &&str| {
            p.chars().next().is_some_and(char::is_uppercase) && p.len() >= 4 && !english_word(&p.to_lowercase())
        };
        if parts.len() > 1 && parts[0].chars().next().is_some_and(char::is_uppercase) && parts[1..].iter().any(compound)
        {
            strong += 0.5;
        }
        words.extend(parts.iter().copied().map(lower));
    }
    let mut english = 0.0_f32;
    // A French article or pronoun elided before a word ("l'acheteur", "d'argent", "qu'il"):
    // such words have an apostrophe, so they are not among `words`.
    strong += query.split_whitespace().filter(|raw| elided(raw)).count() as f32;
    for (i, word) in words.iter().enumerate() {
        // "a" is also a Spanish, French and Portuguese preposition: evidence of neither. "do" is
        // English first or after a pronoun, a question word or an auxiliary ("how do I", "to
        // do"), else Portuguese's "of the" ("o token do cofre").
        let english_do = i == 0 || words.get(i - 1).is_some_and(|p| BEFORE_DO.contains(&p.as_ref()));
        if word == "a" {
            continue;
        } else if word == "do" && !english_do {
            strong += 0.5;
        } else if ENGLISH.contains(word) {
            english += 1.0;
        } else if FOREIGN.contains(word) || !word.is_ascii() {
            strong += 1.0;
        } else if HALF_FOREIGN.contains(&word.as_ref()) {
            strong += 0.5;
        }
    }
    if strong < 0.5 {
        // Not one foreign word: English, whatever else (the vocabulary is asked only below).
        return false;
    }
    // A short request with no English function word needs less, with a word English does not
    // have among it: "etiquetas de gmail", "marcadores do gmail" ("x y z" does not).
    // (A single letter is a variable's name: "transponiere die Matrix A" has three words.)
    let short = english == 0.0 && words.iter().filter(|w| w.chars().count() > 1).count() <= 3;
    let enough = |unknown: f32| {
        (strong + unknown >= 1.5 || (short && unknown > 0.0 && strong + unknown >= 1.0)) && strong + unknown > english
    };
    let mut unknown = 0.0_f32;
    for word in &words {
        if enough(unknown) {
            break;
        }
        if !ENGLISH.contains(word)
            && !FOREIGN.contains(word)
            && word.is_ascii()
            && word.len() >= 4
            && !english_word(word)
        {
            unknown += 0.5;
        }
    }
    enough(unknown)
}

/// Whether a word starts with a French elided article or pronoun ("l'", "d'", "qu'", "j'", "n'",
/// "s'", "c'", "m'", "t'") before at least two letters: "l'acheteur", not "o'clock" or "rock'n'roll".
fn elided(raw: &str) -> bool {
    // (No string made: most words have no apostrophe, and a head is ASCII.)
    let word = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
    let Some((head, rest)) = word.split_once(['\'', '\u{2019}']) else { return false };
    ["l", "d", "qu", "j", "n", "s", "c", "m", "t"].iter().any(|h| head.eq_ignore_ascii_case(h))
        && rest.chars().take_while(|c| c.is_alphabetic()).count() >= 2
}

fn is_latin(c: char) -> bool {
    c.is_ascii() || matches!(u32::from(c), 0xc0..=0x24f | 0x1e00..=0x1eff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_committed_table_decodes_and_relates_languages() {
        let t = table().expect("model/multilingual.bin decodes");
        let e = |s: &str| t.embed(s).expect("known pieces");
        let send = e("send an email");
        let calendar = e("calendar events");
        for (same, other) in [
            ("enviar un correo", &calendar),
            ("eine E-Mail senden", &calendar),
            ("发送邮件", &calendar),
            ("メールを送る", &calendar),
        ] {
            assert!(cosine(&e(same), &send) > cosine(&e(same), other), "{same}");
        }
        for (same, other) in [("Kalendertermine", &send), ("eventos del calendario", &send)] {
            assert!(cosine(&e(same), &calendar) > cosine(&e(same), other), "{same}");
        }
        assert!(t.embed("!!! ,,,").is_none());
    }

    #[test]
    fn unigram_segmentation_reads_words_and_unspaced_scripts() {
        let t = table().expect("decodes");
        let pieces = |s: &str| {
            let mut ids = Vec::new();
            t.segment(s, &mut ids);
            ids.into_iter().map(|id| t.pieces.get(id)).collect::<Vec<_>>()
        };
        assert_eq!(pieces("Send"), ["\u{2581}send"]);
        // Full-width letters read as ASCII ones.
        assert_eq!(pieces("ＳＥＮＤ"), ["\u{2581}send"]);
        // Chinese without spaces: several pieces, not one unknown word.
        assert!(pieces("发送邮件给我的同事").len() >= 3);
        // Every piece is found as itself.
        for id in (0..t.count).step_by(101) {
            assert_eq!(t.id(t.pieces.get(id)), Some(id));
        }
    }

    /// Attack: a hostile agent sends a megabyte of mixed scripts, lone combining marks and
    /// piece-like junk; nothing panics and only the text's start is read.
    #[test]
    fn hostile_text_is_bounded_and_never_panics() {
        let t = table().expect("decodes");
        let junk = "\u{2581}\u{2581}x\u{301}\u{301}\u{301} 发送ｍａｉｌ\u{0}\u{feff}\u{200d}𝔘𝔫𝔦 ق\u{308}ß\u{2581}ing ";
        let huge = junk.repeat((1 << 20) / junk.len() + 1);
        let started = std::time::Instant::now();
        assert_eq!(t.embed(&huge), t.embed(&huge[..huge.floor_char_boundary(MAX_TEXT)]));
        let marks = "\u{301}".repeat(500_000);
        assert!(t.embed(&marks).is_none());
        let one_run: String = "邮".repeat(400_000);
        assert!(t.embed(&one_run).is_some());
        for s in ["", " ", "\u{2581}", "\u{301}a", "a\u{301}", "\u{10ffff}", "ａ", "\u{3000}\u{3000}"] {
            let _ = t.embed(s);
            let _ = is_foreign(s, &|_| true);
        }
        let _ = is_foreign(&huge, &|_| false);
        assert!(started.elapsed() < std::time::Duration::from_secs(3), "{:?}", started.elapsed());
    }

    /// An English request never reads the multilingual table nor embeds a tool with it; nor
    /// does a request the glossary reads into English words when its ranking is not fused with
    /// the table's (`gloss_table` 0, or a first tool that leads clearly); the first request in
    /// another language whose ranking is does, once.
    #[test]
    fn the_tier_is_made_only_for_requests_not_in_english() {
        let registry = crate::registry::Registry::standard();
        let index = registry.index();
        let connected = |_: &str| true;
        let hits = index.search("send an email to the finance team", 5, &connected);
        assert!(!hits.is_empty());
        assert!(index.foreign.get().is_none(), "an English request made the multilingual vectors");
        let spanish = "envía un correo electrónico al equipo de finanzas con gmail";
        let alone = super::super::Fusion { gloss_table: 0.0, ..Default::default() };
        let hits = index.search_with(spanish, 5, &connected, alone);
        assert_eq!(hits.first().map(|h| h.integration), Some("gmail"), "{hits:?}");
        assert!(index.foreign.get().is_none(), "a glossed request alone made the multilingual vectors");
        let hits = index.search(spanish, 5, &connected);
        assert_eq!(hits.first().map(|h| h.integration), Some("gmail"), "{hits:?}");
        assert!(index.foreign.get().is_none(), "a glossed request that leads clearly asked the table");
        // Near tools ("merge" and "pull request" are several tools' words): the table is asked.
        let hits = index.search("fusiona la pull request en github", 5, &connected);
        assert_eq!(hits.first().map(|h| h.integration), Some("github"), "{hits:?}");
        assert!(index.foreign.get().is_some(), "the glossed request's ranking was not fused with the table's");
        // Katakana the glossary has no word of: the multilingual table alone ranks it.
        assert_eq!(super::super::glossary::gloss("ズンドコベロンチョ", &|_| false), None);
    }

    #[test]
    fn foreign_requests_are_told_from_english_ones() {
        let english = |w: &str| ["send", "email", "calendar", "events", "tokyo", "berlin", "weather"].contains(&w);
        for q in [
            "send an email to bob",
            "what time is it in tokyo",
            "jira",
            "weather in berlin",
            "PAY-123",
            "x y z",
            "lsit trello bords",
            "the first hinge sits at θ = 45° and the second at φ = 30°, so compute the jacobian",
        ] {
            assert!(!is_foreign(q, &english), "{q}");
        }
        for q in [
            "envía un correo a bob",
            "qué hora es en tokio",
            "wie ist das Wetter in Berlin",
            "发送邮件",
            "メールを送る",
        ] {
            assert!(is_foreign(q, &english), "{q}");
        }
    }

    /// Requests with few of the strong function words: a French elided article, "de", "la", "o"
    /// at half weight, Portuguese "do" after a noun, a request verb; English ones with those
    /// words stay English.
    #[test]
    fn weak_evidence_adds_up_to_a_language() {
        let english = |w: &str| {
            ["send", "email", "token", "show", "lakers", "schedule", "posts", "robert", "niro", "add", "file", "repo"]
                .contains(&w)
        };
        for q in [
            "rembourse l'acheteur de la commande 5531",
            "elimina filas de la tabla de airtable",
            "remova o token armazenado do cofre",
            "convierte 25 grados Celsius a Fahrenheit",
            "hole die aktuelle Uhrzeit in London",
            "redondea 7,45 a un decimal",
            "necesito convertir 100 fahrenheit a celsius",
        ] {
            assert!(is_foreign(q, &english), "{q}");
        }
        // Short requests with a product name: one function word and one word English lacks, or
        // a name joined to a capitalised noun English lacks.
        let english = |w: &str| {
            ["gmail", "gitlab", "stripe", "todoist", "projects", "labels", "asana", "active", "matrix"].contains(&w)
        };
        for q in [
            "etiquetas de gmail",
            "marcadores do gmail",
            "meine Todoist-Projekte",
            "GitLab-Projekte",
            "transponiere die Matrix A",
        ] {
            assert!(is_foreign(q, &english), "{q}");
        }
        for q in ["gmail labels", "asana projects", "active stripe subscriptions", "Gmail-Labels"] {
            assert!(!is_foreign(q, &english), "{q}");
        }
        let english = |w: &str| {
            ["send", "email", "token", "show", "lakers", "schedule", "posts", "robert", "niro", "add", "file", "repo"]
                .contains(&w)
        };
        for q in [
            "how do I add a file to the repo",
            "show me the la lakers schedule",
            "find posts by robert de niro",
            "what do you send at 5 o'clock",
            "don't send the email",
        ] {
            assert!(!is_foreign(q, &english), "{q}");
        }
    }
}
