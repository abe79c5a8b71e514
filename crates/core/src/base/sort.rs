//! Sorting the per-request columns of large runs without comparisons: a least-significant-digit
//! radix sort over 11-bit digits, skipping the digits every value shares (microseconds below
//! 2^33 take three passes). The result is the one a comparison sort gives, value for value; it
//! matters where comparisons are costly — the page's reader is built for size, which leaves the
//! comparison of `sort_unstable` a function call (a third of a 1,000,000-request analysis).

/// Below this many values the standard sort is as fast.
const RADIX_MIN: usize = 1024;
const DIGIT_BITS: u32 = 11;
const BUCKETS: usize = 1 << DIGIT_BITS;

/// Sorts ascending.
pub fn sort_u64(v: &mut [u64]) {
    if v.len() < RADIX_MIN {
        v.sort_unstable();
    } else {
        radix(v);
    }
}

/// Sorts in [`f64::total_cmp`] order (−NaN, −∞ … −0, +0 … +∞, +NaN): the values' keys in that
/// order ([`total_order_key`]) are sorted as integers and turned back into the same bits.
pub fn sort_f64(v: &mut [f64]) {
    if v.len() < RADIX_MIN {
        v.sort_unstable_by(f64::total_cmp);
        return;
    }
    let mut keys: Vec<u64> = v.iter().map(|&x| total_order_key(x)).collect();
    radix(&mut keys);
    for (x, &k) in v.iter_mut().zip(&keys) {
        *x = from_total_order_key(k);
    }
}

/// An unsigned key in [`f64::total_cmp`] order: negative values' bits inverted, the sign bit
/// of the others set.
fn total_order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// The value whose [`total_order_key`] is `k`.
fn from_total_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ 1 << 63 } else { !k })
}

// Plain integers, no key function: the page's size-optimized build would call a generic key
// as a function per value and digit.
fn radix(v: &mut [u64]) {
    let (mut any, mut all) = (0u64, u64::MAX);
    for &k in v.iter() {
        any |= k;
        all &= k;
    }
    let varying = any ^ all;
    let mut buf = vec![0u64; v.len()];
    let mut in_buf = false;
    for shift in (0..64).step_by(DIGIT_BITS as usize) {
        if (varying >> shift) & (BUCKETS as u64 - 1) == 0 {
            continue;
        }
        if in_buf {
            pass(&buf, v, shift);
        } else {
            pass(v, &mut buf, shift);
        }
        in_buf = !in_buf;
    }
    if in_buf {
        v.copy_from_slice(&buf);
    }
}

/// One stable counting pass on the digit at `shift`.
fn pass(src: &[u64], dst: &mut [u64], shift: u32) {
    let mut at = [0usize; BUCKETS];
    for &x in src {
        at[(x >> shift) as usize & (BUCKETS - 1)] += 1;
    }
    let mut sum = 0;
    for slot in at.iter_mut() {
        (*slot, sum) = (sum, sum + *slot);
    }
    for &x in src {
        let d = (x >> shift) as usize & (BUCKETS - 1);
        dst[at[d]] = x;
        at[d] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn u64_as_the_standard_sort(
            any in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3000),
            small in proptest::collection::vec(0u64..5_000_000, 0..3000),
        ) {
            // Both sides of RADIX_MIN; every digit varying, or the high ones shared.
            for mut v in [any, small] {
                let mut want = v.clone();
                want.sort_unstable();
                sort_u64(&mut v);
                proptest::prop_assert_eq!(v, want);
            }
        }

        #[test]
        fn f64_as_total_cmp_bit_for_bit(
            bits in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3000),
            ms in proptest::collection::vec(0.0f64..500.0, 0..3000),
        ) {
            let specials = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::MIN_POSITIVE];
            let odd: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).chain(specials).collect();
            for mut v in [odd, ms] {
                let mut want = v.clone();
                want.sort_unstable_by(f64::total_cmp);
                sort_f64(&mut v);
                let (a, b): (Vec<u64>, Vec<u64>) = (v.iter().map(|x| x.to_bits()).collect(), want.iter().map(|x| x.to_bits()).collect());
                proptest::prop_assert_eq!(a, b);
            }
        }
    }
}
