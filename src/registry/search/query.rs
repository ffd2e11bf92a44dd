//! Reading a query: tokens, verbs as intents, arguments, product mentions, word alternatives.

use super::hash::{Map, Set};
use std::borrow::Cow;

use super::hash::deletion_hashes;
use super::text::{
    self, canonicalize_query, is_issue_key, joined_by_dash_or_slash, stem, stem_str, tokenize, tokenize_into,
};
use super::*;

mod forms;
use forms::{implied_verb, participle_verb, phrasal_verbs, questions, quoted_words};

/// One token of the query, before matching.
#[derive(Clone)]
pub(super) struct Token {
    /// An argument (a number, a name, an address): weighs little when unknown.
    arg: bool,
    /// Not to be matched at all (an email address, a path, a URL).
    opaque: bool,
    /// Follows a clause break (",", ";", ...): a verb may start here.
    brk: bool,
}

/// What a query word is to the query.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Word,
    /// Stands where the query's verb would, but is no verb we know.
    Lead,
    /// A specific verb ("approve", "archive"): a word too, when the catalogue knows it.
    Verb,
}

/// A word expanded, and the products (with confidence) it names.
type Expanded = (Word, Vec<(&'static str, f32)>);

/// The most words a request's memos make room for at the start (they grow past it as maps do):
/// a pasted page of one word repeated must not reserve a map entry for each.
pub(super) const MEMO_ROOM: usize = 512;

/// The room a request's memos make at the start: about as many words as `text` has, from its
/// length (a word and its space are five bytes or more, most of them), at most [`MEMO_ROOM`].
pub(super) fn memo_room(text: &str) -> usize {
    (text.len() / 5).min(MEMO_ROOM)
}

/// What reading a request's texts shares: a request of several steps is read clause by clause
/// (and whole, when it has two), the same words again, and each word's expansion (its
/// alternatives, typos and the products it names) is the same wherever it stands.
#[derive(Default)]
pub(super) struct Memo {
    /// Off for a request of one text, which reads each word once anyway.
    on: bool,
    /// word -> for each (argument, with synonyms) ([`Memo::slot`]), the word expanded and the
    /// products it names.
    expanded: Map<String, [Option<Expanded>; 4]>,
    /// An unknown word at a verb's place -> the verb it is a typo of.
    verb_typos: Map<String, Option<&'static str>>,
    /// A word -> the two known words it is made of.
    compounds: Map<String, Option<(String, String)>>,
}

impl Memo {
    /// A memo for a request of `words` words (room made for them once: grown a word at a
    /// time, its maps were rebuilt several times a long request).
    pub(super) fn new(on: bool, words: usize) -> Memo {
        let mut memo = Memo { on, ..Memo::default() };
        if on {
            memo.expanded.reserve(words.min(MEMO_ROOM));
        }
        memo
    }

    fn slot(arg: bool, synonyms: bool) -> usize {
        usize::from(arg) * 2 + usize::from(synonyms)
    }
}

/// The most words a request that asks for "all" of a kind has ("all my drive files"); a longer
/// one's "all" is seldom its ask.
const MANY_WITHIN: usize = 20;

impl Parsed {
    /// A request's reading made of its clauses' readings, in order: their words, the asks of
    /// the first clause that asks anything the request's (every later clause's weigh as later
    /// verbs do), the products any of them names at the most confidence given.
    pub(super) fn merged<'a>(clauses: impl IntoIterator<Item = &'a Parsed>) -> Parsed {
        let mut out = Parsed {
            words: Vec::new(),
            verbs: Vec::new(),
            mentioned: Map::default(),
            phrase_hits: Set::default(),
            verbs_only: true,
            meaningful: 0,
            local: false,
            identifier: false,
            many: false,
            plain: 0,
        };
        let mut any = false;
        let mut many = false;
        // Whether an earlier clause asked something (a verb weighed above a later one's).
        let mut asked = false;
        for p in clauses {
            any = true;
            out.words.extend(p.words.iter().cloned());
            out.verbs.extend(p.verbs.iter().map(|(map, factor, stem)| {
                (*map, if asked && *factor > LATER_VERB { LATER_VERB } else { *factor }, stem.clone())
            }));
            asked |= p.verbs.iter().any(|v| v.1 > LATER_VERB);
            for (&product, &c) in &p.mentioned {
                let e = out.mentioned.entry(product).or_insert(c);
                *e = e.max(c);
            }
            out.phrase_hits.extend(p.phrase_hits.iter().copied());
            out.verbs_only &= p.verbs_only;
            out.meaningful += p.meaningful;
            out.local |= p.local;
            out.identifier |= p.identifier;
            out.plain += p.plain;
            many |= p.many;
        }
        out.verbs_only &= any;
        // (As a reading of the whole asks it: a long task's "all" is seldom its ask.)
        out.many = many && !out.identifier && out.plain <= MANY_WITHIN;
        out
    }
}

impl SearchIndex {
    /// A known word's weight: its rarity, as far as the catalogue really carries it.
    fn idf(&self, id: u32) -> f32 {
        let idf = self.idf[id as usize];
        let unknown = UNKNOWN_PLAIN;
        if idf <= unknown { idf } else { unknown + (idf - unknown) * self.term_max[id as usize] }
    }

    fn mention(mentioned: &mut Map<&'static str, f32>, products: &[&'static str], confidence: f32) {
        for p in products {
            let e = mentioned.entry(p).or_insert(confidence);
            *e = e.max(confidence);
        }
    }

    /// Which way a request without a verb of its own moves something between the user's machine
    /// and a service it names outright: "they're in a PDF on my laptop and I want them on google
    /// drive" uploads, "a copy of the deck from drive on my laptop" downloads. "from" marks the
    /// source; without it, the place said first is.
    fn transfer(&self, plain: &[&str], mentioned: &Map<&'static str, f32>) -> Option<&'static str> {
        let machine = plain.iter().position(|w| {
            lexicon::classes(w) & lexicon::LOCAL_WORD != 0 || matches!(*w, "machine" | "computer" | "mac")
        })?;
        let named =
            |w: &&str| self.products.get(*w).into_iter().flatten().any(|p| mentioned.get(p).is_some_and(|c| *c >= 1.0));
        let service = plain.iter().position(named)?;
        let from_before = |at: usize| plain[at.saturating_sub(2)..at].contains(&"from");
        let upload = if from_before(service) {
            false
        } else if from_before(machine) {
            true
        } else {
            machine < service
        };
        Some(if upload { "upload" } else { "download" })
    }

    /// The verb `w` (four bytes or more) is one edit from, the first in `verbs`' order.
    fn verb_typo(&self, w: &str) -> Option<&'static str> {
        // (One edit leaves a word of three letters or more its first letter or its last: a
        // cheap test that rules out most verbs before the full one.)
        let ends = |v: &str| {
            let (a, b) = (w.as_bytes(), v.as_bytes());
            a.first() == b.first() || a.last() == b.last()
        };
        (w.len().saturating_sub(1)..=w.len() + 1)
            .filter_map(|len| self.verbs_by_len.get(len))
            .filter_map(|bucket| bucket.iter().find(|(_, v)| (!v.is_ascii() || ends(v)) && text::plausible_typo(w, v)))
            .min_by_key(|(at, _)| *at)
            .map(|&(_, v)| v)
    }

    /// The integration called `name`, when this catalogue has it.
    fn product(&self, name: &str) -> Option<&'static str> {
        self.docs.iter().map(|d| d.integration).find(|i| *i == name)
    }

    /// Reads a query into weighted words, verbs and product mentions, with what the request's
    /// other texts read already.
    pub(super) fn parse_with(&self, query: &str, memo: &mut Memo) -> Parsed {
        let mut mentioned: Map<&'static str, f32> = Map::default();
        // A word already lower-case is borrowed from the request.
        let mut tokens: Vec<(Cow<'_, str>, Token)> = Vec::new();
        // What issue keys and #channels stand for: a product (and an issue).
        let mut hints: Vec<(&'static str, f32)> = Vec::new();
        let mut issue_key = false;
        // Words an argument implies, with the most they may weigh.
        let mut implied: Vec<(&str, f32)> = Vec::new();
        let mut brk = false;
        // A path on the user's machine ("/tmp/data", "~/notes.md", "./src"): the request is local.
        let mut local_path = false;
        // A word's parts, one list for every word.
        let mut parts: Vec<String> = Vec::new();
        let quoted = quoted_words(query);
        for (i, raw) in query.split_whitespace().enumerate() {
            let path = is_local_path(raw);
            if path {
                local_path = true;
                // A path without an extension is most likely a folder.
                let last = raw.trim_end_matches(|c: char| !c.is_alphanumeric()).rsplit('/').next().unwrap_or_default();
                if !last.contains('.') && !implied.iter().any(|(w, _)| *w == "directory") {
                    implied.push(("directory", HINT_WEIGHT));
                }
            }
            // (Bytes, not characters: the marks are ASCII, and no other character's last byte is.)
            let breaks = matches!(raw.as_bytes().last(), Some(b',' | b';' | b':' | b'.' | b'!' | b'?' | b')'));
            let raw = raw.trim_matches(|c: char| !(c.is_alphanumeric() || "#@$".contains(c)));
            let brk = std::mem::replace(&mut brk, breaks) && !raw.is_empty();
            if raw.is_empty() {
                continue;
            }
            if quoted.get(i).copied().unwrap_or(false) {
                // Quoted text is what to write or look for ("post \"deploy finished\" in #ops"),
                // not what the request asks.
                tokens.push((raw.to_lowercase().into(), Token { arg: true, opaque: true, brk }));
                continue;
            }
            if is_issue_key(raw) {
                // An issue key is an argument, but says which tracker: Linear's shape, Jira's too.
                issue_key = true;
                for (p, c) in [("linear", 1.0), ("jira", IMPLIED)] {
                    if let Some(p) = self.product(p) {
                        Self::mention(&mut mentioned, &[p], c);
                        hints.push((p, c));
                    }
                }
                continue;
            }
            if let Some(channel) = raw.strip_prefix('#')
                && channel.chars().next().is_some_and(char::is_alphabetic)
                && channel.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            {
                if let Some(p) = self.product("slack") {
                    Self::mention(&mut mentioned, &[p], 1.0);
                    hints.push((p, 1.0));
                }
                continue;
            }
            // (A path's folders are names: "~/code/app" asks nothing of apps.)
            let opaque = path
                || raw.starts_with('@')
                || raw.contains('@')
                || raw.contains("://")
                || raw
                    .char_indices()
                    .any(|(j, c)| c == '.' && j > 0 && raw[j + 1..].chars().next().is_some_and(char::is_alphanumeric));
            // A word of small letters and digits only is its own one part (most words are).
            let own = raw.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            if own {
                parts.clear();
            } else {
                tokenize_into(raw, &mut parts);
            }
            if opaque || (!own && parts.is_empty()) {
                tokens.push((raw.to_lowercase().into(), Token { arg: true, opaque: true, brk }));
                // What the argument is says something: a file name, an email address.
                if raw.contains('@') && raw.contains('.') {
                    implied.push(("email", 0.5));
                } else if !raw.contains("://")
                    && let Some((_, ext)) = raw.rsplit_once('.')
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                {
                    implied.push(("file", HINT_WEIGHT));
                }
                continue;
            }
            // (A zone's abbreviation has four letters at most, and lower-casing adds letters, never
            // takes any away. A short ASCII word is lower-cased on the stack: most are no zone.)
            let is_zone = |lower: &str| {
                lexicon::TIME_ZONES.contains(lower)
                    || lower
                        .split_once('/')
                        .is_some_and(|(area, city)| lexicon::ZONE_AREAS.contains(&area) && !city.is_empty())
            };
            let zone = if raw.len() <= 4 && raw.is_ascii() && !raw.contains('/') {
                let mut short = [0u8; 4];
                short[..raw.len()].copy_from_slice(raw.as_bytes());
                short.make_ascii_lowercase();
                let lower = std::str::from_utf8(&short[..raw.len()]).unwrap_or_default();
                is_zone(lower).then(|| lower.to_string())
            } else {
                (raw.contains('/') || raw.chars().nth(4).is_none()).then(|| raw.to_lowercase()).filter(|l| is_zone(l))
            };
            if let Some(lower) = zone {
                // "CET", "America/Chicago": an argument that says the query is about time zones.
                tokens.push((lower.into(), Token { arg: true, opaque: true, brk }));
                if !implied.iter().any(|(w, _)| *w == "timezone") {
                    implied.push(("timezone", HINT_WEIGHT));
                }
                continue;
            }
            let capitalised = i > 0 && raw.chars().next().is_some_and(char::is_uppercase);
            if !own && parts.len() > 1 && (raw.contains('/') || joined_by_dash_or_slash(raw)) {
                let joined = parts.concat();
                if self.terms.contains_key(&joined) || lexicon::PHRASES.iter().any(|(_, c)| *c == joined) {
                    tokens.push((joined.into(), Token { arg: false, opaque: false, brk }));
                } else if joined_by_dash_or_slash(raw) && parts.iter().all(|p| self.knows(p)) {
                    tokens.extend(parts.drain(..).map(|p| (p.into(), Token { arg: false, opaque: false, brk })));
                } else {
                    tokens.push((raw.to_lowercase().into(), Token { arg: true, opaque: true, brk }));
                }
                continue;
            }
            let dollar = raw.starts_with('$');
            let own = own.then_some(Cow::Borrowed(raw));
            for p in own.into_iter().chain(parts.drain(..).map(Cow::Owned)) {
                let arg = capitalised || dollar || p.bytes().any(|c| c.is_ascii_digit());
                // (Most words are too short to be two words: no memo is asked about them.)
                let compound = if !may_be_compound(&p) {
                    None
                } else {
                    match memo.compounds.get(p.as_ref()) {
                        Some(c) => c.clone(),
                        None if !memo.on => self.split_compound(&p),
                        None => {
                            let c = self.split_compound(&p);
                            memo.compounds.insert(p.to_string(), c.clone());
                            c
                        }
                    }
                };
                match compound {
                    Some((a, b)) => {
                        tokens.push((a.into(), Token { arg, opaque: false, brk }));
                        tokens.push((b.into(), Token { arg, opaque: false, brk: false }));
                    }
                    None => tokens.push((p, Token { arg, opaque: false, brk })),
                }
            }
        }
        let mut tokens = canonicalize_query(tokens);
        phrasal_verbs(&mut tokens);
        let plain: Vec<&str> = tokens.iter().filter(|(_, t)| !t.opaque).map(|(w, _)| w.as_ref()).collect();
        if plain.windows(2).any(|w| matches!(w[0], "my" | "our") && lexicon::SCHEDULE_DAYS.contains(&w[1])) {
            // "what does my thursday look like": the day as the person's schedule.
            implied.push(("agenda", HINT_WEIGHT));
        }
        // The tools whose keyword phrase the query's 2- to 4-token runs are.
        let mut phrase_hits: Set<u32> = Set::default();
        let mut gram = String::new();
        for (i, first) in plain.iter().enumerate() {
            // A run that begins no keyword phrase is no phrase however it goes on.
            if !self.phrases.contains_key(*first) {
                continue;
            }
            gram.clear();
            gram.push_str(first);
            for next in plain[i + 1..].iter().take(3) {
                gram.push(' ');
                gram.push_str(next);
                match self.phrases.get(gram.as_str()) {
                    Some(tools) => phrase_hits.extend(tools),
                    None => break,
                }
            }
        }
        let has_run = |phrase: &str| {
            // (The first word tells most runs apart before the phrase is split again.)
            let first = phrase.split(' ').next().unwrap_or_default();
            plain.windows(phrase.split(' ').count()).any(|w| w[0] == first && w.iter().copied().eq(phrase.split(' ')))
        };
        // A number or key naming one item ("issue 4521", "PAY-123", "commit abc123f").
        let identifier = issue_key
            || tokens.iter().any(|(w, t)| {
                !t.opaque
                    && w.len() >= 2
                    && w.chars().all(|c| c.is_ascii_hexdigit())
                    && w.chars().any(|c| c.is_ascii_digit())
                    && (w.chars().all(|c| c.is_ascii_digit()) || w.len() >= 6)
            });
        // A shell command counts as one where a command stands, first ("cat the config", not
        // "cat pictures").
        let local = local_path
            || plain.iter().any(|w| lexicon::classes(w) & lexicon::LOCAL_WORD != 0)
            || plain.first().is_some_and(|w| lexicon::SHELL_COMMANDS.contains(w))
            || lexicon::LOCAL_PHRASES.iter().any(|p| has_run(p));
        // Where a verb may stand: a clause's first word after subjects and modals ("I need to",
        // "could you", "please") or after "to", "so", "and", "then". Not after "my", "the":
        // "my open issues", "our deploy pipeline" are things.
        let mut verb_position = vec![false; tokens.len()];
        // Unknown words inside "with ...", "for ...", "in ..." are names, places, titles.
        let mut argument = vec![false; tokens.len()];
        let mut at_start = true;
        let mut in_phrase = false;
        let mut naming = 0;
        // After "so I can", "so that we": the clause says what for ("find the email so I can
        // reply"), and its verb is no ask.
        let mut purpose = false;
        // A purpose clause's verb ("so I can put them in my slides"): neither an ask nor a word.
        let mut purpose_verb = vec![false; tokens.len()];
        for (i, (w, t)) in tokens.iter().enumerate() {
            let w: &str = w;
            if t.brk {
                at_start = true;
                in_phrase = false;
                naming = 0;
                purpose = false;
            }
            if at_start {
                if lexicon::SKIPPABLE.contains(w) {
                    continue;
                }
                if std::mem::take(&mut purpose) {
                    at_start = false;
                    purpose_verb[i] = !t.opaque && self.verbs.contains_key(w);
                    continue;
                }
                // "start by finding", "begin by listing": the verb is the one after "by".
                if matches!(w, "start" | "begin") && tokens.get(i + 1).is_some_and(|(n, _)| n == "by") {
                    continue;
                }
                if w == "by" && i > 0 && matches!(tokens[i - 1].0.as_ref(), "start" | "begin") {
                    continue;
                }
                verb_position[i] = true;
                at_start = false;
                in_phrase = false;
                continue;
            }
            if in_phrase
                && w == "and"
                && !tokens.get(i + 1).is_some_and(|(next, _)| self.verbs.contains_key(next.as_ref()))
            {
                // "with alice and bob": still the same phrase ("... and send it": a new clause).
                continue;
            }
            if w == "be"
                && i > 0
                && tokens.get(i + 1).is_some_and(|(n, t)| !t.opaque && participle_verb(n).is_some())
                && matches!(tokens[i - 1].0.as_ref(), "can" | "could" | "should" | "must" | "will" | "would" | "may")
            {
                // "the MR can be merged now": the participle stands where the verb would.
                at_start = true;
                continue;
            }
            let class = lexicon::classes(w);
            if class & lexicon::CLAUSE_MARKER != 0 {
                at_start = true;
                purpose = w == "so"
                    && tokens
                        .get(i + 1)
                        .is_some_and(|(n, _)| matches!(n.as_ref(), "i" | "we" | "you" | "they" | "that"));
            }
            if class & lexicon::NAMING_WORD != 0 {
                naming = 3;
                continue;
            }
            if naming > 0 && !self.stopwords.contains(w) {
                // "a page called roadmap": a name, whatever the words.
                argument[i] = true;
                naming -= 1;
                continue;
            }
            if class & lexicon::PREPOSITION != 0 {
                in_phrase = true;
            } else if class & lexicon::POSSESSIVE != 0 {
                in_phrase = false;
            } else if in_phrase && !t.opaque && !self.knows(w) {
                argument[i] = true;
            }
        }
        let mut verbs = Vec::new();
        let mut words: Vec<(&str, Token, Role)> = Vec::new();
        // The words as they stand, should the query be verbs only.
        let mut fallback: Vec<(&str, Token)> = Vec::new();
        let mut first_verb = true;
        // A question asks to see how things stand ("is PR 301 merged yet", "has anyone replied
        // to my email", "who commented on the page", "did the team finish the checklist"): the
        // actions a question's clause names are states asked about, words and not the request's
        // verbs; a request with no other verb reads ([`questions`]).
        let question = questions(&tokens);
        for (i, (w, t)) in tokens.iter().enumerate() {
            let w: &str = w;
            if purpose_verb[i] || !t.opaque && (self.stopwords.contains(w) || w.chars().count() < 2) {
                continue;
            }
            if question.get(i).copied().unwrap_or(false) && !t.opaque && self.verbs.contains_key(w) {
                fallback.push((w, t.clone()));
                words.push((w, t.clone(), Role::Word));
                continue;
            }
            if !t.opaque && lexicon::classes(w) & lexicon::LOCAL_WORD != 0 {
                continue;
            }
            let mut t = t.clone();
            t.arg |= argument[i];
            fallback.push((w, t.clone()));
            let mut verb = if t.opaque { None } else { self.verbs.get_key_value(w) };
            if verb.is_none() && verb_position[i] && !t.opaque && i > 0 && tokens[i - 1].0 == "be" {
                // A passive ask ("needs to be shared", "has to be archived"): the participle's
                // verb. (Only after "be": a request's first word "shared files", "closed
                // issues" is a thing's state.)
                verb = participle_verb(w).and_then(|v| self.verbs.get_key_value(v.as_str()));
            }
            if verb.is_none() && verb_position[i] && !t.opaque && w.chars().count() >= 4 && !self.is_word(w) {
                // "opne a PR", "sned an email".
                let find = || self.verb_typo(w);
                let typo = match memo.verb_typos.get(w) {
                    Some(v) => *v,
                    None if !memo.on => find(),
                    None => {
                        let v = find();
                        memo.verb_typos.insert(w.to_string(), v);
                        v
                    }
                };
                verb = typo.and_then(|v| self.verbs.get_key_value(v));
            }
            // A verb's word after a determiner, off a verb's place, is a thing ("leave a remark
            // on the card" comments, it makes no card): a word, no action; where things go says
            // what is done to them ("move it to the trash").
            // (Asked only of a verb's word off a verb's place: few words of a request.)
            let determined = || {
                i > 0 && {
                    let before: &str = &tokens[i - 1].0;
                    let destination = i > 1 && matches!(tokens[i - 2].0.as_ref(), "to" | "into");
                    (lexicon::DEFINITE.contains(&before) || matches!(before, "a" | "an" | "any" | "every" | "each"))
                        && !destination
                }
            };
            match verb {
                Some((&key, map)) if verb_position[i] => {
                    // "open a ticket" makes one, "open the ticket" / "open my notes" reads one.
                    let next = tokens.get(i + 1).map(|(n, _)| n.as_ref());
                    let map = if lexicon::READ_WITH_DEFINITE.contains(&key)
                        && next.is_some_and(|n| lexicon::DEFINITE.contains(&n))
                    {
                        &lexicon::OPEN_EXISTING
                    } else {
                        map
                    };
                    let factor = if first_verb { 1.0 } else { LATER_VERB };
                    first_verb = false;
                    verbs.push((*map, factor, stem(key)));
                    if key == "page"
                        && let Some(p) = self.product("pagerduty")
                    {
                        Self::mention(&mut mentioned, &[p], 0.9);
                        hints.push((p, 0.9));
                    }
                    if lexicon::OBJECT_VERBS.contains(key) {
                        words.push((key, t, Role::Word));
                    } else if !lexicon::GENERIC_VERBS.contains(key) {
                        words.push((key, t, Role::Verb));
                    }
                }
                Some((&key, map)) if !self.dual.contains(key) && !determined() => {
                    verbs.push((*map, OFF_VERB, stem(key)));
                    if !lexicon::GENERIC_VERBS.contains(key) {
                        words.push((key, t, Role::Verb));
                    }
                }
                _ => {
                    let role = if verb_position[i] && first_verb { Role::Lead } else { Role::Word };
                    words.push((w, t, role));
                }
            }
        }
        if let Some((&verb, map, over, cue)) = implied_verb(&plain, verbs.is_empty())
            .and_then(|(verb, over, cue)| self.verbs.get_key_value(verb).map(|(v, m)| (v, m, over, cue)))
        {
            if over {
                // The idiom's own verb ("forgetting" of "I keep forgetting") asks for nothing.
                verbs.clear();
                words.retain(|(w, _, _)| !cue.split(' ').any(|c| c == *w));
            }
            verbs.push((*map, IMPLIED_VERB, stem(verb)));
            if !lexicon::GENERIC_VERBS.contains(verb) {
                // A verb of its own words ("remind"), matched as a request's verb is.
                words.push((verb, Token { arg: false, opaque: false, brk: false }, Role::Verb));
            }
        }
        if question.contains(&true)
            && verbs.is_empty()
            && let Some((&verb, map)) = self.verbs.get_key_value("show")
        {
            verbs.push((*map, 1.0, stem(verb)));
        }
        let mut verbs_only = false;
        if words.is_empty() && hints.is_empty() {
            // Only verbs ("create"): match them as words, for what little that says.
            verbs_only = !fallback.is_empty();
            words = fallback.into_iter().map(|(w, t)| (w, t, Role::Word)).collect();
        }
        let mut meaningful = 0;
        let mut expanded: Vec<Word> = Vec::with_capacity(words.len() + 2);
        for (w, t, role) in words {
            let word = self.expand_memo(w, &t, &mut mentioned, role != Role::Verb, memo);
            if role == Role::Verb && word.alts.is_empty() {
                // A verb the catalogue never mentions says nothing more than its intent.
                continue;
            }
            let mut word = word;
            word.anchor &= role != Role::Verb;
            if !t.arg && !t.opaque {
                meaningful += 1;
            }
            if role == Role::Lead && !word.direct && !t.arg && !t.opaque {
                // The query starts with an action the catalogue does not know ("reserve",
                // "translate"): no tool's verb answers it. Half so when the word may be a typo.
                let unknown: lexicon::VerbMap = if word.alts.is_empty() { &[] } else { &[("*", 0.5)] };
                verbs.push((unknown, 1.0, stem(w)));
            }
            expanded.push(word);
        }
        for (w, cap) in implied {
            let mut word = self.expand(w, &Token { arg: false, opaque: false, brk: false }, &mut mentioned);
            word.weight = word.weight.min(cap);
            expanded.push(word);
        }
        if !hints.is_empty() {
            let mut alts: Vec<(u32, f32)> = Vec::new();
            for (p, c) in &hints {
                if let Some(&id) = self.terms.get(&p.replace('_', "")) {
                    alts.push((id, *c));
                }
            }
            expanded.push(Word { alts: alts.into(), weight: HINT_WEIGHT, anchor: true, direct: true });
            if issue_key {
                let mut issue = self.expand("issue", &Token { arg: false, opaque: false, brk: false }, &mut mentioned);
                issue.weight = HINT_WEIGHT;
                expanded.push(issue);
            }
        }
        // (After the words are read: a product named outright is known then.)
        if local
            && !verbs.iter().any(|v| v.1 >= LATER_VERB)
            && let Some(verb) = self.transfer(&plain, &mentioned)
            && let Some((&verb, map)) = self.verbs.get_key_value(verb)
        {
            verbs.push((*map, IMPLIED_VERB, stem(verb)));
        }
        // "all my drive files", "all of them", "every contact": a quantifier over a plural in
        // the next few words (or, for "every", any word), in a request of one ask (a long task's
        // "all" is seldom its ask).
        let many = !identifier
            && plain.len() <= MANY_WITHIN
            && plain.iter().enumerate().any(|(i, w)| {
                let mut next = plain[i + 1..].iter().take(4);
                match *w {
                    "all" => next.any(|n| *n == "them" || n.len() > 3 && n.ends_with('s') && !n.ends_with("ss")),
                    "every" => next.next().is_some(),
                    _ => false,
                }
            });
        let plain = plain.len();
        Parsed {
            words: expanded,
            verbs,
            mentioned,
            phrase_hits,
            verbs_only,
            meaningful,
            local,
            identifier,
            many,
            plain,
        }
    }

    /// [`Self::expand_as`] through the request's memo: the same word, products named the same
    /// (a product's confidence is the most any word gives it, in whatever order they come).
    fn expand_memo(
        &self,
        word: &str,
        token: &Token,
        mentioned: &mut Map<&'static str, f32>,
        synonyms: bool,
        memo: &mut Memo,
    ) -> Word {
        if token.opaque || !memo.on {
            return self.expand_as(word, token, mentioned, synonyms);
        }
        let slot = Memo::slot(token.arg, synonyms);
        if let Some((w, named)) = memo.expanded.get(word).and_then(|e| e[slot].as_ref()) {
            for &(p, c) in named {
                Self::mention(mentioned, &[p], c);
            }
            return w.clone();
        }
        let mut named: Map<&'static str, f32> = Map::default();
        let w = self.expand_as(word, token, &mut named, synonyms);
        let named: Vec<(&'static str, f32)> = named.into_iter().collect();
        for &(p, c) in &named {
            Self::mention(mentioned, &[p], c);
        }
        memo.expanded.entry(word.to_string()).or_default()[slot] = Some((w.clone(), named));
        w
    }

    /// "mergerequests" -> merge, requests: an unknown word made of two known ones.
    fn split_compound(&self, word: &str) -> Option<(String, String)> {
        if !may_be_compound(word) || self.knows(word) {
            return None;
        }
        let len = word.len();
        (3..=len - 3)
            .rev()
            .map(|i| word.split_at(i))
            .find(|(a, b)| self.is_word(a) && self.is_word(b))
            .map(|(a, b)| (a.to_string(), b.to_string()))
    }

    /// Whether a word is in the catalogue as written (not only as a stem).
    fn is_word(&self, word: &str) -> bool {
        self.sorted.binary_search_by(|(t, _)| t.as_str().cmp(word)).is_ok()
    }

    /// Whether the catalogue knows a word, directly or through a synonym.
    pub(super) fn knows(&self, word: &str) -> bool {
        self.terms.contains_key(word)
            || self.terms.contains_key(stem_str(word).as_ref())
            || self.synonyms.contains_key(word)
            || self.verbs.contains_key(word)
    }

    /// A query word's alternatives and weight; records the products it names.
    fn expand(&self, word: &str, token: &Token, mentioned: &mut Map<&'static str, f32>) -> Word {
        self.expand_as(word, token, mentioned, true)
    }

    /// [`Self::expand`], with or without synonyms (a verb's are not its noun's: "page someone").
    fn expand_as(&self, word: &str, token: &Token, mentioned: &mut Map<&'static str, f32>, synonyms: bool) -> Word {
        if token.opaque {
            return Word { alts: std::sync::Arc::new([]), weight: UNKNOWN_ARG, anchor: false, direct: false };
        }
        let mut alts: Vec<(u32, f32)> = Vec::new();
        let push = |alts: &mut Vec<(u32, f32)>, term: &str, discount: f32| {
            if let Some(&id) = self.terms.get(term) {
                match alts.iter_mut().find(|(t, _)| *t == id) {
                    Some(e) => e.1 = e.1.max(discount),
                    None => alts.push((id, discount)),
                }
            }
        };
        let stemmed = stem_str(word);
        push(&mut alts, word, 1.0);
        // A product's own name is surer than a word that implies it.
        let names = |p: &&str, word: &str| p.replace('_', "") == word || tokenize(p).iter().any(|t| t == word);
        // Another form of a product's name is the English word, not the product ("driving" is
        // no Google Drive, "slacking" no Slack).
        // (The stem of an "-ing" or "-ed" form, with or without the "e" the stem cut.)
        let is_name = |name: &str| self.products.get(name).is_some_and(|ps| ps.iter().any(|p| names(p, name)));
        let product_form = (word.ends_with("ing") || word.ends_with("ed"))
            && stemmed != word
            && (is_name(&stemmed) || is_name(&format!("{stemmed}e")));
        if !product_form {
            push(&mut alts, &stemmed, if stemmed == word { 1.0 } else { STEM_ONLY });
        }
        if let Some(products) = self.products.get(word) {
            let named = |p: &&str| names(p, word);
            for p in products {
                Self::mention(mentioned, &[p], if named(p) { 1.0 } else { IMPLIED });
            }
        }
        let mut direct = !alts.is_empty();
        let mut weight = alts.iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max);
        let syns = self.synonyms.get(word).or_else(|| self.synonyms_by_stem.get(stemmed.as_ref()));
        if let Some(syns) = syns.filter(|_| synonyms) {
            let before = alts.len();
            for s in *syns {
                push(&mut alts, s, SYNONYM);
                push(&mut alts, &stem_str(s), SYNONYM * STEM_ONLY);
            }
            if !direct {
                weight = alts[before..].iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max);
                direct = alts.len() > before;
            }
        }
        let len = word.chars().count();
        // A word with digits ("contex7", "k8s") is a typo candidate only of a product's own name
        // with digits in it: the others are arguments (ids, versions, sizes).
        let alphabetic = word.chars().all(char::is_alphabetic);
        let named_digits = !alphabetic
            && word.chars().all(char::is_alphanumeric)
            && word.chars().filter(|c| c.is_alphabetic()).count() >= 3;
        let typo = alts.is_empty() && (alphabetic && !token.arg || named_digits) && len >= 4;
        // A product's own name misspelt ("lineer", "gitlba", "sentyr") names it wherever it
        // stands and whatever its stem reads as ("lineer" -> "line"): a word of neither the
        // catalogue nor English, one edit from a product's name, is read as that name too.
        // A word the catalogue lacks that is English all the same: one of the verbs this search
        // reads, or a word of the model's vocabulary. (Asked only of words the catalogue lacks:
        // most words are passed over before it.)
        let english = (typo || alphabetic && len >= 5 && !self.terms.contains_key(word))
            && (self.verbs.contains_key(word) || embed::model().is_some_and(|m| m.knows_word(word)));
        let misspelt_product = !typo && alphabetic && len >= 5 && !self.terms.contains_key(word) && !english;
        if typo || misspelt_product {
            let mut found: Vec<u32> = Vec::new();
            for key in deletion_hashes(word) {
                for &id in self.typo_keys.get(key) {
                    if !found.contains(&id) {
                        found.push(id);
                    }
                }
            }
            let discount = if len >= 5 { TYPO } else { TYPO * 0.9 };
            for id in found {
                let term = &self.term_text[id as usize];
                let product_name =
                    || self.products.get(term.as_str()).into_iter().flatten().any(|p| p.replace('_', "") == *term);
                let fits = if alphabetic && !misspelt_product {
                    term.chars().all(char::is_alphabetic)
                } else {
                    product_name()
                };
                // An English word one edit from a product's name is that word, not the product
                // ("discard the draft" is no Discord).
                if fits && !(english && product_name()) && text::plausible_typo(word, term) {
                    push(&mut alts, term, discount);
                    for syn in self.synonyms.get(term.as_str()).copied().unwrap_or_default() {
                        push(&mut alts, syn, discount * SYNONYM);
                    }
                    // A misspelt product name names it; a word that implies one only when plainly
                    // misspelt (two letters swapped), not when it is another word ("print").
                    for p in self.products.get(term.as_str()).into_iter().flatten() {
                        let name = p.replace('_', "") == *term || tokenize(p).iter().any(|t| t == term);
                        // A product's own name misspelt names it as surely as spelt right
                        // ("gmial", "contex7"): the user means it, whoever else answers.
                        if name {
                            Self::mention(mentioned, &[p], 1.0);
                        } else if text::is_transposition(word, term) {
                            Self::mention(mentioned, &[p], IMPLIED);
                        }
                    }
                }
            }
        }
        if alts.is_empty() && len >= 6 {
            // "announcements" -> "announce": the longest known word the word starts with.
            for cut in (5.max(len * 3 / 5)..len).rev() {
                // The first `cut` letters, as a slice of the word (no string per cut).
                let head = word.char_indices().nth(cut).map_or(word, |(end, _)| &word[..end]);
                if let Some(&id) = self.terms.get(head) {
                    alts.push((id, PREFIX));
                    break;
                }
            }
        }
        if alts.is_empty() && len >= 4 {
            let start = self.sorted.partition_point(|(t, _)| t.as_str() < word);
            for (_, id) in self.sorted[start..].iter().take_while(|(t, _)| t.starts_with(word)).take(20) {
                alts.push((*id, PREFIX));
            }
        }
        if weight == 0.0 {
            // A guessed word (typo, prefix) weighs no more than an unknown one: were the guess
            // wrong, it would be an unknown word.
            weight = alts.iter().map(|&(id, _)| self.idf(id)).fold(0.0, f32::max).min(UNKNOWN_PLAIN);
        }
        if alts.is_empty() {
            weight = if token.arg { UNKNOWN_ARG } else { UNKNOWN_PLAIN };
        }
        let qualifier = lexicon::TIME_WORDS.contains(word) || lexicon::MODIFIERS.contains(word);
        if qualifier {
            weight = weight.min(lexicon::TIME_WEIGHT);
        }
        if word.chars().any(|c| c.is_ascii_digit()) {
            // "3pm", "2026", "v2": arguments, whatever a description's example says.
            weight = weight.min(UNKNOWN_ARG);
        }
        Word { alts: alts.into(), weight, anchor: !qualifier, direct }
    }
}

/// Whether a word is long enough, and of letters only, to be two words run together.
fn may_be_compound(word: &str) -> bool {
    word.len() >= 7 && word.bytes().all(|c| c.is_ascii_alphabetic())
}

/// Whether a raw query word is a path on the user's machine: absolute ("/tmp/data"), from the
/// home folder ("~/notes.md") or relative ("./src", "../out"), with a name after the slash.
fn is_local_path(raw: &str) -> bool {
    if !raw.contains('/') {
        return false;
    }
    let raw = raw.trim_matches(|c: char| "\"'`(),;".contains(c));
    let rest = ["~/", "./", "../", "/"].iter().find_map(|p| raw.strip_prefix(p));
    rest.is_some_and(|r| r.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '.' || c == '_'))
}

#[cfg(test)]
mod tests;
