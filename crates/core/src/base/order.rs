//! One comparison sort for the whole core, for the page's size: the standard library's stable
//! sort compiled once (over positions, with the comparison passed as a trait object) instead
//! of once per element type and closure — 350 functions, 172 KB of the reader worker's code
//! (twiggy, 2026-12-06). Each call site keeps only a small permutation of its own.
//!
//! For lists of records and names (tens to thousands of items). The per-request columns are
//! sorted by [`crate::base::sort`], without comparisons.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably (equal items keep their order), like `slice::sort_by`.
pub fn sort_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    let order = positions(v.len(), &|a, b| cmp(&v[a], &v[b]));
    permute(v, order);
}

/// Sorts `v` by the key `key` gives, stably, like `slice::sort_by_key`.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` ascending, like `slice::sort`.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The positions `0..n` in the order `cmp` gives them (ties by position).
fn positions(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves each item to its place: `v[k]` becomes the old `v[order[k]]`, by swaps along each
/// cycle of the permutation.
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        let mut k = start;
        while order[k] != start && order[k] != usize::MAX {
            let src = order[k];
            v.swap(k, src);
            order[k] = usize::MAX;
            k = src;
        }
        order[k] = usize::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_library_does() {
        // A stable sort on the first field keeps the second's order among equals.
        let mut seed = 7u64;
        for n in [0usize, 1, 2, 3, 10, 100, 1000] {
            let v: Vec<(u8, usize)> = (0..n)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 59) as u8, i)
                })
                .collect();
            let (mut ours, mut std) = (v.clone(), v.clone());
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            std.sort_by_key(|a| a.0);
            assert_eq!(ours, std, "n = {n}");
            let (mut ours, mut std) = (v.clone(), v);
            sort_by_key(&mut ours, |x| std::cmp::Reverse(x.0));
            std.sort_by_key(|x| std::cmp::Reverse(x.0));
            assert_eq!(ours, std, "n = {n}");
        }
        let mut names = vec!["np4", "np1", "b", "a"];
        sort(&mut names);
        assert_eq!(names, ["a", "b", "np1", "np4"]);
    }
}
