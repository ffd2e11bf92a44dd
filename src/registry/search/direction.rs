//! The direction of a conversion. "Convert “Denver, CO” into latitude/longitude" asks for the
//! tool that converts *to* coordinates (`geocode`: "Convert addresses or place names to
//! geographic coordinates"), not the one that converts *from* them (`reverse_geocode`:
//! "Convert geographic coordinates (latitude and longitude) to a human-readable address"). Both
//! descriptions hold the same words; only their order tells them apart, and the words of a
//! request do not keep order. So the final list is read once more: a tool whose description
//! converts toward what the request names last (its target) gains [`DIRECTION`], one that
//! converts away from it loses as much. Requests in other languages are read by their English
//! gloss, whose words keep the request's order ("convierte X en Y", "wandle X in Y um", "把X转换成Y"
//! all name the target last).

use super::text::{stem, tokenize};

/// What agreeing (or disagreeing) with the request's direction adds to (or takes from) a
/// tool's score: enough to order two tools of one server that the words cannot, not enough to
/// lift a tool the request does not otherwise fit.
pub const DIRECTION: f32 = 0.05;

/// The verbs of a conversion, as a description's first word or a request's word.
const VERBS: &[&str] =
    &["convert", "converts", "converting", "turn", "turns", "transform", "transforms", "translate", "translates"];
/// Words before a conversion's target.
const JOINS: &[&str] = &["to", "into"];
/// Words that name nothing converted.
const FILLER: &[&str] = &[
    "the", "a", "an", "of", "and", "or", "in", "on", "at", "for", "from", "with", "my", "our", "this", "that", "these",
    "those", "please", "me", "it", "them", "some", "its", "their", "your",
];

/// A text's words that may name what is converted, stemmed, in order.
fn content(words: &[String]) -> Vec<String> {
    words.iter().filter(|w| !FILLER.contains(&w.as_str()) && !JOINS.contains(&w.as_str())).map(|w| stem(w)).collect()
}

/// What a request converts to: the words after the "to"/"into" that follows its conversion verb,
/// else (a gloss keeps no such word) its last two words that name something. `None` when the
/// request asks for no conversion.
pub fn target(request: &str) -> Option<Vec<String>> {
    // Most requests ask for no conversion: a look at their bytes tells, before any word is made.
    let bytes = request.as_bytes();
    let at = |i: usize, stem: &[u8]| bytes.get(i..i + stem.len()).is_some_and(|w| w.eq_ignore_ascii_case(stem));
    // (At a word's start: "return" and "pattern" hold no conversion.)
    let starts = |i: usize| i == 0 || !bytes[i - 1].is_ascii_alphabetic();
    let asks = (0..bytes.len()).position(|i| match bytes[i] | 0x20 {
        _ if !starts(i) => false,
        b'c' => at(i, b"convert"),
        b't' => at(i, b"turn") || at(i, b"transform") || at(i, b"translat"),
        _ => false,
    });
    // The words from the first that may be a conversion's verb on (an ASCII letter: a character's
    // first byte).
    let words = tokenize(&request[asks?..]);
    let verb = words.iter().position(|w| VERBS.contains(&w.as_str()))?;
    let after = &words[verb + 1..];
    let target = match after.iter().rposition(|w| JOINS.contains(&w.as_str())) {
        Some(j) => content(&after[j + 1..]),
        None => {
            let all = content(after);
            all[all.len().saturating_sub(2)..].to_vec()
        }
    };
    (!target.is_empty()).then_some(target)
}

/// A description's first sentence read as "Convert A to B": (A, B) as stemmed words.
fn sides(description: &str) -> Option<(Vec<String>, Vec<String>)> {
    let end = description.find(['\n', '.']).unwrap_or(description.len());
    let words = tokenize(&description[..end]);
    if !words.first().is_some_and(|w| VERBS.contains(&w.as_str())) {
        return None;
    }
    let join = words.iter().position(|w| JOINS.contains(&w.as_str()))?;
    let (source, target) = (content(&words[1..join]), content(&words[join + 1..]));
    (!source.is_empty() && !target.is_empty()).then_some((source, target))
}

/// +1 when the tool converts toward `target` (more of its words on the description's target
/// side than on its source side), -1 when away from it, 0 when neither or the description says
/// no direction.
pub fn agreement(target: &[String], description: &str) -> i8 {
    let Some((from, to)) = sides(description) else { return 0 };
    let count = |side: &[String]| target.iter().filter(|w| side.contains(w)).count();
    match count(&to).cmp(&count(&from)) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEOCODE: &str = "Convert addresses or place names to geographic coordinates (latitude and longitude)";
    const REVERSE: &str = "Convert geographic coordinates (latitude and longitude) to a human-readable address";

    /// Each way round, in English and as glosses of other languages read it (the target last,
    /// no "to"): the tool converting toward the request's target agrees, the other disagrees.
    #[test]
    fn a_conversion_agrees_with_the_tool_that_goes_its_way() {
        for request in [
            "Convert “Denver, CO” into latitude/longitude",
            "convert the address of the office to coordinates",
            "convert become Denver CO latitude parallel of length longitude extension",
            "convert Denver CO coordinates",
        ] {
            let t = target(request).unwrap_or_default();
            assert_eq!((agreement(&t, GEOCODE), agreement(&t, REVERSE)), (1, -1), "{request}: {t:?}");
        }
        let t = target("convert 39.74,-104.99 to a street address").unwrap_or_default();
        assert_eq!((agreement(&t, GEOCODE), agreement(&t, REVERSE)), (-1, 1), "{t:?}");
    }

    /// No conversion asked, or a description with no direction: nothing moves.
    #[test]
    fn no_direction_moves_nothing() {
        assert_eq!(target("find the coordinates of Denver"), None);
        assert_eq!(target("convert"), None);
        assert_eq!(target("return the pattern of the turnstile"), None);
        let t = target("convert 3 km to miles").unwrap_or_default();
        assert_eq!(agreement(&t, "Convert length between units (km, miles, feet)."), 0);
        assert_eq!(agreement(&t, "Get the current weather"), 0);
        assert_eq!(agreement(&t, "Convert to"), 0);
        assert_eq!(agreement(&[], GEOCODE), 0);
    }
}
