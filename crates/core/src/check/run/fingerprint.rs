//! One implementation of "these are the same measurements", for `analyze` (two runs of a side,
//! two repeats of a run) and `compare` (a run of one side against every run of the other).
//!
//! A request's gaps between tokens identify its measurement: microsecond gaps are never all
//! equal in two measurements, and a copy whose first-token, end and send times were moved
//! still has them. A request is identified when it has at least [`GAPS`] gaps of at least
//! [`DISTINCT`] distinct values, shared with no other request of its own repeat (streams decoded
//! in one batch step by step, or a server on a fixed schedule, share their gaps: those carry
//! the server's steps, not a measurement of their own); two requests are one measurement when their gaps are equal,
//! each within [`NUDGE_US`] (a copy nudged by a microsecond or two is a copy). Two runs (or
//! repeats) share measurements when [`SHARED`] requests or more of one are requests of the
//! other — the whole run, a subset of it, or a few requests spliced in — or when a repeat's
//! every column is equal to another's (requests without enough gaps: another tool's summary
//! file, one-token outputs).

use std::collections::HashMap;

use crate::schema::{RequestColumns, Run};

/// Fewest gaps that identify a request.
pub const GAPS: usize = 8;
/// Fewest distinct gap values that identify a request.
pub const DISTINCT: usize = 4;
/// How far each gap of a copy may have been moved, µs.
pub const NUDGE_US: u32 = 3;
/// Requests in common that make two runs (or repeats) one measurement.
pub const SHARED: usize = 2;
/// Width of the buckets a request is looked up by, µs: wider than two nudges, so a nudged
/// copy lies in the same bucket or the next one.
const BUCKET_US: u32 = 16;

/// A request's identifying gaps, when it has enough of them.
fn identified(gaps: &[u32]) -> Option<&[u32]> {
    if gaps.len() < GAPS {
        return None;
    }
    let mut distinct: Vec<u32> = Vec::with_capacity(DISTINCT);
    for &g in gaps {
        if !distinct.contains(&g) {
            distinct.push(g);
            if distinct.len() == DISTINCT {
                return Some(gaps);
            }
        }
    }
    None
}

/// The requests of one repeat that its gaps identify: enough gaps, and no other request of
/// the same repeat with the same gaps. Requests that share their gaps with another of their own
/// repeat — streams decoded in one batch from the same step, or a server whose timing is a
/// fixed schedule — carry the server's steps, not a measurement of their own, so they identify
/// nothing.
fn own(r: &RequestColumns) -> Vec<&[u32]> {
    let all: Vec<&[u32]> = r.itl_us.iter().filter_map(identified).collect();
    let mut by_key: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, g) in all.iter().enumerate() {
        by_key.entry(key(g, 0, 0)).or_default().push(i);
    }
    all.iter()
        .enumerate()
        .filter(|(i, g)| {
            !near(g).any(|k| {
                by_key
                    .get(&k)
                    .is_some_and(|v| v.iter().any(|j| j != i && close(g, all[*j])))
            })
        })
        .map(|(_, g)| *g)
        .collect()
}

/// The keys a request close to `g` may lie under.
fn near(g: &[u32]) -> impl Iterator<Item = Key> + '_ {
    (-1..=1).flat_map(move |d0| (-1..=1).map(move |d1| key(g, d0, d1)))
}

/// Where a request is looked up: its gap count and its first two gaps' buckets.
type Key = (usize, u32, u32);

fn key(g: &[u32], d0: i64, d1: i64) -> Key {
    let b = |v: u32, d: i64| (i64::from(v / BUCKET_US) + d).max(0) as u32;
    (g.len(), b(g[0], d0), b(g[1], d1))
}

fn close(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) <= NUDGE_US)
}

/// The identified requests of some repeats, indexed for lookup.
pub struct Index<'a> {
    by_key: HashMap<Key, Vec<&'a [u32]>>,
}

impl<'a> Index<'a> {
    /// Every identified request of `repeats`.
    pub fn of(repeats: impl IntoIterator<Item = &'a RequestColumns>) -> Index<'a> {
        let mut by_key: HashMap<Key, Vec<&'a [u32]>> = HashMap::new();
        for r in repeats {
            for g in own(r) {
                by_key.entry(key(g, 0, 0)).or_default().push(g);
            }
        }
        Index { by_key }
    }

    /// Whether the index holds a measurement of the request with gaps `g`.
    fn holds(&self, g: &[u32]) -> bool {
        near(g).any(|k| {
            self.by_key
                .get(&k)
                .is_some_and(|v| v.iter().any(|h| close(g, h)))
        })
    }

    /// How many identified requests of `r` the index holds (stopping at `enough`).
    pub fn shared(&self, r: &RequestColumns, enough: usize) -> usize {
        let mut n = 0;
        for g in own(r) {
            if self.holds(g) {
                n += 1;
                if n >= enough {
                    break;
                }
            }
        }
        n
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Two repeats that are one measurement: every column equal (two requests or more), or
/// [`SHARED`] identified requests in common.
pub fn same_repeats(a: &RequestColumns, b: &RequestColumns) -> bool {
    if a.len() >= 2 && a == b {
        return true;
    }
    Index::of([b]).shared(a, SHARED) >= SHARED
}

/// Two runs that share measurements: a repeat of one equal to a repeat of the other, or
/// [`SHARED`] identified requests of one among the other's.
pub fn same_runs(a: &Run, b: &Run) -> bool {
    let equal = a
        .repeats
        .iter()
        .any(|x| x.requests.len() >= 2 && b.repeats.iter().any(|y| x.requests == y.requests));
    if equal {
        return true;
    }
    let index = Index::of(b.repeats.iter().map(|r| &r.requests));
    if index.is_empty() {
        return false;
    }
    let mut n = 0;
    for r in &a.repeats {
        n += index.shared(&r.requests, SHARED - n);
        if n >= SHARED {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Gaps;

    fn columns(gaps: &[Vec<u32>]) -> RequestColumns {
        let mut r = RequestColumns::default();
        let mut g = Gaps::new();
        for (i, x) in gaps.iter().enumerate() {
            r.send_offset_us.push(i as u64);
            g.push(x);
        }
        r.itl_us = g;
        r
    }

    fn measured(seed: u64, n: usize) -> Vec<Vec<u32>> {
        let mut rng = crate::base::rng::Rng::new(seed);
        (0..n)
            .map(|_| (0..12).map(|_| rng.range(9_000, 11_000) as u32).collect())
            .collect()
    }

    #[test]
    fn a_copy_a_subset_and_a_nudged_copy_are_the_same_measurement() {
        let a = measured(1, 20);
        let whole = columns(&a);
        assert!(same_repeats(&whole, &whole.clone()));
        assert!(same_repeats(&columns(&a[5..9]), &whole), "a subset");
        let nudged: Vec<Vec<u32>> = a
            .iter()
            .map(|g| g.iter().map(|x| x + 1).collect())
            .collect();
        assert!(same_repeats(&columns(&nudged), &whole), "nudged by 1 µs");
        let mut spliced = measured(2, 20);
        spliced[3] = a[7].clone();
        spliced[11] = a[2].clone();
        assert!(
            same_repeats(&columns(&spliced), &whole),
            "two requests spliced in"
        );
    }

    #[test]
    fn gaps_a_repeat_shares_between_its_requests_identify_nothing() {
        // A server on a fixed schedule: every request of a repeat gets the same gaps (±2 µs),
        // and so does the next collection of it. Not one measurement.
        let schedule: Vec<u32> = (0..15).map(|i| 4_000 + (i * 137 % 300)).collect();
        let run = |jitter: u32| -> Vec<Vec<u32>> {
            (0..8)
                .map(|k| schedule.iter().map(|g| g + (k + jitter) % 3).collect())
                .collect()
        };
        assert!(!same_repeats(&columns(&run(0)), &columns(&run(1))));
        // A copy of such a repeat is still its copy: every column equal.
        assert!(same_repeats(&columns(&run(0)), &columns(&run(0))));
    }

    #[test]
    fn distinct_measurements_are_distinct() {
        for seed in 0..50 {
            let (a, b) = (measured(seed, 30), measured(seed + 1000, 30));
            assert!(!same_repeats(&columns(&a), &columns(&b)), "{seed}");
        }
        // Gaps too few or too alike to identify a request identify nothing.
        let flat = columns(&vec![vec![10_000; 12]; 10]);
        assert!(!same_repeats(&flat, &columns(&vec![vec![10_000; 12]; 9])));
    }
}
