//! Coverage-only greedy reproduces the reference greedy ranking of the `small` anchor pool
//! (200 x 72, k = 30, lowest index wins ties), copied into tests/data.

use std::path::PathBuf;

use envdist_selection::{
    Optimizer, Problem, SelectConfig, read_counts_npy, read_index_npy, select,
};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn coverage_only_matches_the_small_reference_ranking() {
    let counts = read_counts_npy(data("small_counts.npy")).unwrap();
    assert_eq!((counts.rows, counts.cols), (200, 72));
    assert_eq!(counts.indices.len(), 2017);
    let reference: Vec<usize> = read_index_npy(data("small_ref_greedy_ranking.npy"))
        .unwrap()
        .into_iter()
        .map(|i| i as usize)
        .collect();
    assert_eq!(reference.len(), 30);
    let problem = Problem::from_counts(counts, None, None).unwrap();
    for optimizer in [Optimizer::Lazy, Optimizer::Naive] {
        let config = SelectConfig {
            optimizer,
            ..SelectConfig::aes(30).coverage_only()
        };
        let s = select(&problem, &config).unwrap();
        assert_eq!(s.ranking, reference, "{optimizer:?}");
        assert_eq!(s.covered, 72);
        assert!(!s.lazy_fell_back);
        // The first 14 picks reach full coverage; the rest gain nothing.
        let gains = s.gains();
        assert!(gains[..14].iter().all(|g| *g > 0.0) && gains[14..].iter().all(|g| *g == 0.0));
        assert_eq!(s.objective, 72.0);
    }
}

/// Rows `lo..hi` of a count matrix as a pool of their own.
fn rows(counts: &envdist_selection::SparseCounts, lo: usize, hi: usize) -> Problem {
    let (a, b) = (counts.indptr[lo], counts.indptr[hi]);
    let sub = envdist_selection::SparseCounts {
        rows: hi - lo,
        cols: counts.cols,
        indptr: counts.indptr[lo..=hi].iter().map(|p| p - a).collect(),
        indices: counts.indices[a..b].to_vec(),
        values: counts.values[a..b].to_vec(),
    };
    Problem::from_counts(sub, None, None).unwrap()
}

#[test]
fn small_pool_certificate_and_exact_optimum_on_sub_pools() {
    use envdist_selection::{BoundKind, ExactLimits, solve_exact};
    let counts = read_counts_npy(data("small_counts.npy")).unwrap();
    // The whole pool: greedy reaches full coverage at pick 14, so the bound is the number of
    // abilities and the gap is 0.
    let problem = Problem::from_counts(counts.clone(), None, None).unwrap();
    let s = select(&problem, &SelectConfig::aes(30).coverage_only()).unwrap();
    let cert = s.certificate.unwrap();
    assert_eq!(cert.kind, BoundKind::Submodular);
    assert_eq!((cert.value, cert.upper_bound), (72.0, Some(72.0)));
    assert_eq!(cert.gap_fraction, Some(0.0));
    // At k = 5 greedy covers 46 of 72 (the optimum 49) and the bound says so: a real gap.
    let s5 = select(&problem, &SelectConfig::aes(5).coverage_only()).unwrap();
    let c5 = s5.certificate.unwrap();
    assert!(
        c5.upper_bound.unwrap() < 72.0 && c5.gap_fraction.unwrap() > 0.0,
        "{c5}"
    );

    // The whole pool for small k (and k = 30 for coverage), and 40-environment sub-pools up to
    // k = 16, where the exact solver finishes: bound >= optimum >= greedy for coverage and for
    // coverage minus redundancy.
    let limits = ExactLimits {
        max_nodes: 5_000_000,
        ..ExactLimits::default()
    };
    for (lo, hi) in [
        (0, 200),
        (0, 40),
        (40, 80),
        (80, 120),
        (120, 160),
        (160, 200),
    ] {
        let sub = rows(&counts, lo, hi);
        let ks: &[usize] = if hi - lo > 40 {
            &[3, 5, 8, 30]
        } else {
            &[3, 5, 8, 12, 16]
        };
        for &k in ks {
            for cfg in [
                SelectConfig::aes(k).coverage_only(),
                SelectConfig::aes(k).without_conflict(),
            ] {
                if k == 30 && cfg.terms.redundancy {
                    // 200 environments at k = 30 with redundancy: the search does not finish
                    // within the limits (coverage alone it proves at once: 72 of 72).
                    continue;
                }
                let s = select(&sub, &cfg).unwrap();
                let cert = s.certificate.unwrap();
                let exact = solve_exact(&sub, &cfg, &limits).unwrap();
                let opt = exact
                    .optimum()
                    .unwrap_or_else(|| panic!("rows {lo}.., k {k}: {:?}", exact.status));
                let ub = cert.upper_bound.unwrap();
                assert!(opt >= s.objective - 1e-4, "rows {lo}.., k {k}");
                assert!(ub >= opt - 1e-4, "rows {lo}.., k {k}: {ub} < {opt}");
                eprintln!(
                    "rows {lo}..{hi}, k {k}, {:?}: greedy {} <= opt {opt} <= bound {ub} ({} nodes, {:.3} s)",
                    cert.kind, s.objective, exact.nodes, exact.seconds
                );
            }
        }
    }
}
