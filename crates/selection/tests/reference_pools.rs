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
