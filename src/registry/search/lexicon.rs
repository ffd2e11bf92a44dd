//! The words of this domain: stopwords, phrases, synonyms and jargon, verbs as intents, and words
//! that imply a product. Curated by hand; every entry is a general rule of how people name tools,
//! never a patch for one query.

/// A word list asked about as a set, built on first use: the parser asks these lists about
/// every word of every request, and a scan of a long list for each word of a long request was
/// about a tenth of its time (`perf` over `examples/search_footprint.rs`).
pub struct Words {
    list: &'static [&'static str],
    set: std::sync::OnceLock<super::hash::Set<&'static str>>,
}

impl Words {
    pub const fn new(list: &'static [&'static str]) -> Words {
        Words { list, set: std::sync::OnceLock::new() }
    }

    pub fn contains(&self, word: &str) -> bool {
        self.set.get_or_init(|| self.list.iter().copied().collect()).contains(word)
    }

    /// The words, in the order written.
    #[cfg(test)]
    pub fn list(&self) -> &'static [&'static str] {
        self.list
    }
}

/// Words that carry no intent.
pub const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "to",
    "in",
    "on",
    "for",
    "of",
    "my",
    "me",
    "and",
    "or",
    "with",
    "please",
    "i",
    "want",
    "can",
    "you",
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "from",
    "at",
    "by",
    "some",
    "our",
    "we",
    "us",
    "about",
    "into",
    // Pronouns of no thing in particular ("I already bought everything", "nothing is on fire"),
    // whatever server may be named so.
    "everything",
    "anything",
    "something",
    "nothing",
    "should",
    "would",
    "could",
    "need",
    "let",
    "lets",
    "using",
    "via",
    "tool",
    "s",
    "t",
    "don",
    "dont",
    "doesn",
    "isn",
    "has",
    "have",
    "had",
    "will",
    "there",
    "their",
    "them",
    "they",
    "your",
    "yours",
    "any",
    "just",
    "so",
    "but",
    "if",
    "then",
    "than",
    "also",
    "as",
    "up",
    "out",
    "off",
    "over",
    "all",
    "one",
    "mine",
    "her",
    "his",
    "him",
    "she",
    "he",
    "not",
    "yet",
    "still",
    "where",
    "whose",
    "when",
    "while",
    "too",
    "very",
    "really",
    "quick",
    "quickly",
    "now",
    "go",
    "ahead",
    "like",
    "whatever",
    "something",
    "someone",
    "somebody",
    "anything",
    "thing",
    "things",
    "etc",
    "e",
    "g",
    "eg",
    "ie",
    "here",
    "again",
    "more",
    "most",
    "only",
    "same",
    "such",
    "own",
    "each",
    "both",
    "either",
    "through",
    "after",
    "before",
    "against",
    "between",
    "via",
    "per",
    "onto",
    "upon",
    "within",
    "without",
];

/// Multi-word phrases that name one thing, and the token they become (in the catalogue and in
/// the query alike). Longer phrases first.
pub type Phrase = (&'static [&'static str], &'static str);

pub const PHRASES: &[Phrase] = &[
    (&["pull", "requests"], "prs"),
    (&["pull", "request"], "pr"),
    (&["merge", "requests"], "mrs"),
    (&["merge", "request"], "mr"),
    (&["direct", "messages"], "dms"),
    (&["direct", "message"], "dm"),
    (&["private", "messages"], "dms"),
    (&["private", "message"], "dm"),
    (&["to", "dos"], "todos"),
    (&["to", "do"], "todo"),
    (&["on", "call"], "oncall"),
    (&["conference", "call"], "meeting"),
    (&["video", "call"], "meeting"),
    (&["tell", "me"], "show"),
    (&["show", "me"], "show"),
    (&["give", "me"], "show"),
    (&["let", "me", "know"], "show"),
    (&["look", "up"], "lookup"),
    (&["check", "off"], "complete"),
    (&["kick", "off"], "trigger"),
    (&["set", "up"], "setup"),
    (&["wake", "up"], "page"),
    (&["on", "my", "plate"], "assigned"),
    (&["in", "a", "nutshell"], "summary"),
    (&["to", "the", "bottom", "of"], "append"),
    (&["at", "the", "bottom", "of"], "append"),
    (&["to", "the", "end", "of"], "append"),
    (&["at", "the", "end", "of"], "append"),
    (&["one", "on", "one"], "meeting"),
    (&["woken", "up"], "page"),
    (&["log", "out"], "disconnect"),
    (&["sign", "out"], "disconnect"),
    (&["stack", "traces"], "stacktrace"),
    (&["stack", "trace"], "stacktrace"),
    (&["api", "keys"], "apikeys"),
    (&["api", "key"], "apikey"),
    (&["money", "back"], "refund"),
    (&["closed", "won"], "closedwon"),
    (&["closed", "lost"], "closedlost"),
    (&["who", "is"], "whois"),
    (&["who", "was"], "whois"),
    (&["who", "are"], "whois"),
    (&["time", "zone"], "timezone"),
    (&["time", "zones"], "timezone"),
    (&["e", "mail"], "email"),
    (&["tab", "separated"], "tsv"),
    (&["comma", "separated"], "csv"),
    (&["e", "mails"], "emails"),
    (&["front", "page"], "frontpage"),
    (&["hacker", "news"], "hackernews"),
    (&["y", "combinator"], "ycombinator"),
    (&["work", "items"], "issues"),
];

mod synonyms;
pub use synonyms::SYNONYMS;

/// A tool's verb is the word after its integration prefix (`github_create_issue` -> create).
/// Query verbs -> the tool verbs they ask for, and how strongly. A query without any of these
/// words asks to see something ([`READ_DEFAULT`]).
/// Tool verbs a query verb asks for, each with how well it answers (0..1).
pub type VerbMap = &'static [(&'static str, f32)];

pub const VERBS: &[(&[&str], VerbMap)] = &[
    (
        &[
            "get", "fetch", "retrieve", "read", "view", "see", "display", "inspect", "describe", "details", "take",
            "cat", "stat", "peek",
        ],
        &[("get", 1.0), ("list", 0.85), ("query", 0.85), ("search", 0.75), ("download", 0.7)],
    ),
    (
        &["show", "what", "whats", "which", "how", "check", "tell"],
        &[("get", 0.95), ("list", 0.95), ("query", 0.95), ("search", 0.95), ("download", 0.6)],
    ),
    (
        &["list", "browse", "enumerate", "count", "ls", "du"],
        &[("list", 1.0), ("query", 0.95), ("search", 0.85), ("get", 0.7)],
    ),
    (
        &["find", "search", "look", "lookup", "grep", "discover", "locate", "filter", "seek", "hunt"],
        &[("search", 1.0), ("list", 0.9), ("query", 0.9), ("get", 0.8)],
    ),
    (&["query"], &[("query", 1.0), ("search", 0.95), ("list", 0.9)]),
    (
        &[
            "create", "make", "new", "raise", "file", "open", "setup", "submit", "log", "book", "schedule", "cut",
            "propose", "leave", "refund", "bill", "invoice", "remind", "mkdir", "touch",
        ],
        &[("create", 1.0), ("add", 0.85), ("send", 0.6), ("set", 0.6), ("upload", 0.6), ("get", 0.35)],
    ),
    (&["draft", "write"], &[("create", 1.0), ("send", 0.8), ("update", 0.8), ("add", 0.8)]),
    (&["compose"], &[("send", 1.0), ("create", 0.9)]),
    (&["put"], &[("add", 1.0), ("update", 0.85), ("transition", 0.85), ("create", 0.8), ("set", 0.7), ("upload", 0.7)]),
    (
        &["add", "append", "insert", "attach"],
        &[("add", 1.0), ("create", 0.9), ("update", 0.7), ("upload", 0.6), ("set", 0.6)],
    ),
    (
        &["comment", "reply", "respond", "annotate", "note", "remark"],
        &[("create", 0.95), ("send", 0.85), ("add", 0.8), ("update", 0.6)],
    ),
    (
        &[
            "send",
            "tell",
            "notify",
            "message",
            "email",
            "dm",
            "ping",
            "announce",
            "post",
            "mail",
            "forward",
            "say",
            "congratulate",
            "thank",
            "welcome",
            "greet",
            "chat",
        ],
        &[("send", 1.0), ("create", 0.75), ("add", 0.6)],
    ),
    (&["share"], &[("create", 0.9), ("upload", 0.9), ("send", 0.8)]),
    (&["give", "grant"], &[("create", 0.9), ("update", 0.8)]),
    (&["approve", "review"], &[("create", 0.9), ("update", 0.7), ("merge", 0.6), ("get", 0.5)]),
    (
        &["trigger", "page", "run", "rerun", "dispatch", "execute", "launch", "deploy"],
        &[("run", 1.0), ("create", 0.85), ("update", 0.5)],
    ),
    (&["start"], &[("create", 0.95), ("run", 0.95)]),
    (&["merge", "squash", "land", "integrate"], &[("merge", 1.0), ("update", 0.6)]),
    (
        &[
            "update",
            "edit",
            "change",
            "modify",
            "rename",
            "fix",
            "correct",
            "reassign",
            "assign",
            "unassign",
            "reschedule",
            "postpone",
            "relabel",
            "label",
            "star",
            "tag",
            "flag",
            "prioritize",
            "escalate",
            "acknowledge",
            "ack",
            "ignore",
            "mute",
            "snooze",
            "reopen",
            "restore",
            "decline",
            "rsvp",
            "triage",
            "bump",
            "tweak",
            "adjust",
            "amend",
            "revise",
        ],
        &[("update", 1.0), ("transition", 0.85), ("complete", 0.7), ("set", 0.7), ("add", 0.5)],
    ),
    (&["set"], &[("set", 1.0), ("update", 0.9), ("create", 0.5)]),
    (&["move", "mv", "shift"], &[("transition", 1.0), ("update", 0.95)]),
    (&["mark"], &[("update", 1.0), ("complete", 0.95), ("transition", 0.9)]),
    (&["accept"], &[("update", 0.95), ("merge", 0.9)]),
    (
        &["close", "resolve", "finish", "complete", "tick"],
        &[("complete", 1.0), ("update", 0.95), ("transition", 0.95), ("delete", 0.4)],
    ),
    (&["archive"], &[("update", 1.0), ("delete", 0.6)]),
    (
        &[
            "delete",
            "remove",
            "trash",
            "cancel",
            "drop",
            "clear",
            "erase",
            "wipe",
            "purge",
            "discard",
            "disconnect",
            "revoke",
            "forget",
            "unsubscribe",
            "unlink",
            "bin",
            "empty",
            "rm",
            "ditch",
            "scrap",
            "nuke",
            "toss",
            "junk",
            "stop",
            "terminate",
            "kill",
            "end",
        ],
        &[("delete", 1.0), ("update", 0.6)],
    ),
    (&["transition"], &[("transition", 1.0), ("update", 0.9)]),
    (&["upload", "import"], &[("upload", 1.0), ("create", 0.7), ("add", 0.6)]),
    (&["download", "export", "grab"], &[("download", 1.0), ("get", 0.8)]),
    (&["save"], &[("set", 0.9), ("download", 0.9), ("create", 0.85), ("update", 0.7)]),
    (&["store", "remember", "keep"], &[("set", 1.0), ("create", 0.7)]),
    (&["convert", "transform", "turn", "render", "format", "parse"], &[("convert", 1.0), ("query", 0.5)]),
];

/// The tool verb a tool's name's first word stands for: itself when a query verb asks for it
/// (`create`, `list`, ...); else, when it is a query verb of its own (upstream servers' `read`,
/// `write`, `edit`, `show`), the tool verb that verb asks for first (`get`, `create`, `update`);
/// else itself (`commit`, `echo`: matched only as written).
pub fn tool_verb(word: &str) -> &str {
    let asked = |w: &str| VERBS.iter().any(|(_, map)| map.iter().any(|(v, _)| *v == w));
    if asked(word) {
        return word;
    }
    VERBS
        .iter()
        .find(|(words, _)| words.contains(&word))
        // The first of the best answers (`min_by` keeps the first of equals).
        .and_then(|(_, map)| map.iter().min_by(|a, b| b.1.total_cmp(&a.1)))
        .map(|(v, _)| *v)
        .unwrap_or(word)
}

/// Whether a word is one of [`VERBS`].
pub fn is_verb(word: &str) -> bool {
    VERBS.iter().any(|(words, _)| words.contains(&word))
}

/// Words before a clause's verb that do not change it ("I need to", "could you please").
pub static SKIPPABLE: Words = Words::new(&[
    "i", "we", "you", "can", "could", "would", "will", "please", "need", "want", "to", "let", "lets", "go", "ahead",
    "just", "quickly", "also", "now", "then", "so", "and", "or", "help", "me", "us", "pls", "kindly", "first", "try",
    "should", "must", "have", "d", "ll", "like", "wanna", "gonna", "be", "able",
]);

/// Words after which a new verb may start.
pub const CLAUSE_MARKERS: &[&str] = &["to", "so", "then", "please", "and", "or", "but"];

/// Words after which the next words are a name ("a page called roadmap").
pub const NAMING: &[&str] = &["called", "named", "titled", "entitled"];

/// Words and phrases that place a request on the user's own machine rather than a service: they
/// say where, not what, and are not matched as words.
pub const LOCAL_WORDS: &[&str] = &["local", "locally", "disk", "laptop", "harddrive"];
/// Verbs of two parts with an object between them ("let the team know", "drop sam a note",
/// "shoot them an email", "put together a message"): the first word, the words that may close
/// it, how many words may stand between, the verb the whole means, and whether the closing word
/// is a particle read as nothing ("know", "off") or a thing kept as a word ("email", "note").
/// Read before the request's verbs, so "drop" of "drop a note" is no deletion.
pub type Phrasal = (&'static str, &'static [&'static str], usize, &'static str, bool);

pub const PHRASAL: &[Phrasal] = &[
    ("let", &["know"], 3, "notify", true),
    ("letting", &["know"], 3, "notify", true),
    ("drop", &["note", "line", "message", "msg", "dm"], 3, "send", false),
    ("shoot", &["email", "mail", "message", "note", "line", "text", "dm"], 3, "send", false),
    ("fire", &["off"], 0, "send", true),
    ("reach", &["out"], 0, "message", true),
    ("give", &["heads"], 4, "notify", true),
    ("put", &["together"], 0, "compose", true),
    ("jot", &["down"], 0, "write", true),
    ("pin", &["down"], 0, "schedule", true),
    ("dig", &["up"], 0, "find", true),
    ("tidy", &["up"], 0, "fix", true),
    ("push", &["back"], 3, "postpone", true),
    ("wrap", &["up"], 0, "finish", true),
    ("rope", &["in"], 2, "add", true),
    ("give", &["thumbs"], 2, "add", false),
    ("tick", &["off"], 3, "complete", true),
    ("cross", &["off"], 3, "complete", true),
    ("throw", &["away", "out"], 3, "delete", true),
    ("toss", &["out"], 3, "delete", true),
    ("take", &["off", "down"], 3, "remove", true),
    ("get", &["rid"], 0, "delete", true),
    ("back", &["up"], 0, "upload", true),
    // "heads up to #oncall that ..." (after "give ... heads", above, only "up" is left).
    ("heads", &["up"], 0, "notify", true),
];

/// What a request asks for, told by how it says what is wrong or due: "the title should say
/// 2.0", "the card belongs to anna now", "there's a typo in ...", "don't let me forget to call
/// mom", "where did I put the deck". The words (a run of the request's words), the verb they
/// stand for, and whether they stand for it over the request's own verbs (the idiom's verb:
/// "say", "call", "put") or only where it has none ("should be" of "a task that should be done").
pub const IMPLIED_VERBS: &[(&str, &str, bool)] = &[
    ("should say", "update", true),
    ("should read", "update", true),
    ("needs to say", "update", true),
    ("still says", "update", true),
    ("still shows", "update", true),
    // (Not "forget" alone: "forget the stored token" deletes it.)
    ("me forget", "remind", true),
    ("i forget", "remind", true),
    ("forgetting", "remind", true),
    ("where did", "find", true),
    ("should be", "update", false),
    ("should go", "update", false),
    ("out of date", "update", false),
    ("outdated", "update", false),
    ("belongs to", "update", false),
    // "I can't make the retro", "say no to the invite": the invitation declined.
    ("cant make", "decline", true),
    ("cannot make", "decline", true),
    ("wont make", "decline", true),
    ("say no", "decline", true),
    ("say yes", "accept", true),
    ("is wrong", "update", false),
    ("has the wrong", "update", false),
    ("have the wrong", "update", false),
    ("shows the wrong", "update", false),
    ("are wrong", "update", false),
    ("typo", "update", false),
    ("is there", "find", false),
    ("are there", "find", false),
    ("where is", "find", false),
    ("where are", "find", false),
    ("where's", "find", false),
];

/// Shell commands: whoever starts a request with one means files on their own machine. Words too
/// (see [`SYNONYMS`]).
pub const SHELL_COMMANDS: &[&str] = &["ls", "mkdir", "mv", "rm", "cat", "stat", "du", "cd", "pwd", "touch", "chmod"];
pub const LOCAL_PHRASES: &[&str] =
    &["my machine", "this machine", "my computer", "this computer", "my mac", "this mac", "hard drive", "file system"];

/// Words that end an argument phrase: "on my calendar" is a thing, "on main" a name.
pub const POSSESSIVES: &[&str] = &["my", "our", "your", "their", "his", "her", "its"];

/// Which of the short lists above a word is in ([`classes`]).
pub const CLAUSE_MARKER: u8 = 1;
pub const NAMING_WORD: u8 = 2;
pub const PREPOSITION: u8 = 4;
pub const POSSESSIVE: u8 = 8;
pub const LOCAL_WORD: u8 = 16;

/// Each list [`classes`] answers for, with its bit.
const CLASS_LISTS: [(&[&str], u8); 5] = [
    (CLAUSE_MARKERS, CLAUSE_MARKER),
    (NAMING, NAMING_WORD),
    (PREPOSITIONS, PREPOSITION),
    (POSSESSIVES, POSSESSIVE),
    (LOCAL_WORDS, LOCAL_WORD),
];

/// The lists among [`CLAUSE_MARKERS`], [`NAMING`], [`PREPOSITIONS`], [`POSSESSIVES`] and
/// [`LOCAL_WORDS`] that have `word`, as bits: the parser asks all five of every word, and one
/// lookup answers them all (a scan of each list was a few percent of a long request's work).
pub fn classes(word: &str) -> u8 {
    static CLASSES: std::sync::LazyLock<super::hash::Map<&'static str, u8>> = std::sync::LazyLock::new(|| {
        let mut map: super::hash::Map<&'static str, u8> = super::hash::Map::default();
        for (list, class) in CLASS_LISTS {
            for w in list {
                *map.entry(w).or_default() |= class;
            }
        }
        map
    });
    CLASSES.get(word).copied().unwrap_or(0)
}

/// Verbs that say nothing about a tool beyond its verb. Other verbs ("accept", "approve",
/// "squash", "archive") also count as words: a tool that names them does them.
pub static GENERIC_VERBS: Words = Words::new(&[
    "get",
    "fetch",
    "retrieve",
    "read",
    "view",
    "see",
    "display",
    "details",
    "take",
    "show",
    "what",
    "whats",
    "which",
    "how",
    "check",
    "tell",
    "lookup",
    "list",
    "browse",
    "count",
    "find",
    "search",
    "look",
    "seek",
    "query",
    "create",
    "make",
    "new",
    "open",
    "file",
    "log",
    "setup",
    "submit",
    "write",
    "add",
    "put",
    "send",
    "post",
    "update",
    "edit",
    "change",
    "modify",
    "set",
    "delete",
    "remove",
    "give",
    "start",
    "run",
    "fix",
    "correct",
    "save",
    "keep",
    "leave",
    "say",
    "mark",
    "draft",
    "compose",
    "raise",
    "book",
    "propose",
    "insert",
    "inspect",
    "describe",
    "filter",
    "hunt",
    "locate",
    "discover",
    "enumerate",
]);

/// Words that open a phrase whose unknown words are arguments (names, places, titles).
pub const PREPOSITIONS: &[&str] = &["with", "for", "from", "in", "at", "on", "by", "about", "to", "of", "into", "as"];

/// A person's day, week or weekday, possessed ("my thursday", "our week", "my afternoon"), is their
/// schedule: "what does my thursday look like", "how's our week shaping up".
pub const SCHEDULE_DAYS: &[&str] = &[
    "day",
    "week",
    "weekend",
    "morning",
    "afternoon",
    "evening",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Dates and times in a query are mostly arguments ("tomorrow", "last month"): they weigh as
/// much as [`TIME_WEIGHT`] of a word at most.
pub static TIME_WORDS: Words = Words::new(&[
    "today",
    "tomorrow",
    "tonight",
    "yesterday",
    "week",
    "weeks",
    "weekend",
    "month",
    "months",
    "year",
    "years",
    "morning",
    "afternoon",
    "afternoons",
    "evening",
    "night",
    "hour",
    "hours",
    "minute",
    "minutes",
    "day",
    "days",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "next",
    "last",
    "ago",
    "soon",
    "later",
    "daily",
    "weekly",
    "monthly",
    "yearly",
    "quarter",
    "noon",
    "midnight",
    "earlier",
    "winter",
    "summer",
    "spring",
    "autumn",
    "fall",
]);
pub const TIME_WEIGHT: f32 = 0.8;

/// Common qualifiers weigh no more than [`TIME_WEIGHT`] either, however rare they are in the
/// catalogue: "best", "latest" say which, not what.
pub static MODIFIERS: Words = Words::new(&[
    "best",
    "top",
    "latest",
    "newest",
    "oldest",
    "recent",
    "new",
    "old",
    "good",
    "great",
    "big",
    "small",
    "full",
    "whole",
    "short",
    "long",
    "high",
    "low",
    "first",
    "main",
    "other",
    "different",
    "few",
    "many",
    "much",
    "little",
    "cheap",
    "nice",
    "quick",
    "fast",
    "slow",
    "current",
    "existing",
    "single",
    "specific",
    "particular",
    "certain",
    "important",
    "big",
    "huge",
    "tiny",
    "simple",
    "entire",
    "every",
    "everyone",
    "everything",
    "nothing",
    "none",
    "someone",
    "anyone",
    "whoever",
    "whatever",
    "right",
    "away",
    "immediately",
    "asap",
]);

/// Verbs that make something before an indefinite object and read it before a definite one
/// ("open a ticket" / "open the ticket"), the words that make an object definite, and what such a
/// verb then asks for.
pub const READ_WITH_DEFINITE: &[&str] = &["open"];
pub const DEFINITE: &[&str] = &["the", "my", "our", "this", "that", "these", "those", "their", "his", "her", "your"];
pub const OPEN_EXISTING: VerbMap = &[("get", 1.0), ("list", 0.85), ("download", 0.7), ("search", 0.7)];

/// What a query without a verb asks for: to see something.
pub const READ_DEFAULT: VerbMap = &[("list", 1.0), ("query", 1.0), ("get", 1.0), ("search", 1.0), ("download", 0.8)];
/// The intent match of a tool verb no query verb (or the read default) names.
pub const OTHER_VERB: f32 = 0.0;
/// ... and of any tool verb when the query has no verb.
pub const READ_DEFAULT_OTHER: f32 = 0.75;

/// Verbs that are also nouns or states here ("a file", "the log", "open PRs", "workflow runs"):
/// they are a verb only as the query's first word, and count as words of the query anyway.
pub const DUAL: &[&str] = &[
    "file", "post", "log", "run", "comment", "note", "open", "close", "check", "page", "message", "email", "dm",
    "reply", "merge", "draft", "star", "label", "tag", "review", "schedule", "list", "search", "query", "filter",
    "count", "new", "update", "change", "complete", "archive", "details", "book", "mail", "start", "export", "clear",
    "trigger", "deploy", "bill", "invoice", "refund",
];

/// Leading verbs that also name what they make ("comment on the MR", "email the team"): they
/// count as a word of the query too.
pub static OBJECT_VERBS: Words = Words::new(&[
    "comment", "reply", "note", "message", "email", "dm", "mail", "review", "merge", "draft", "label", "tag", "star",
    "archive", "refund", "bill", "invoice", "remind", "ls", "mkdir", "cat", "mv", "rm", "stat", "du",
]);

/// Time zone abbreviations: a query naming one asks about times across zones (not those that are
/// English words too: WET, WEST).
pub static TIME_ZONES: Words = Words::new(&[
    "utc", "gmt", "cet", "cest", "eet", "eest", "bst", "ist", "jst", "kst", "hkt", "sgt", "aest", "aedt", "acst",
    "awst", "nzst", "nzdt", "pst", "pdt", "mst", "mdt", "cst", "cdt", "est", "edt", "akst", "hst", "msk",
]);
/// The first part of an IANA zone name ("Europe/Berlin").
pub const ZONE_AREAS: &[&str] =
    &["africa", "america", "antarctica", "asia", "atlantic", "australia", "europe", "indian", "pacific", "etc"];

/// Words that imply a product although the product's own keywords cannot carry them (the word is
/// too common elsewhere in the catalogue) — section 4 of the catalogue spec.
pub const PRODUCT_WORDS: &[(&str, &str)] = &[
    ("inbox", "gmail"),
    ("email", "gmail"),
    ("emails", "gmail"),
    ("mail", "gmail"),
    ("todo", "todoist"),
    ("todos", "todoist"),
    ("jql", "jira"),
    ("sprint", "jira"),
    ("sprints", "jira"),
    ("epic", "jira"),
    ("cql", "confluence"),
    ("oncall", "pagerduty"),
    ("refund", "stripe"),
    ("invoice", "stripe"),
    ("invoices", "stripe"),
    ("subscription", "stripe"),
    ("subscriptions", "stripe"),
    ("crm", "hubspot"),
    ("deal", "hubspot"),
    ("deals", "hubspot"),
    ("guild", "discord"),
    ("guilds", "discord"),
    ("kanban", "trello"),
    ("calendar", "google_calendar"),
    ("spreadsheet", "google_sheets"),
    ("spreadsheets", "google_sheets"),
    ("stacktrace", "sentry"),
    ("traceback", "sentry"),
    ("weather", "open_meteo"),
    ("jmespath", "data"),
    ("vault", "vault"),
    ("keychain", "vault"),
    ("audit", "audit"),
    ("hn", "hackernews"),
    ("frontpage", "hackernews"),
    ("encyclopedia", "wikipedia"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A word's classes are the lists that have it, for every word of the lists and words of
    /// none.
    #[test]
    fn a_words_classes_are_the_lists_it_is_in() {
        let lists = CLASS_LISTS;
        let words = lists.iter().flat_map(|(l, _)| l.iter().copied()).chain(["", "the", "To", "tos", "disks"]);
        for w in words {
            let want = lists.iter().filter(|(l, _)| l.contains(&w)).fold(0, |bits, (_, c)| bits | c);
            assert_eq!(classes(w), want, "{w:?}");
        }
    }

    #[test]
    fn a_word_set_holds_exactly_its_list() {
        for set in [&SKIPPABLE, &GENERIC_VERBS, &TIME_WORDS, &MODIFIERS, &OBJECT_VERBS, &TIME_ZONES] {
            let list = set.list();
            for w in list {
                assert!(set.contains(w), "{w}");
                // Only the words themselves: a longer word is not in it.
                let longer = format!("{w}x");
                assert_eq!(set.contains(&longer), list.contains(&longer.as_str()), "{longer}");
            }
        }
        assert!(!TIME_WORDS.contains(""));
        assert!(TIME_WORDS.contains("tomorrow") && !TIME_WORDS.contains("issue"));
    }
}
