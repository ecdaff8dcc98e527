//! Rank statistics for comparing two lists of scores over the same items (e.g. the pairwise
//! gradient cosines of a cheap estimate against the full one): Spearman's rho, Kendall's
//! tau-b and the recall of the lowest-scoring items. Ties are handled (average ranks;
//! tau-b's tie correction); comparisons use `f32::total_cmp`, so no input makes them panic.

use std::cmp::Ordering;

/// Ranks `1..=n` of `v` in ascending order, ties given their average rank.
pub fn average_ranks(v: &[f32]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut ranks = vec![0.0; v.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && v[order[end]].total_cmp(&v[order[start]]) == Ordering::Equal {
            end += 1;
        }
        // Positions start..end (0-based) hold ranks start+1..=end; their mean:
        let r = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = r;
        }
        start = end;
    }
    ranks
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma).powi(2);
        bb += (y - mb).powi(2);
    }
    (aa > 0.0 && bb > 0.0).then(|| ab / (aa.sqrt() * bb.sqrt()))
}

/// Spearman's rank correlation of `a` and `b` (the Pearson correlation of their average
/// ranks). `None` when the lengths differ, there are fewer than two items, or either list is
/// constant (no ranking to agree with).
pub fn spearman(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    pearson(&average_ranks(a), &average_ranks(b))
}

/// Pairs among `n` items: `n (n - 1) / 2`.
fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// Sum of `pairs(size)` over the runs of equal adjacent values in `sorted` (by `eq`).
fn tied_pairs<T>(sorted: &[T], eq: impl Fn(&T, &T) -> bool) -> u64 {
    let mut total = 0;
    let mut run = 1u64;
    for w in sorted.windows(2) {
        if eq(&w[0], &w[1]) {
            run += 1;
        } else {
            total += pairs(run);
            run = 1;
        }
    }
    if !sorted.is_empty() {
        total += pairs(run);
    }
    total
}

/// Sort `v` (merge sort) and return the number of inversions: pairs `i < j` with
/// `v[i] > v[j]` strictly.
fn sort_counting_inversions(v: &mut [f32], buf: &mut [f32]) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut swaps = sort_counting_inversions(&mut v[..mid], &mut buf[..mid])
        + sort_counting_inversions(&mut v[mid..], &mut buf[mid..]);
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < mid && j < n {
        if v[j].total_cmp(&v[i]) == Ordering::Less {
            // v[j] is smaller than every remaining left element.
            swaps += (mid - i) as u64;
            buf[k] = v[j];
            j += 1;
        } else {
            buf[k] = v[i];
            i += 1;
        }
        k += 1;
    }
    buf[k..k + mid - i].copy_from_slice(&v[i..mid]);
    k += mid - i;
    buf[k..k + n - j].copy_from_slice(&v[j..n]);
    v.copy_from_slice(&buf[..n]);
    swaps
}

/// Kendall's tau-b of `a` and `b` (Knight's `O(n log n)` algorithm): concordant minus
/// discordant pairs over the geometric mean of the pairs untied in each list. `None` when the
/// lengths differ, there are fewer than two items, or either list is constant.
pub fn kendall_tau_b(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let mut both: Vec<(f32, f32)> = a.iter().copied().zip(b.iter().copied()).collect();
    both.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let eq = |x: f32, y: f32| x.total_cmp(&y) == Ordering::Equal;
    let n0 = pairs(both.len() as u64);
    let n1 = tied_pairs(&both, |x, y| eq(x.0, y.0));
    let n3 = tied_pairs(&both, |x, y| eq(x.0, y.0) && eq(x.1, y.1));
    let mut bs: Vec<f32> = both.iter().map(|p| p.1).collect();
    let mut buf = vec![0.0f32; bs.len()];
    let swaps = sort_counting_inversions(&mut bs, &mut buf);
    let n2 = tied_pairs(&bs, |x, y| eq(*x, *y));
    let denom = ((n0 - n1) as f64 * (n0 - n2) as f64).sqrt();
    let num = n0 as f64 - n1 as f64 - n2 as f64 + n3 as f64 - 2.0 * swaps as f64;
    (denom > 0.0).then(|| num / denom)
}

/// Indices of the `count` smallest values of `v` (ties to the lower index), ascending by
/// value.
pub fn lowest(v: &[f32], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]).then(i.cmp(&j)));
    order.truncate(count);
    order
}

/// Of the `count` smallest values of `reference`, the fraction that are also among the
/// `count` smallest of `estimate` (the same items in the same order). `None` when the lengths
/// differ or `count` is 0 or more than the items.
pub fn lowest_recall(estimate: &[f32], reference: &[f32], count: usize) -> Option<f64> {
    if estimate.len() != reference.len() || count == 0 || count > reference.len() {
        return None;
    }
    let mut mine = vec![false; estimate.len()];
    for i in lowest(estimate, count) {
        mine[i] = true;
    }
    let hits = lowest(reference, count)
        .into_iter()
        .filter(|&i| mine[i])
        .count();
    Some(hits as f64 / count as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook `O(n^2)` tau-b.
    fn kendall_naive(a: &[f32], b: &[f32]) -> Option<f64> {
        let (mut c, mut d, mut ta, mut tb) = (0i64, 0i64, 0i64, 0i64);
        for i in 0..a.len() {
            for j in i + 1..a.len() {
                let sa = (a[i] - a[j]).signum() as i64 * i64::from(a[i] != a[j]);
                let sb = (b[i] - b[j]).signum() as i64 * i64::from(b[i] != b[j]);
                match (sa, sb) {
                    (0, 0) => {}
                    (0, _) => ta += 1,
                    (_, 0) => tb += 1,
                    _ if sa == sb => c += 1,
                    _ => d += 1,
                }
            }
        }
        let denom = (((c + d + ta) * (c + d + tb)) as f64).sqrt();
        (denom > 0.0).then(|| (c - d) as f64 / denom)
    }

    #[test]
    fn known_values() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!((spearman(&a, &a).unwrap() - 1.0).abs() < 1e-12);
        assert!((kendall_tau_b(&a, &a).unwrap() - 1.0).abs() < 1e-12);
        let rev = [5.0, 4.0, 3.0, 2.0, 1.0];
        assert!((spearman(&a, &rev).unwrap() + 1.0).abs() < 1e-12);
        assert!((kendall_tau_b(&a, &rev).unwrap() + 1.0).abs() < 1e-12);
        // Monotone but non-linear: rank statistics are 1.
        let sq: Vec<f32> = a.iter().map(|x| x * x * x).collect();
        assert!((spearman(&a, &sq).unwrap() - 1.0).abs() < 1e-12);
        assert!((kendall_tau_b(&a, &sq).unwrap() - 1.0).abs() < 1e-12);
        // One swap of neighbours among 5: tau = (9 - 1) / 10.
        let one = [1.0, 2.0, 4.0, 3.0, 5.0];
        assert!((kendall_tau_b(&a, &one).unwrap() - 0.8).abs() < 1e-12);
        // Spearman: 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 12 / 120.
        assert!((spearman(&a, &one).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(
            average_ranks(&[3.0, 1.0, 3.0, 2.0]),
            vec![3.5, 1.0, 3.5, 2.0]
        );
    }

    #[test]
    fn undefined_cases_are_none_not_panics() {
        assert_eq!(spearman(&[1.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(spearman(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(kendall_tau_b(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(kendall_tau_b(&[], &[]), None);
        let nan = [f32::NAN, 1.0, 2.0];
        assert!(spearman(&nan, &[1.0, 2.0, 3.0]).is_some());
        assert!(kendall_tau_b(&nan, &[1.0, 2.0, 3.0]).is_some());
        assert_eq!(lowest_recall(&[1.0, 2.0], &[1.0, 2.0], 0), None);
        assert_eq!(lowest_recall(&[1.0, 2.0], &[1.0, 2.0], 3), None);
        assert_eq!(lowest_recall(&[1.0], &[1.0, 2.0], 1), None);
    }

    #[test]
    fn recall_of_the_lowest() {
        let reference = [-0.9, -0.5, 0.1, 0.3, -0.7, 0.8];
        assert_eq!(lowest(&reference, 2), vec![0, 4]);
        assert_eq!(lowest_recall(&reference, &reference, 2), Some(1.0));
        // The estimate finds item 0 but ranks item 1 above item 4.
        let estimate = [-0.8, -0.6, 0.1, 0.3, 0.2, 0.8];
        assert_eq!(lowest_recall(&estimate, &reference, 2), Some(0.5));
        assert_eq!(lowest_recall(&estimate, &reference, 6), Some(1.0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn kendall_matches_the_quadratic_definition(
            v in proptest::collection::vec((0i8..6, 0i8..6), 0..40)
        ) {
            // Small integer values: many ties in either list and in both.
            let a: Vec<f32> = v.iter().map(|p| p.0 as f32).collect();
            let b: Vec<f32> = v.iter().map(|p| p.1 as f32).collect();
            let fast = kendall_tau_b(&a, &b);
            let slow = kendall_naive(&a, &b);
            match (fast, slow) {
                (Some(f), Some(s)) => prop_assert!((f - s).abs() < 1e-9, "{f} vs {s}"),
                (f, s) => prop_assert_eq!(f.is_some(), s.is_some()),
            }
            if let Some(r) = spearman(&a, &b) {
                prop_assert!((-1.0 - 1e-9..=1.0 + 1e-9).contains(&r));
            }
        }
    }
}
