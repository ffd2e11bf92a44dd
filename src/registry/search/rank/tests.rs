//! The ranking of a request's texts: bounded cosines, kept buffers, lists of several steps.

use super::*;

fn bits(list: &[(f32, u32)]) -> Vec<(u32, u32)> {
    list.iter().map(|&(s, d)| (s.to_bits(), d)).collect()
}

/// Keys of (reach, tool) come back as they went in and sort as `total_cmp` sorts the reach,
/// descending, on every kind of value.
#[test]
fn reach_keys_sort_as_the_reaches() {
    let values = [
        0.0_f32,
        -0.0,
        1.0,
        -1.0,
        0.02,
        0.4999,
        0.5,
        1e-30,
        -1e-30,
        f32::MIN_POSITIVE / 2.0,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let pairs: Vec<(f32, u32)> = values.iter().enumerate().map(|(i, &v)| (v, 100 - i as u32)).collect();
    for &(v, d) in &pairs {
        let (back, e) = unordered(ordered(v, d));
        assert_eq!((back.to_bits(), e), (v.to_bits(), d));
    }
    for &(a, d) in &pairs {
        for &(b, e) in &pairs {
            let by_keys = ordered(a, d).cmp(&ordered(b, e));
            assert_eq!(by_keys, b.total_cmp(&a).then(d.cmp(&e)), "{a} {b}");
        }
    }
}

/// A request of several steps: the server its texts agree on brings its other ranked tools
/// up among the clauses' first places, after the merge's first two; no tool twice, the
/// limit kept, scores non-increasing.
#[test]
fn the_server_a_requests_texts_agree_on_widens_its_list() {
    // Tools 0-3 are one server's, 4-5 another's, 6-9 one each.
    let of_doc = [0, 0, 0, 0, 1, 1, 2, 3, 4, 5];
    let lists = vec![
        vec![(0.50, 0), (0.30, 6), (0.20, 1)],
        vec![(0.45, 7), (0.40, 0), (0.25, 2)],
        vec![(0.42, 1), (0.35, 8), (0.22, 3)],
        vec![(0.41, 9), (0.38, 4), (0.21, 5)],
    ];
    let merged = merge(&lists, 6);
    let widened = widen(&lists, 6, &of_doc);
    let tools = |l: &[(f32, u32)]| l.iter().map(|h| h.1).collect::<Vec<_>>();
    assert_eq!(tools(&merged), vec![0, 7, 1, 9, 6, 8]);
    // The merge's first two, then in turn the merge's next (1, then 9) and the standings'
    // best not yet placed: server 0's tools 2 and 3 (0.25 and 0.22, plus their server's
    // whole vote, 1.32), over 9's 0.41 + 0.41 / 1.32.
    assert_eq!(tools(&widened), vec![0, 7, 1, 2, 9, 3]);
    assert!(widened.windows(2).all(|w| w[0].0 >= w[1].0), "{widened:?}");
    for limit in 1..12 {
        let w = widen(&lists, limit, &of_doc);
        assert!(w.len() <= limit);
        let mut seen = w.iter().map(|h| h.1).collect::<Vec<_>>();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), w.len(), "a tool placed twice at limit {limit}");
        assert_eq!(w.len(), limit.min(10), "every ranked tool can be placed");
    }
    assert!(widen(&[], 5, &of_doc).is_empty());
}

/// Cosines read through their bounds rank every request as the exact ones do, to the bit:
/// each tool's own description as a request, short and long requests, with a server of
/// the user's beside the catalogue.
#[test]
fn bounded_cosines_rank_as_exact_ones() {
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let mut requests: Vec<String> = index.docs.iter().map(|d| d.description.to_string()).collect();
    requests.extend(
        [
            "send a message",
            "weather",
            "read the sales sheet, plot it as a bar chart and save it to my drive, then email the chart to the team",
            "find the trending repositories and summarise the top three; create a ticket for each",
            "zzzz qqqq",
        ]
        .map(String::from),
    );
    let fusion = Fusion::default();
    let mut compared = 0;
    for r in &requests {
        let r = r.trim();
        if r.is_empty() {
            continue;
        }
        for limit in [5, 20] {
            let bounded = index.ranked_cosines(r, limit, &|_| true, fusion, false, false, 1);
            let exact = index.ranked_cosines(r, limit, &|_| true, fusion, false, true, 1);
            assert_eq!(bits(&bounded), bits(&exact), "{r:.60}");
            compared += 1;
        }
    }
    assert!(compared > 400);
}

/// The buffers a search keeps for the next are left as a new search would find them: the
/// same request ranks the same before and after others, and as a new index ranks it.
#[test]
fn kept_buffers_leave_no_trace() {
    let requests = [
        "open a ticket about the login bug",
        "read the sales sheet, plot it as a bar chart, then save it",
        "weather forecast for paris",
        "gmial",
    ];
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let first: Vec<Vec<&str>> =
        requests.iter().map(|r| index.search(r, 10, &|_| true).into_iter().map(|h| h.name).collect()).collect();
    for (r, expected) in requests.iter().zip(&first).rev() {
        let again: Vec<&str> = index.search(r, 10, &|_| true).into_iter().map(|h| h.name).collect();
        assert_eq!(&again, expected, "{r}");
        let fresh = crate::registry::Registry::standard();
        let anew: Vec<&str> = fresh.index().search(r, 10, &|_| true).into_iter().map(|h| h.name).collect();
        assert_eq!(&anew, expected, "{r}");
    }
    let kept = index.scratch.lock().unwrap();
    assert!(!kept.is_empty() && kept.iter().all(Scratch::is_clear));
}

/// A long request's texts ranked on several threads give the lists one thread gives, to the
/// bit (English through the static table, another language through the multilingual one),
/// and leave every buffer they kept zeroed; no more buffers are kept than one search's threads.
#[test]
fn texts_ranked_on_several_threads_rank_as_on_one() {
    let registry = crate::registry::Registry::standard();
    let index = registry.index();
    let descriptions: Vec<&str> = index.docs.iter().map(|d| d.description).collect();
    let mut requests: Vec<(String, bool)> = descriptions.chunks(4).map(|four| (four.join(", then "), false)).collect();
    requests.push(("find the issue, then plot it and save it; notify the team\n".repeat(70), false));
    requests.push((
        "busca el problema en github, luego crea un gráfico con los datos y guárdalo en drive; después avisa al \
         equipo en slack y envía un correo al cliente"
            .to_string(),
        true,
    ));
    let fusion = Fusion::default();
    let mut several = 0;
    for (r, foreign) in &requests {
        let r = r.trim();
        let one = index.ranked_cosines(r, 10, &|_| true, fusion, *foreign, false, 1);
        for workers in [2, MAX_WORKERS] {
            let shared = index.ranked_cosines(r, 10, &|_| true, fusion, *foreign, false, workers);
            assert_eq!(bits(&one), bits(&shared), "{workers} threads: {r:.60}");
        }
        several += usize::from(clauses_with_rest(r).0.len() + 1 >= PARALLEL_FROM);
    }
    assert!(several > 40, "only {several} requests were ranked on several threads");
    let kept = index.scratch.lock().unwrap();
    assert!((2..=MAX_WORKERS).contains(&kept.len()), "{} buffers kept", kept.len());
    assert!(kept.iter().all(Scratch::is_clear));
}

/// Helper threads are shared by the whole process: a search takes what the others leave, at
/// most two in all, and gives them back when done, or when it unwinds.
#[test]
fn searches_side_by_side_share_the_helpers() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUNNING: AtomicUsize = AtomicUsize::new(0);
    let first = Helpers::take_from(&RUNNING, MAX_WORKERS);
    assert_eq!(first.n, MAX_WORKERS - 1);
    let second = Helpers::take_from(&RUNNING, 1);
    assert_eq!(second.n, 0, "none left while the first search runs");
    drop(first);
    let third = Helpers::take_from(&RUNNING, 1);
    assert_eq!(third.n, 1);
    let fourth = Helpers::take_from(&RUNNING, 2);
    assert_eq!(fourth.n, MAX_WORKERS - 2, "what the third left");
    drop((second, third, fourth));
    assert_eq!(RUNNING.load(Ordering::Relaxed), 0);
    let unwound = std::panic::catch_unwind(|| {
        let _taken = Helpers::take_from(&RUNNING, 2);
        panic!("a ranking panicked");
    });
    assert!(unwound.is_err());
    assert_eq!(RUNNING.load(Ordering::Relaxed), 0, "given back when a search unwinds");
}
