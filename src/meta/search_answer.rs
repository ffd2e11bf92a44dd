//! How a search_tools answer reads to the agent: the ranking's [`Found`] rendered for the context
//! it lands in (every token of it is paid for in every task that searches).
//!
//! The reference fields stay on every result (`name`, `description`, `integration`, `score`). Two
//! things that cost without informing are left out:
//! - The full description of a result well below the best one. Results within [`CLOSE_TO_TOP`] of
//!   the best keep theirs (they are the ones the agent chooses between); the others keep the first
//!   clause of it (up to the first `: `, `; `, `. `, ` — `, ` (` or `, ` after at least three
//!   words), enough to tell what the tool is; get_tool_schema tells how to call it. A clause is
//!   always a prefix of the description.
//! - `connected` on every line: one `not_connected` list names each integration of the results
//!   that needs connecting first (absent when none does).

use serde::Serialize;

use super::search_tools::{Found, Hit};

/// A result this far below the best one or further is shown with the first clause of its
/// description.
pub const CLOSE_TO_TOP: f64 = 0.1;

/// The answer as the agent reads it.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub tools: Vec<Line>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_connected: Vec<&'static str>,
    /// Upstream servers whose new or changed tools wait for the user's review (not offered).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes_waiting: Vec<String>,
}

/// One result.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub name: &'static str,
    pub description: &'static str,
    pub integration: &'static str,
    pub score: f64,
    /// A guess: nothing scored as relevant in its place. Left out when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weak: bool,
}

impl From<Found> for Answer {
    fn from(found: Found) -> Answer {
        let best = found.tools.first().map_or(0.0, |h| h.score);
        let mut not_connected: Vec<&'static str> = Vec::new();
        let tools = found
            .tools
            .iter()
            .map(|h: &Hit| {
                if !h.connected && !not_connected.contains(&h.integration) {
                    not_connected.push(h.integration);
                }
                let close = h.score > best - CLOSE_TO_TOP;
                Line {
                    name: h.name,
                    description: if close { h.description } else { first_clause(h.description) },
                    integration: h.integration,
                    score: h.score,
                    weak: h.weak,
                }
            })
            .collect();
        Answer { tools, not_connected, changes_waiting: found.changes_waiting }
    }
}

/// Where a description's first clause ends.
const CLAUSE_ENDS: &[&str] = &[": ", "; ", ". ", " — ", " (", ", "];

/// Fewest words a first clause has ("Find Jira users"); a shorter one ("Cancel (delete) ...")
/// runs on to the next clause end.
const MIN_WORDS: usize = 3;

/// The first clause of `description`: the text before the earliest clause end that leaves at
/// least [`MIN_WORDS`] words (a period after `e.g`, `i.e`, `etc` or `vs` ends nothing); the whole
/// description when none does. Always a prefix of `description`.
pub fn first_clause(description: &str) -> &str {
    let mut ends: Vec<(usize, &str)> =
        CLAUSE_ENDS.iter().flat_map(|sep| description.match_indices(sep).map(move |(i, _)| (i, *sep))).collect();
    ends.sort_unstable();
    for (i, sep) in ends {
        let before = description[..i].trim_end_matches([' ', ',']);
        if before.split_whitespace().count() < MIN_WORDS || matches!(sep, ". " | ", ") && abbreviation_before(before) {
            continue;
        }
        return before;
    }
    description
}

/// Whether the word just before a period or comma is an abbreviation (`e.g`, `i.e.`, `etc`, `vs`).
fn abbreviation_before(text: &str) -> bool {
    let word = text.rsplit([' ', '(']).next().unwrap_or_default().trim_end_matches('.').to_ascii_lowercase();
    matches!(word.as_str(), "e.g" | "i.e" | "etc" | "vs" | "eg" | "ie")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(
        name: &'static str,
        description: &'static str,
        integration: &'static str,
        score: f64,
        connected: bool,
    ) -> Hit {
        Hit { name, description, integration, score, weak: false, connected }
    }

    #[test]
    fn first_clause_is_a_prefix_up_to_the_first_clause_end() {
        for (d, want) in [
            ("Create a Jira issue: a ticket, bug or story.", "Create a Jira issue"),
            ("Get one Jira issue (ticket/bug/story) by key such as PROJ-123: summary", "Get one Jira issue"),
            ("List the comments. Oldest first.", "List the comments"),
            ("List comments. Oldest first.", "List comments. Oldest first."),
            ("Send a message — to a channel; or a DM", "Send a message"),
            ("Search issues, e.g. bugs. Page by page.", "Search issues, e.g. bugs"),
            ("Find things i.e. stuff; more", "Find things i.e. stuff"),
            ("Find Jira users (people) by name", "Find Jira users"),
            ("No clause end at all", "No clause end at all"),
            ("", ""),
            // Too few words before a clause end: on to the next one, or the whole description.
            (
                "Cancel (delete) a Google Calendar event, optionally notifying the guests.",
                "Cancel (delete) a Google Calendar event",
            ),
            ("Cancel (delete) an event or meeting.", "Cancel (delete) an event or meeting."),
            ("List things we know, e.g., the ones here. More", "List things we know"),
            ("Open it, e.g., now", "Open it, e.g., now"),
            ("Free/busy: for people. And more", "Free/busy: for people"),
            (": leading colon; then text", ": leading colon"),
            ("((((", "(((("),
            ("Ünïcödé ünï cödé — tail", "Ünïcödé ünï cödé"),
        ] {
            let got = first_clause(d);
            assert_eq!(got, want, "{d:?}");
            assert!(d.starts_with(got));
        }
    }

    #[test]
    fn close_results_keep_their_description_and_the_rest_their_first_clause() {
        let found = Found {
            tools: vec![
                hit("jira_create_issue", "Create a Jira issue: a ticket.", "jira", 0.95, false),
                hit("linear_create_issue", "Create a Linear issue: in a team.", "linear", 0.9, true),
                hit("jira_get_issue", "Get one Jira issue (ticket) by key.", "jira", 0.6, false),
            ],
            changes_waiting: vec![],
        };
        let v = serde_json::to_value(Answer::from(found)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "tools": [
                    {"name": "jira_create_issue", "description": "Create a Jira issue: a ticket.", "integration": "jira", "score": 0.95},
                    {"name": "linear_create_issue", "description": "Create a Linear issue: in a team.", "integration": "linear", "score": 0.9},
                    {"name": "jira_get_issue", "description": "Get one Jira issue", "integration": "jira", "score": 0.6}
                ],
                "not_connected": ["jira"]
            })
        );
    }

    #[test]
    fn an_answer_with_everything_connected_or_nothing_found_has_no_not_connected() {
        let v = serde_json::to_value(Answer::from(Found { tools: vec![], changes_waiting: vec![] })).unwrap();
        assert_eq!(v, serde_json::json!({"tools": []}));
        let found = Found {
            tools: vec![hit("time_get_current", "Current time: in a zone.", "time", 0.9, true)],
            changes_waiting: vec![],
        };
        let v = serde_json::to_value(Answer::from(found)).unwrap();
        assert!(v.get("not_connected").is_none());
    }

    #[test]
    fn a_hostile_description_is_cut_on_character_boundaries_or_kept_whole() {
        // An upstream server's description: separators everywhere, multi-byte text, no words.
        for d in [
            "— — —",
            " ( ( (",
            "🙂🙂: 🙂",
            "x. y. z",
            ". . .",
            ";;;; ; ;",
            "\u{0}: \u{0}",
            "a b c: ",
            "a b c d. e.g. x",
        ] {
            let got = first_clause(d);
            assert!(d.starts_with(got), "{d:?} -> {got:?}");
        }
        let long = "a".repeat(100_000);
        assert_eq!(first_clause(&long), long);
    }
}
