//! The forms a word of a request may take: plurals at their singular, verb forms at their
//! infinitive, participles, German compounds and separable verbs' heads, Japanese verb endings;
//! and English past participles.

use super::{Lang, MAX_COMPOUND, exact, latin};

/// The singulars a plural noun may come from, likeliest first: German "Preise" Preis, "Bilder"
/// Bild, "Kanäle" Kanal, "Dateien" Datei; French "tâches" tâche, "canaux" canal.
pub(super) fn singulars(lang: Lang, word: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    match lang {
        Lang::De => {
            for suffix in ["en", "er", "e", "n", "s"] {
                if let Some(b) = word.strip_suffix(suffix).filter(|b| b.chars().count() >= 3) {
                    out.push(b.to_string());
                    // An umlaut the plural adds ("Kanäle", "Passwörter", "Züge").
                    let plain: String = b
                        .chars()
                        .map(|c| match c {
                            'ä' => 'a',
                            'ö' => 'o',
                            'ü' => 'u',
                            c => c,
                        })
                        .collect();
                    if plain != b {
                        out.push(plain);
                    }
                }
            }
        }
        Lang::Fr => {
            if let Some(b) = word.strip_suffix("aux") {
                out.push(format!("{b}al"));
            }
            if let Some(b) = word.strip_suffix(['s', 'x']) {
                out.push(b.to_string());
            }
        }
        _ => {}
    }
    out
}

/// The English words of a noun (a German word written with a capital inside the request, a French
/// word after a plural determiner): at its singular before the verb forms it may share a spelling
/// with ("Preise" prices, not praise; "les tâches" tasks, not tries).
pub(super) fn noun(lang: Lang, word: &str) -> Option<&'static str> {
    exact(lang, word)
        .or_else(|| singulars(lang, word).iter().find_map(|w| exact(lang, w)))
        .or_else(|| latin(lang, word))
}

/// The noun senses of a Spanish, French or Portuguese word that is also an adjective or a verb
/// (filed as `=<lemma>` where they differ from all its senses), at the word or its singular.
pub(super) fn noun_sense(lang: Lang, word: &str) -> Option<&'static str> {
    let singular = word.strip_suffix('s');
    let accented = word.strip_suffix("iones").filter(|_| lang == Lang::Es).map(|b| format!("{b}ión"));
    [Some(word), singular, singular.and_then(|w| w.strip_suffix('e')), accented.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|w| exact(lang, &format!("={w}")))
}

/// The English words of the verb a past participle comes from ("guardados" guardar,
/// "enregistrés" enregistrer, "gespeichert" speichern), when the word is no entry itself (nor
/// at its singular: "estados" is estado, state).
pub(super) fn participle_of(lang: Lang, word: &str) -> Option<&'static str> {
    let singular = word.strip_suffix('s').unwrap_or(word);
    if exact(lang, word).is_some() || exact(lang, singular).is_some() {
        return None;
    }
    let base = singular.strip_suffix(['a', 'o']).filter(|_| matches!(lang, Lang::Es | Lang::Pt));
    let infinitives: Vec<String> = match lang {
        Lang::Es | Lang::Pt => {
            let base = base?;
            if let Some(b) = base.strip_suffix("ad") {
                vec![format!("{b}ar")]
            } else if let Some(b) = base.strip_suffix("id") {
                vec![format!("{b}er"), format!("{b}ir")]
            } else if let Some(b) = base.strip_suffix("íd") {
                // After a vowel: "concluído" concluir, "leído" leer.
                vec![format!("{b}ir"), format!("{b}er")]
            } else {
                return None;
            }
        }
        Lang::Fr => {
            let b = singular.strip_suffix('e').unwrap_or(singular).strip_suffix('é')?;
            vec![format!("{b}er")]
        }
        Lang::De => {
            let b = word.strip_prefix("ge")?;
            let b = ["ten", "tes", "ter", "te", "t"].iter().find_map(|e| b.strip_suffix(e))?;
            vec![format!("{b}en"), format!("{b}n")]
        }
        _ => return None,
    };
    infinitives.iter().filter(|w| w.chars().count() >= 4).find_map(|w| exact(lang, w))
}

/// Determiners of Spanish, French and Portuguese: the word after one starts a noun phrase.
pub(super) fn determiners(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Es => &[
            "el", "la", "los", "las", "un", "una", "unos", "unas", "al", "del", "mi", "mis", "tu", "tus", "su", "sus",
            "este", "esta", "estos", "estas", "ese", "esa",
        ],
        Lang::Fr => &[
            "le", "la", "l", "les", "un", "une", "des", "du", "au", "aux", "mon", "ma", "mes", "ton", "ta", "tes",
            "son", "sa", "ses", "ce", "cet", "cette", "ces", "nos", "vos", "leur", "leurs",
        ],
        Lang::Pt => &[
            "o", "os", "as", "um", "uma", "uns", "umas", "ao", "aos", "do", "da", "dos", "das", "no", "na", "nos",
            "nas", "pelo", "pela", "meu", "minha", "seu", "sua", "este", "esta", "esse", "essa",
        ],
        _ => &[],
    }
}

/// French determiners before a plural noun.
pub(super) const PLURAL_FR: &[&str] = &[
    "les",
    "des",
    "mes",
    "tes",
    "ses",
    "nos",
    "vos",
    "leurs",
    "ces",
    "aux",
    "quels",
    "quelles",
    "plusieurs",
    "certains",
    "certaines",
    "tous",
    "toutes",
    "derniers",
    "dernières",
    "nouveaux",
    "nouvelles",
];

/// A German compound read as two entries ("Quartalsbericht": Quartal + Bericht, with its
/// joining s), the longest head that splits it; or a verb with its prefix ("durchsuchen") read
/// as the verb (no head).
pub(super) fn compound(word: &str) -> Option<(Option<&'static str>, &'static str)> {
    compound_of(word, false)
}

pub(super) fn compound_of(word: &str, nested: bool) -> Option<(Option<&'static str>, &'static str)> {
    let chars: Vec<char> = word.chars().collect();
    for prefix in
        ["durch", "über", "unter", "zurück", "weg", "aus", "auf", "ein", "nach", "vor", "ab", "an", "er", "ver", "be"]
    {
        if let Some(english) =
            word.strip_prefix(prefix).filter(|r| r.chars().count() >= 4).and_then(|r| latin(Lang::De, r))
        {
            return Some((None, english));
        }
    }
    if !(8..=MAX_COMPOUND).contains(&chars.len()) {
        return None;
    }
    (3..=chars.len() - 4).find_map(|i| {
        let tail: String = chars[i..].iter().collect();
        let tail = latin(Lang::De, &tail)?;
        let head: String = chars[..i].iter().collect();
        let head = latin(Lang::De, &head)
            .or_else(|| head.strip_suffix('s').filter(|h| h.chars().count() >= 3).and_then(|h| latin(Lang::De, h)))
            // A head that is itself a compound ("Arzneimittel" in
            // "Arzneimittelinformationen") is read by its last part.
            .or_else(|| (!nested).then(|| compound_of(&head, true)).flatten().map(|(_, last)| last))?;
        Some((Some(head), tail))
    })
}

/// The dictionary endings of a Japanese verb whose stem is followed by `next`, likeliest first:
/// the te- and masu-forms tell most ("探して" 探す, "送って" 送る, "読んで" 読む).
pub(super) fn endings(next: Option<char>) -> [&'static str; 10] {
    match next {
        Some('し') => ["す", "る", "う", "く", "む", "つ", "ぶ", "ぐ", "ぬ", "い"],
        Some('っ') => ["う", "つ", "る", "す", "く", "む", "ぶ", "ぐ", "ぬ", "い"],
        Some('ん') => ["む", "ぶ", "ぬ", "る", "す", "う", "く", "つ", "ぐ", "い"],
        Some('い') => ["く", "ぐ", "る", "す", "う", "む", "つ", "ぶ", "ぬ", "い"],
        _ => ["る", "す", "う", "く", "む", "つ", "ぶ", "ぐ", "ぬ", "い"],
    }
}

/// The infinitives a verb form written in a request may come from: the imperative and present
/// forms of regular verbs ("abre" -> abrir, "busca" -> buscar, "sende" -> senden, "crée" ->
/// créer, "envie" -> enviar).
pub(super) fn infinitives(lang: Lang, word: &str) -> impl Iterator<Item = String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out: Vec<String> = Vec::new();
    if lang == Lang::Es {
        out.extend(enclitic(word));
    }
    if chars.len() >= 3 {
        let last = chars[chars.len() - 1];
        let body: String = chars[..chars.len() - 1].iter().collect();
        let endings: &[&str] = match (lang, last) {
            (Lang::Es | Lang::Pt, 'a') => &["ar"],
            (Lang::Es, 'e') => &["er", "ir", "ar"],
            (Lang::Pt, 'e') => &["er", "ir", "ar"],
            (Lang::De, 'e') => &["en"],
            (Lang::De, 't') if body.ends_with('e') => &["n"],
            (Lang::De, 't') => &["en"],
            (Lang::Fr, 'e') => &["er", "re", "ir"],
            (Lang::Fr, 's') => &["r", "re"],
            _ => &[],
        };
        // The spelling a stem's c, g or z takes before e: "busque" buscar, "pague" pagar,
        // "organice" organizar, "coloque" colocar, "comece" começar.
        if matches!(lang, Lang::Es | Lang::Pt) {
            if let Some(b) = word.strip_suffix("que") {
                out.push(format!("{b}car"));
            } else if let Some(b) = word.strip_suffix("gue") {
                out.push(format!("{b}gar"));
            } else if let Some(b) = word.strip_suffix("ce") {
                out.push(format!("{b}{}", if lang == Lang::Es { "zar" } else { "çar" }));
            }
        }
        out.extend(endings.iter().map(|e| format!("{body}{e}")));
        // German verbs in -eln and -ern: "wandle" -> wandeln, "ändere" -> ändern.
        if lang == Lang::De && last == 'e' {
            let mut b: Vec<char> = body.chars().collect();
            if let Some(&l @ ('l' | 'r')) = b.last() {
                b.pop();
                let stem: String = b.iter().collect();
                out.push(format!("{stem}e{l}n"));
                out.push(format!("{}n", body.strip_suffix('r').map_or(body.clone(), |s| format!("{s}er"))));
            }
        }
        // Plurals: "espacios" -> espacio, "reuniões" -> reunião, "réunions" -> réunion.
        match lang {
            Lang::Es | Lang::Pt | Lang::Fr if last == 's' => {
                out.push(body.clone());
                if let Some(b) = body.strip_suffix('e') {
                    out.push(b.to_string());
                }
                if let Some(b) = word.strip_suffix("ões") {
                    out.push(format!("{b}ão"));
                }
                // Spanish "acciones" acción, "reuniones" reunión (the plural drops the accent).
                if let Some(b) = word.strip_suffix("iones").filter(|_| lang == Lang::Es) {
                    out.push(format!("{b}ión"));
                }
                // Portuguese: "mensagens" mensagem, "canais" canal, "papéis" papel.
                if lang == Lang::Pt {
                    for (plural, singular) in [("ns", "m"), ("ais", "al"), ("éis", "el"), ("óis", "ol"), ("is", "l")]
                    {
                        if let Some(b) = word.strip_suffix(plural) {
                            out.push(format!("{b}{singular}"));
                        }
                    }
                }
            }
            Lang::De if matches!(last, 'n' | 's') => {
                out.push(body.clone());
                // Latin plurals: "Zentren" -> Zentrum, "Themen" -> Thema.
                if let Some(b) = word.strip_suffix("en") {
                    out.push(format!("{b}um"));
                    out.push(format!("{b}a"));
                }
            }
            _ => {}
        }
        // German participles and past forms: "gespeichert" -> speichern, "benötigten" ->
        // benötigen, "erstellte" -> erstellen.
        if lang == Lang::De {
            let w = word.strip_suffix("en").or_else(|| word.strip_suffix('e')).unwrap_or(word);
            if let Some(b) = w.strip_suffix('t') {
                let b = b.strip_prefix("ge").filter(|b| b.chars().count() >= 3).unwrap_or(b);
                out.push(format!("{b}en"));
                out.push(format!("{b}n"));
            }
        }
        // An adjective at its masculine singular: "nueva" nuevo (not "nuevas", news), "nova" novo.
        if matches!(lang, Lang::Es | Lang::Pt) {
            let singular = word.strip_suffix('s').unwrap_or(word);
            if let Some(b) = singular.strip_suffix('a') {
                out.push(format!("{b}o"));
            }
        }
        match lang {
            Lang::Es | Lang::Pt if matches!(last, 'a' | 'e') => out.push(format!("{word}r")),
            Lang::Fr if last == 'e' => out.push(format!("{word}r")),
            Lang::De => out.push(format!("{word}n")),
            _ => {}
        }
    }
    out.into_iter()
}

/// Terms of linear algebra that Spanish, French and Portuguese write as a noun and "own"
/// ("valores propios", "valeurs propres") or with "auto-" ("autovalores", "autovetores"), and
/// German with "Eigen-" ("Eigenwerte"), which the wordnets lack or misread.
const EIGEN: &[&str] = &["eigenvalue", "eigenvector", "eigenspace", "eigenfunction", "eigenstate", "eigenbasis"];
const OWN: &[&str] =
    &["propio", "propios", "propia", "propias", "propre", "propres", "próprio", "próprios", "própria", "próprias"];

/// An eigen-term ("valores propios", "autovalores", "Eigenwerte": eigenvalue) and how many words
/// it takes: the noun's English words, one of which (or its singular) is the term's second
/// part ("value", "vector"); any other noun is left to be read as it is ("automóvil").
pub(super) fn eigen(lang: Lang, word: &str, next: Option<&str>) -> Option<(&'static str, usize)> {
    let prefix = match lang {
        Lang::Es | Lang::Fr | Lang::Pt => "auto",
        Lang::De => "eigen",
        _ => return None,
    };
    let (noun, n) = if lang != Lang::De && next.is_some_and(|n| OWN.contains(&n)) {
        (word, 2)
    } else {
        (word.strip_prefix(prefix).filter(|r| r.chars().count() >= 4)?, 1)
    };
    let english = if lang == Lang::De { super::forms::noun(lang, noun) } else { latin(lang, noun) }?;
    english.split(' ').find_map(|e| {
        let e = e.strip_suffix('s').unwrap_or(e);
        EIGEN.iter().find(|t| t.strip_prefix("eigen") == Some(e)).map(|t| (*t, n))
    })
}

/// Spanish object pronouns written at the end of an imperative, longest first.
const CLITICS: &[&str] = &[
    "melo", "mela", "melos", "melas", "selo", "sela", "selos", "selas", "nos", "los", "las", "les", "me", "te", "se",
    "lo", "la", "le",
];

/// A Spanish imperative with its object pronouns written on ("muéstrame" muestra, "envíame"
/// envía, "búscalo" busca, "descárgalos" descarga): the imperative as written and without the
/// accent the pronoun added, and that form's infinitives. Only a word with an accent is read so
/// (the pronoun moves the stress), so "cola" or "tele" are not.
fn enclitic(word: &str) -> Vec<String> {
    const ACCENTED: [(char, char); 5] = [('á', 'a'), ('é', 'e'), ('í', 'i'), ('ó', 'o'), ('ú', 'u')];
    let Some(body) = CLITICS.iter().find_map(|c| word.strip_suffix(c)) else { return Vec::new() };
    if body.chars().count() < 3 || !body.chars().any(|c| ACCENTED.iter().any(|(a, _)| *a == c)) {
        return Vec::new();
    }
    let plain: String = body.chars().map(|c| ACCENTED.iter().find(|(a, _)| *a == c).map_or(c, |(_, p)| *p)).collect();
    let mut out = vec![body.to_string(), plain.clone()];
    if let Some(b) = plain.strip_suffix('a') {
        out.push(format!("{b}ar"));
    } else if let Some(b) = plain.strip_suffix('e') {
        out.extend([format!("{b}er"), format!("{b}ir")]);
    }
    out
}

/// Whether the characters after a verb make it a participle: Japanese passive "される",
/// "された", "されて" (保存されている, saved), Chinese perfective "了" (保存了, saved).
pub(super) fn passive(lang: Lang, after: &[char]) -> bool {
    match lang {
        Lang::Ja => after.starts_with(&['さ', 'れ']),
        Lang::Zh => after.first() == Some(&'了'),
        _ => false,
    }
}

/// Irregular English past participles of verbs requests use.
pub(super) const IRREGULAR: &[(&str, &str)] = &[
    ("keep", "kept"),
    ("send", "sent"),
    ("make", "made"),
    ("get", "got"),
    ("find", "found"),
    ("hold", "held"),
    ("write", "written"),
    ("take", "taken"),
    ("give", "given"),
    ("set", "set"),
    ("put", "put"),
    ("build", "built"),
    ("run", "run"),
    ("read", "read"),
    ("buy", "bought"),
    ("pay", "paid"),
    ("lose", "lost"),
    ("leave", "left"),
    ("bring", "brought"),
    ("show", "shown"),
    ("choose", "chosen"),
    ("begin", "begun"),
    ("do", "done"),
    ("be", "been"),
    ("go", "gone"),
    ("see", "seen"),
    ("know", "known"),
    ("tell", "told"),
    ("say", "said"),
    ("sell", "sold"),
    ("spend", "spent"),
    ("meet", "met"),
    ("break", "broken"),
    ("freeze", "frozen"),
    ("hide", "hidden"),
    ("forget", "forgotten"),
    ("commit", "committed"),
    ("submit", "submitted"),
    ("forward", "forwarded"),
];

/// An English verb's past participle ("save" saved, "store" stored, "send" sent, "copy"
/// copied, "stop" stopped).
pub(super) fn participle(verb: &str) -> String {
    if let Some((_, p)) = IRREGULAR.iter().find(|(v, _)| *v == verb) {
        return (*p).to_string();
    }
    let vowel = |c: char| "aeiou".contains(c);
    let chars: Vec<char> = verb.chars().collect();
    match chars.as_slice() {
        [.., 'e'] => format!("{verb}d"),
        [.., c, 'y'] if !vowel(*c) => format!("{}ied", &verb[..verb.len() - 1]),
        // One syllable ending in a vowel and a consonant doubles it.
        [.., a, b, c]
            if !vowel(*a)
                && vowel(*b)
                && !vowel(*c)
                && !"wxy".contains(*c)
                && chars.iter().filter(|c| vowel(**c)).count() == 1 =>
        {
            format!("{verb}{c}ed")
        }
        _ => format!("{verb}ed"),
    }
}

/// German determiners of a singular genitive.
const GENITIVE_DE: &[&str] =
    &["des", "eines", "meines", "deines", "seines", "ihres", "unseres", "eures", "dieses", "jedes", "keines"];

/// Spanish and Portuguese determiners before a plural noun.
const PLURAL_ES: &[&str] = &[
    "los", "las", "mis", "tus", "sus", "unos", "unas", "estos", "estas", "esos", "esas", "nuestros", "nuestras",
    "algunos", "algunas", "varios", "varias", "qué", "cuáles", "cuántos", "cuántas",
];
const PLURAL_PT: &[&str] = &[
    "os", "as", "meus", "minhas", "seus", "suas", "uns", "umas", "estes", "estas", "esses", "essas", "aos", "dos",
    "das", "nos", "nas", "pelos", "pelas", "alguns", "algumas", "vários", "várias", "quais", "quantos", "quantas",
];

/// Whether the word `all[k]` is a plural noun: in Spanish, French and Portuguese a word ending in
/// -s (-x) right after a plural determiner and not before another such word (there it is an
/// adjective: "los últimos mensajes"); in German a noun (`capital`) that is no entry itself but
/// is at its singular ("Kommentare" Kommentar).
pub(super) fn plural_noun<S: AsRef<str>>(lang: Lang, all: &[S], k: usize, capital: bool) -> bool {
    let word = all[k].as_ref();
    if lang == Lang::De {
        // After a genitive determiner an -s is the genitive's: "des Benutzers" one user.
        let genitive = k > 0 && GENITIVE_DE.contains(&all[k - 1].as_ref());
        return capital
            && !genitive
            && exact(lang, word).is_none()
            && singulars(lang, word).iter().any(|s| exact(lang, s).is_some());
    }
    let determiners = match lang {
        Lang::Es => PLURAL_ES,
        Lang::Pt => PLURAL_PT,
        Lang::Fr => PLURAL_FR,
        _ => return false,
    };
    let prenominal = match lang {
        Lang::Es => PRENOMINAL_ES,
        Lang::Pt => PRENOMINAL_PT,
        _ => PRENOMINAL_FR,
    };
    let ends = |w: &str| w.chars().count() > 3 && (w.ends_with('s') || (lang == Lang::Fr && w.ends_with('x')));
    // A Spanish or Portuguese request's first word in -s is a bare plural noun ("ejecuciones
    // recientes de ...": runs): imperatives do not end in -s there but with a pronoun
    // ("descárgalos", "muéstranos"). French imperatives end in -s ("convertis"), so not there.
    let bare = k == 0 && matches!(lang, Lang::Es | Lang::Pt) && enclitic(word).is_empty();
    (bare || k > 0 && (determiners.contains(&all[k - 1].as_ref()) || prenominal.contains(&all[k - 1].as_ref())))
        && ends(word)
        && !prenominal.contains(&word)
}

/// Plural adjectives written before their noun (most follow it: "las aplicaciones
/// personalizadas"): not nouns themselves, and a determiner of the noun that follows ("los
/// últimos mensajes").
const PRENOMINAL_ES: &[&str] = &[
    "últimos",
    "últimas",
    "próximos",
    "próximas",
    "primeros",
    "primeras",
    "nuevos",
    "nuevas",
    "mejores",
    "principales",
    "otros",
    "otras",
    "muchos",
    "muchas",
    "pocos",
    "pocas",
    "varios",
    "varias",
    "todos",
    "todas",
];
const PRENOMINAL_PT: &[&str] = &[
    "últimos",
    "últimas",
    "próximos",
    "próximas",
    "primeiros",
    "primeiras",
    "novos",
    "novas",
    "melhores",
    "principais",
    "outros",
    "outras",
    "muitos",
    "muitas",
    "poucos",
    "poucas",
    "vários",
    "várias",
    "todos",
    "todas",
];
const PRENOMINAL_FR: &[&str] = &[
    "derniers",
    "dernières",
    "prochains",
    "prochaines",
    "premiers",
    "premières",
    "nouveaux",
    "nouvelles",
    "meilleurs",
    "meilleures",
    "autres",
    "principaux",
    "principales",
    "plusieurs",
    "quelques",
    "tous",
    "toutes",
];

/// English nouns that take no plural.
const UNCOUNTABLE: &[&str] = &[
    "data",
    "information",
    "news",
    "software",
    "hardware",
    "equipment",
    "advice",
    "feedback",
    "money",
    "weather",
    "research",
    "music",
    "media",
    "metadata",
    "staff",
    "traffic",
    "evidence",
    "knowledge",
    "progress",
    "mail",
    "email",
    "inventory",
    "stock",
    "spam",
    "code",
];

/// The English plural of a noun ("comment" comments, "entry" entries, "box" boxes); a word the
/// rules do not fit (uncountable, already plural, not a plain word) as it is.
pub(super) fn english_plural(word: &str) -> String {
    let plain = word.len() >= 3 && word.bytes().all(|b| b.is_ascii_lowercase());
    if !plain || UNCOUNTABLE.contains(&word) || word.ends_with('s') {
        return word.to_string();
    }
    if ["x", "z", "ch", "sh"].iter().any(|e| word.ends_with(e)) {
        return format!("{word}es");
    }
    if let Some(stem) = word.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{word}s")
}
