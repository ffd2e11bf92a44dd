//! The reading of requests: a task's whole reading, misspelt verbs, memos, local paths.

use super::*;

/// A task of several steps is read whole as its steps are ([`Parsed::merged`]): their words
/// in order, the first step's verb the ask and every other one a later ask, the products any
/// of them names, and "all" read as no ask in a long task.
#[test]
fn a_tasks_whole_reading_is_its_steps_readings() {
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let mut memo = Memo::new(true, 32);
    let steps =
        ["find the open issues in the github repo", "post a summary to slack", "create a jira ticket for all of them"];
    let parsed: Vec<Parsed> = steps.iter().map(|s| index.parse_with(s, &mut memo)).collect();
    let whole = Parsed::merged(&parsed);
    assert_eq!(whole.words.len(), parsed.iter().map(|p| p.words.len()).sum::<usize>());
    assert_eq!(whole.verbs.len(), parsed.iter().map(|p| p.verbs.len()).sum::<usize>());
    assert_eq!(whole.verbs[0].1, 1.0, "the first step's verb is the ask");
    assert!(parsed[1].verbs.iter().chain(&parsed[2].verbs).any(|v| v.1 == 1.0), "each step asks on its own");
    assert!(whole.verbs[parsed[0].verbs.len()..].iter().all(|v| v.1 <= LATER_VERB), "{:?}", whole.verbs);
    for product in ["github", "slack", "jira"] {
        assert!(whole.mentioned.get(product).is_some_and(|c| *c >= 1.0), "{product}: {:?}", whole.mentioned);
    }
    assert_eq!(whole.plain, parsed.iter().map(|p| p.plain).sum::<usize>());
    assert!(parsed[2].many && !whole.many, "a long task's \"all\" is no ask of its own");
    let short = [index.parse_with("list all of them", &mut memo)];
    assert!(Parsed::merged(&short).many);
    // A first clause that asks nothing leaves the ask to the next one.
    let context = ["the quarterly numbers from finance", "post a summary to slack", "create a jira ticket"];
    let parsed: Vec<Parsed> = context.iter().map(|s| index.parse_with(s, &mut memo)).collect();
    assert!(parsed[0].verbs.iter().all(|v| v.1 <= LATER_VERB), "{:?}", parsed[0].verbs);
    let whole = Parsed::merged(&parsed);
    let second = parsed[0].verbs.len();
    assert_eq!(whole.verbs[second].1, 1.0, "{:?}", whole.verbs);
    assert!(whole.verbs[second + parsed[1].verbs.len()..].iter().all(|v| v.1 <= LATER_VERB));
}

/// A request's memo makes room for its words once, and for no more than [`MEMO_ROOM`] of
/// them however long the request.
#[test]
fn a_memos_room_is_bounded() {
    assert!(Memo::new(true, 40).expanded.capacity() >= 40);
    assert!(Memo::new(true, 1_000_000).expanded.capacity() <= 2 * MEMO_ROOM);
    assert_eq!(Memo::new(false, 40).expanded.capacity(), 0);
    assert!(super::bm25::Memo::new(true, 1_000_000).capacity() <= 2 * MEMO_ROOM);
}

/// A misspelt verb is looked up among the verbs of a near length only, and found as a
/// search of every verb in the map's order finds it.
#[test]
fn a_misspelt_verb_is_the_one_a_full_search_finds() {
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let scan = |w: &str| {
        index
            .verbs
            .keys()
            .find(|v| v.len() >= 4 && v.len().abs_diff(w.len()) <= 1 && text::plausible_typo(w, v))
            .copied()
    };
    let mut words: Vec<String> = Vec::new();
    for v in index.verbs.keys().filter(|v| v.is_ascii() && v.len() >= 4) {
        let b = v.as_bytes();
        for i in 0..b.len() {
            let mut dropped = b.to_vec();
            dropped.remove(i);
            words.push(String::from_utf8(dropped).unwrap_or_default());
            let mut swapped = b.to_vec();
            if i + 1 < b.len() {
                swapped.swap(i, i + 1);
                words.push(String::from_utf8(swapped).unwrap_or_default());
            }
            let mut doubled = b.to_vec();
            doubled.insert(i, b[i]);
            words.push(String::from_utf8(doubled).unwrap_or_default());
        }
    }
    words.retain(|w| w.len() >= 4);
    let mut found = 0;
    for w in &words {
        assert_eq!(index.verb_typo(w), scan(w), "{w}");
        found += usize::from(scan(w).is_some());
    }
    assert!(found > words.len() / 2, "{found} of {}", words.len());
    assert_eq!(index.verb_typo("sned"), Some("send"));
}

/// What a long request says past its eighth step still counts in its whole reading: a
/// product named only there is found.
#[test]
fn a_long_requests_words_past_its_last_clause_count() {
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let steps: String = (1..=9).map(|i| format!("check the weather forecast for city number {i}. ")).collect();
    let request = format!("{steps}Afterwards the whole summary goes to the sales team's channel on slack.");
    let (parts, rest) = super::super::clauses_with_rest(&request);
    assert_eq!(parts.len(), super::super::MAX_CLAUSES);
    assert!(rest.contains("slack"), "{rest}");
    let hits = index.search(&request, 10, &|_| true);
    assert!(hits.iter().any(|h| h.name.starts_with("slack_")), "{:?}", hits.iter().map(|h| h.name).collect::<Vec<_>>());
}

#[test]
fn local_paths_are_told_from_other_slashes() {
    for p in ["/tmp/data", "~/notes.md", "./src", "../out.txt", "\"/home/me/todo.txt\"", "/etc"] {
        assert!(is_local_path(p), "{p}");
    }
    for p in ["CI/CD", "acme/api", "vercel/next.js", "/", "//", "~", "https://example.com/a", "and/or"] {
        assert!(!is_local_path(p), "{p}");
    }
}
