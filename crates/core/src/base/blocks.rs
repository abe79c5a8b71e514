//! Long loops in calls of bounded length, for the page's WebAssembly engine.
//!
//! A browser runs WebAssembly first as its baseline compiler's code and swaps in the optimized
//! code only between calls, never inside a running loop (V8 has no on-stack replacement for
//! WebAssembly). A loop over the 60 million gaps of a large run, in a function called once, ran
//! to its end in baseline code: twice as slow as the same loop once optimized (node, a
//! 1,000,000-request run: the analysis 0.75 s the first time, 0.43 s the second). Such loops
//! hand their values to their body in blocks instead, each block a call of its own, so the
//! optimized body takes over after the first few. Natively the blocks cost nothing measurable.

/// Most values handed to one call of a loop body.
pub const BLOCK: usize = 1 << 16;

/// Runs `body` over the values of every slice of `parts`, in order: whole slices grouped into
/// calls of at most [`BLOCK`] values, a longer slice in pieces of [`BLOCK`] (a run's gaps come
/// as one slice per request, a few dozen values each, or as one slice of all of them).
pub fn each_block<T>(parts: &[&[T]], mut body: impl FnMut(&[T])) {
    let mut i = 0;
    while i < parts.len() {
        let (mut j, mut values) = (i, 0);
        while j < parts.len() && values + parts[j].len() <= BLOCK {
            values += parts[j].len();
            j += 1;
        }
        if j > i {
            call(&mut body, &parts[i..j]);
            i = j;
        } else {
            for piece in parts[i].chunks(BLOCK) {
                call(&mut body, &[piece]);
            }
            i += 1;
        }
    }
}

/// One call of a loop body over a group of slices: kept out of line, so the engine can
/// optimize it and swap it in.
#[inline(never)]
fn call<T, F: FnMut(&[T])>(body: &mut F, group: &[&[T]]) {
    for values in group {
        body(values);
    }
}

/// Runs `body` over the indices `0..n` in ranges of at most [`BLOCK`], each a call of its own
/// (a loop over a run's million requests, one column index at a time).
pub fn each_range(n: usize, mut body: impl FnMut(std::ops::Range<usize>)) {
    let mut start = 0;
    while start < n {
        let end = n.min(start + BLOCK);
        call_range(&mut body, start..end);
        start = end;
    }
}

/// One call of [`each_range`]'s body, out of line for the same reason as [`call`].
#[inline(never)]
fn call_range<F: FnMut(std::ops::Range<usize>)>(body: &mut F, range: std::ops::Range<usize>) {
    body(range);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_once_in_order_in_bounded_blocks() {
        let a: Vec<u32> = (0..(BLOCK as u32 * 2 + 5)).collect();
        let b: Vec<u32> = vec![7, 8];
        let empty: Vec<u32> = Vec::new();
        let (mut seen, mut longest) = (Vec::new(), 0);
        each_block(&[&b, &a, &empty, &b], |values| {
            seen.extend_from_slice(values);
            longest = longest.max(values.len());
        });
        let want: Vec<u32> = b.iter().chain(&a).chain(&b).copied().collect();
        assert_eq!(seen, want);
        assert_eq!(longest, BLOCK);
    }

    #[test]
    fn every_index_once_in_order_in_bounded_ranges() {
        for n in [0, 1, BLOCK, BLOCK + 1, 3 * BLOCK - 2] {
            let (mut seen, mut longest) = (Vec::new(), 0);
            each_range(n, |range| {
                longest = longest.max(range.len());
                seen.extend(range);
            });
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
            assert!(longest <= BLOCK);
        }
    }
}
