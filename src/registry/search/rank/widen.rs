//! A long request's list: its texts' rankings merged, widened by the servers they agree on.

use super::super::*;

/// How many places of a long request's list go to the merge of its texts' rankings before the
/// servers the texts agree on share the rest ([`widen`]).
const MERGED_FIRST: usize = 2;
/// How many of a text's first tools vote for their servers ([`widen`]).
const VOTERS: usize = 2;

/// A request of several steps' list. A task's steps mostly use the tools of one or two servers
/// (a museum's search, then its object; an article's search, then its sections), and a clause's
/// own ranking finds one of them at best: each text's first [`VOTERS`] tools vote for their
/// servers with their scores, and a tool's standing is its best score in any text plus its
/// server's share of the strongest server's vote. The list is the merge of the texts' rankings
/// ([`merge`]) for its first [`MERGED_FIRST`] places, then the merge's places and the standings'
/// in turn (scores made non-increasing down the list, as the merge makes them: a relevant tool
/// placed after a weak one is shown at the weak one's score, and marked weak).
pub(super) fn widen(lists: &[Vec<(f32, u32)>], limit: usize, of_doc: &[u32]) -> Vec<(f32, u32)> {
    let merged = merge(lists, limit);
    let mut votes: Map<u32, f32> = Map::default();
    let mut best: Map<u32, f32> = Map::default();
    for list in lists {
        let mut voted: Set<u32> = Set::default();
        for (i, &(score, d)) in list.iter().enumerate() {
            let server = of_doc[d as usize];
            if i < VOTERS && voted.insert(server) {
                *votes.entry(server).or_default() += score;
            }
            let b = best.entry(d).or_default();
            *b = b.max(score);
        }
    }
    let strongest = votes.values().fold(0.0_f32, |a, &b| a.max(b));
    if strongest <= 0.0 {
        return merged;
    }
    let share = |d: u32| votes.get(&of_doc[d as usize]).map_or(0.0, |v| v / strongest);
    let mut standings: Vec<(f32, u32, f32)> = best.iter().map(|(&d, &s)| (s + share(d), d, s)).collect();
    standings.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(f32, u32)> = Vec::with_capacity(limit);
    let place = |out: &mut Vec<(f32, u32)>, (score, d): (f32, u32)| {
        let capped = out.last().map_or(score, |&(prev, _)| score.min(prev));
        out.push((capped, d));
    };
    for &hit in merged.iter().take(MERGED_FIRST) {
        place(&mut out, hit);
    }
    let mut from_merge = merged.iter().skip(MERGED_FIRST).copied();
    let mut from_standings = standings.iter().map(|&(_, d, s)| (s, d));
    loop {
        let mut moved = false;
        for mut next in [&mut from_merge as &mut dyn Iterator<Item = (f32, u32)>, &mut from_standings] {
            if out.len() < limit
                && let Some(hit) = Iterator::find(&mut next, |h: &(f32, u32)| !out.iter().any(|o| o.1 == h.1))
            {
                place(&mut out, hit);
                moved = true;
            }
        }
        if !moved {
            return out;
        }
    }
}

/// Lists of (score, tool), best first, merged a rank at a time: the relevant entries first
/// (every list's first, then every list's second, ...), then the weak ones the same way. A
/// tool keeps its first place; scores are made non-increasing down the merged list.
pub(super) fn merge(lists: &[Vec<(f32, u32)>], limit: usize) -> Vec<(f32, u32)> {
    let mut out: Vec<(f32, u32)> = Vec::new();
    let mut seen: Set<u32> = Set::default();
    let depth = lists.iter().map(Vec::len).max().unwrap_or(0);
    for relevant in [true, false] {
        for r in 0..depth {
            for list in lists {
                let Some(&(score, d)) = list.get(r) else { continue };
                if (f64::from(score) >= RELEVANT_SCORE) == relevant && out.len() < limit && seen.insert(d) {
                    let capped = out.last().map_or(score, |&(prev, _)| score.min(prev));
                    out.push((capped, d));
                }
            }
        }
    }
    out
}
