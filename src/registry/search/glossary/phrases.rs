//! Set phrases of requests, read whole before the words are read one by one: "wie spät ist es"
//! is "what time", not "late"; "quel temps fait-il" weather, not "time fact"; "combien coûte"
//! a price. Written from the languages (not from any evaluation request), for everyday request
//! domains: time and dates, weather, prices, news, directions, reminders, mail, files,
//! calendars, maths. Most are made of function words, which the glossary's own phrases may
//! neither start nor end with.
//!
//! Spanish, German, French and Portuguese phrases are lower-cased words as the request's words
//! are split (a hyphen or an apostrophe splits: "est-il" is "est il", "rappelle-moi" "rappelle
//! moi"); Chinese and Japanese ones are runs of characters. The longest phrase at a position wins.

use super::Lang;

/// The most words in a phrase of a Latin-script language.
pub(super) const MAX_WORDS: usize = 6;
/// The most characters in a Chinese or Japanese phrase.
const MAX_CHARS: usize = 8;

/// (language, phrase, English words: at most three, the first not a light verb's only sense).
const PHRASES: &[(Lang, &str, &str)] = &[
    // Spanish.
    (Lang::Es, "qué hora es", "what time"),
    (Lang::Es, "qué hora", "what time"),
    (Lang::Es, "a qué hora", "what time"),
    (Lang::Es, "qué día es hoy", "what date today"),
    (Lang::Es, "qué fecha es hoy", "what date today"),
    (Lang::Es, "qué tiempo hace", "weather"),
    (Lang::Es, "qué tiempo hará", "weather forecast"),
    (Lang::Es, "va a llover", "will rain"),
    (Lang::Es, "va a nevar", "will snow"),
    (Lang::Es, "cuánto cuesta", "price cost"),
    (Lang::Es, "cuánto cuestan", "price cost"),
    (Lang::Es, "cuánto vale", "price value"),
    (Lang::Es, "cuánto valen", "price value"),
    (Lang::Es, "cuánto tiempo", "how long"),
    (Lang::Es, "cuánto tarda", "how long"),
    (Lang::Es, "cómo llego a", "directions route"),
    (Lang::Es, "cómo llego", "directions route"),
    (Lang::Es, "cómo llegar a", "directions route"),
    (Lang::Es, "cómo llegar", "directions route"),
    (Lang::Es, "cómo ir a", "directions route"),
    (Lang::Es, "recuérdame", "remind reminder"),
    (Lang::Es, "bandeja de entrada", "inbox"),
    (Lang::Es, "hoja de cálculo", "spreadsheet sheet"),
    (Lang::Es, "por ciento", "percent"),
    (Lang::Es, "últimas noticias", "latest news"),
    (Lang::Es, "correo no deseado", "spam"),
    (Lang::Es, "más cercano", "nearest closest"),
    (Lang::Es, "más cercana", "nearest closest"),
    (Lang::Es, "más próximo", "nearest closest"),
    (Lang::Es, "más próxima", "nearest closest"),
    (Lang::Es, "no leídos", "unread"),
    (Lang::Es, "no leídas", "unread"),
    (Lang::Es, "no leído", "unread"),
    (Lang::Es, "no leída", "unread"),
    (Lang::Es, "solicitud de incorporación de cambios", "pull request"),
    (Lang::Es, "solicitud de extracción", "pull request"),
    // German.
    (Lang::De, "wie spät ist es", "what time"),
    (Lang::De, "wie spät", "what time"),
    (Lang::De, "wie viel uhr ist es", "what time"),
    (Lang::De, "wie viel uhr", "what time"),
    (Lang::De, "wieviel uhr", "what time"),
    (Lang::De, "welcher tag ist heute", "what date today"),
    (Lang::De, "der wievielte ist heute", "what date today"),
    (Lang::De, "welches datum", "what date"),
    (Lang::De, "wie ist das wetter", "weather"),
    (Lang::De, "wie wird das wetter", "weather forecast"),
    (Lang::De, "wird es regnen", "will rain"),
    (Lang::De, "wird es schneien", "will snow"),
    (Lang::De, "wie viel kostet", "price cost"),
    (Lang::De, "wie viel kosten", "price cost"),
    (Lang::De, "wieviel kostet", "price cost"),
    (Lang::De, "was kostet", "price cost"),
    (Lang::De, "was kosten", "price cost"),
    (Lang::De, "wie teuer", "price cost"),
    (Lang::De, "wie viel", "how much"),
    (Lang::De, "wieviel", "how much"),
    (Lang::De, "wie viele", "how many"),
    (Lang::De, "wie komme ich zum", "directions route"),
    (Lang::De, "wie komme ich zur", "directions route"),
    (Lang::De, "wie komme ich nach", "directions route"),
    (Lang::De, "wie komme ich", "directions route"),
    (Lang::De, "wie lange dauert", "how long"),
    (Lang::De, "wie lange", "how long"),
    (Lang::De, "erinnere mich", "remind reminder"),
    (Lang::De, "e mails", "email mail"),
    // French.
    (Lang::Fr, "quelle heure est il", "what time"),
    (Lang::Fr, "quelle heure il est", "what time"),
    (Lang::Fr, "il est quelle heure", "what time"),
    (Lang::Fr, "quelle heure", "what time"),
    (Lang::Fr, "quel jour sommes nous", "what date today"),
    (Lang::Fr, "quel jour est on", "what date today"),
    (Lang::Fr, "on est quel jour", "what date today"),
    (Lang::Fr, "quelle date sommes nous", "what date today"),
    (Lang::Fr, "quel temps fait il", "weather"),
    (Lang::Fr, "quel temps fera t il", "weather forecast"),
    (Lang::Fr, "quel temps va t il faire", "weather forecast"),
    (Lang::Fr, "quel temps", "weather"),
    (Lang::Fr, "va t il pleuvoir", "will rain"),
    (Lang::Fr, "va t il neiger", "will snow"),
    (Lang::Fr, "il va pleuvoir", "will rain"),
    (Lang::Fr, "il va neiger", "will snow"),
    (Lang::Fr, "combien coûte", "price cost"),
    (Lang::Fr, "combien coûtent", "price cost"),
    (Lang::Fr, "combien ça coûte", "price cost"),
    (Lang::Fr, "combien vaut", "price value"),
    (Lang::Fr, "combien valent", "price value"),
    (Lang::Fr, "combien font", "how much"),
    (Lang::Fr, "combien fait", "how much"),
    (Lang::Fr, "combien de temps", "how long"),
    (Lang::Fr, "combien de", "how many"),
    (Lang::Fr, "à la une", "headlines top news"),
    (Lang::Fr, "gros titres", "headlines"),
    (Lang::Fr, "dernières nouvelles", "latest news"),
    (Lang::Fr, "dernières actualités", "latest news"),
    (Lang::Fr, "comment aller à", "directions route"),
    (Lang::Fr, "comment aller au", "directions route"),
    (Lang::Fr, "comment aller", "directions route"),
    (Lang::Fr, "comment se rendre à", "directions route"),
    (Lang::Fr, "comment se rendre au", "directions route"),
    (Lang::Fr, "comment se rendre", "directions route"),
    (Lang::Fr, "rappelle moi", "remind reminder"),
    (Lang::Fr, "rappelez moi", "remind reminder"),
    (Lang::Fr, "boîte de réception", "inbox"),
    (Lang::Fr, "feuille de calcul", "spreadsheet sheet"),
    (Lang::Fr, "pour cent", "percent"),
    (Lang::Fr, "rendez vous", "appointment meeting"),
    (Lang::Fr, "pas cher", "cheap"),
    (Lang::Fr, "pas chers", "cheap"),
    (Lang::Fr, "pas chère", "cheap"),
    (Lang::Fr, "pas chères", "cheap"),
    (Lang::Fr, "ordre du jour", "agenda"),
    (Lang::Fr, "le plus proche", "nearest closest"),
    (Lang::Fr, "la plus proche", "nearest closest"),
    (Lang::Fr, "les plus proches", "nearest closest"),
    (Lang::Fr, "non lus", "unread"),
    (Lang::Fr, "non lues", "unread"),
    (Lang::Fr, "non lu", "unread"),
    (Lang::Fr, "non lue", "unread"),
    (Lang::Fr, "e mails", "email mail"),
    (Lang::Fr, "demande de tirage", "pull request"),
    (Lang::Fr, "demande de fusion", "merge request"),
    // Portuguese.
    (Lang::Pt, "que horas são", "what time"),
    (Lang::Pt, "que horas sao", "what time"),
    (Lang::Pt, "que hora é", "what time"),
    (Lang::Pt, "que horas", "what time"),
    (Lang::Pt, "a que horas", "what time"),
    (Lang::Pt, "que dia é hoje", "what date today"),
    (Lang::Pt, "que dia é", "what date"),
    (Lang::Pt, "como está o tempo", "weather"),
    (Lang::Pt, "como vai estar o tempo", "weather forecast"),
    (Lang::Pt, "como está o clima", "weather"),
    (Lang::Pt, "vai chover", "will rain"),
    (Lang::Pt, "vai nevar", "will snow"),
    (Lang::Pt, "quanto custa", "price cost"),
    (Lang::Pt, "quanto custam", "price cost"),
    (Lang::Pt, "quanto vale", "price value"),
    (Lang::Pt, "quanto valem", "price value"),
    (Lang::Pt, "quanto tempo leva", "how long"),
    (Lang::Pt, "quanto tempo", "how long"),
    (Lang::Pt, "últimas notícias", "latest news"),
    (Lang::Pt, "como chegar ao", "directions route"),
    (Lang::Pt, "como chegar à", "directions route"),
    (Lang::Pt, "como chegar a", "directions route"),
    (Lang::Pt, "como chegar", "directions route"),
    (Lang::Pt, "como ir para", "directions route"),
    (Lang::Pt, "lembre me", "remind reminder"),
    (Lang::Pt, "me lembre", "remind reminder"),
    (Lang::Pt, "lembra me", "remind reminder"),
    (Lang::Pt, "me lembra", "remind reminder"),
    (Lang::Pt, "caixa de entrada", "inbox"),
    (Lang::Pt, "por cento", "percent"),
    (Lang::Pt, "na segunda", "monday"),
    (Lang::Pt, "na terça", "tuesday"),
    (Lang::Pt, "na quarta", "wednesday"),
    (Lang::Pt, "na quinta", "thursday"),
    (Lang::Pt, "na sexta", "friday"),
    (Lang::Pt, "mais próximo", "nearest closest"),
    (Lang::Pt, "mais próxima", "nearest closest"),
    (Lang::Pt, "mais perto", "nearest closest"),
    (Lang::Pt, "não lidos", "unread"),
    (Lang::Pt, "não lidas", "unread"),
    (Lang::Pt, "não lido", "unread"),
    (Lang::Pt, "não lida", "unread"),
    (Lang::Pt, "e mails", "email mail"),
    (Lang::Pt, "e mail", "email mail"),
    // Chinese.
    (Lang::Zh, "现在几点", "current time"),
    (Lang::Zh, "几点了", "what time"),
    (Lang::Zh, "几点钟", "what time"),
    (Lang::Zh, "几号", "what date"),
    (Lang::Zh, "星期几", "what day week"),
    (Lang::Zh, "礼拜几", "what day week"),
    (Lang::Zh, "天气怎么样", "weather"),
    (Lang::Zh, "天气如何", "weather"),
    (Lang::Zh, "会下雨", "will rain"),
    (Lang::Zh, "会下雪", "will snow"),
    (Lang::Zh, "多少钱", "price cost"),
    (Lang::Zh, "怎么走", "directions route"),
    (Lang::Zh, "怎么去", "directions route"),
    (Lang::Zh, "如何去", "directions route"),
    (Lang::Zh, "提醒我", "remind reminder"),
    (Lang::Zh, "多长时间", "how long"),
    (Lang::Zh, "多久", "how long"),
    (Lang::Zh, "最接近", "nearest closest"),
    (Lang::Zh, "最近的", "nearest latest"),
    (Lang::Zh, "下个月", "next month"),
    (Lang::Zh, "上个月", "last month"),
    (Lang::Zh, "这个月", "this month"),
    (Lang::Zh, "本月", "this month"),
    (Lang::Zh, "转换成", "convert"),
    (Lang::Zh, "换算成", "convert"),
    (Lang::Zh, "翻译成", "translate"),
    // Japanese.
    (Lang::Ja, "今何時", "current time"),
    (Lang::Ja, "何時ですか", "what time"),
    (Lang::Ja, "何日", "what date"),
    (Lang::Ja, "何曜日", "what day week"),
    (Lang::Ja, "天気はどう", "weather"),
    (Lang::Ja, "雨が降", "rain"),
    (Lang::Ja, "雪が降", "snow"),
    (Lang::Ja, "いくらですか", "price cost"),
    (Lang::Ja, "行き方", "directions route"),
    (Lang::Ja, "どうやって行", "directions route"),
    (Lang::Ja, "どうやって", "how"),
    (Lang::Ja, "いくつ", "how many"),
    (Lang::Ja, "どのくらい", "how long"),
    (Lang::Ja, "何通", "how many"),
    (Lang::Ja, "最も近い", "nearest closest"),
    (Lang::Ja, "一番近い", "nearest closest"),
];

/// The longest phrase of `lang` that the words `words` start with: its English words and its
/// length in words.
pub(super) fn words<S: AsRef<str>>(lang: Lang, words: &[S]) -> Option<(&'static str, usize)> {
    PHRASES
        .iter()
        .filter(|(l, _, _)| *l == lang)
        .filter_map(|(_, phrase, english)| {
            let n = phrase.split(' ').count();
            let head = words.get(..n)?;
            phrase.split(' ').zip(head).all(|(p, w)| p == w.as_ref()).then_some((*english, n))
        })
        .max_by_key(|(_, n)| *n)
}

/// The longest phrase of `lang` that `run` starts with: its English words and its length in
/// characters.
pub(super) fn chars(lang: Lang, run: &[char]) -> Option<(&'static str, usize)> {
    PHRASES
        .iter()
        .filter(|(l, _, _)| *l == lang)
        .filter_map(|(_, phrase, english)| {
            let n = phrase.chars().count();
            (n <= MAX_CHARS && run.get(..n)?.iter().copied().eq(phrase.chars())).then_some((*english, n))
        })
        .max_by_key(|(_, n)| *n)
}
