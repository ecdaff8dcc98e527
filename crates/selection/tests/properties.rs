//! Invariants of the optimizers on random small instances (proptest).

use envdist_core::{EnvId, Rng};
use envdist_selection::{
    Aggregation, Baseline, Optimizer, Problem, Relaxation, SelectConfig, SelectError, Selection,
    SparseCounts, TieBreak, baseline, evaluate_ranking, select,
};
use proptest::prelude::*;

/// A random instance: `n` envs over `a` abilities (some envs may cover nothing), gradients of
/// dimension `d` with a few planted opposite pairs so clamped conflicts are not all zero.
fn instance(n: usize, a: usize, d: usize, seed: u64) -> Problem {
    let (counts, grads) = raw_instance(n, a, d, seed);
    Problem::from_counts(counts, None, None)
        .unwrap()
        .with_gradient_rows(d, grads)
        .unwrap()
}

/// [`instance`]'s counts and its gradients as drawn (the problem keeps unit rows).
fn raw_instance(n: usize, a: usize, d: usize, seed: u64) -> (SparseCounts, Vec<f32>) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let (mut abilities, mut counts) = (Vec::new(), Vec::new());
        for c in 0..a {
            if rng.chance(0.3) {
                abilities.push(c as u32);
                counts.push(rng.range_inclusive(1, 3) as f32);
            }
        }
        rows.push((abilities, counts));
    }
    let counts = counts_of_rows(a, rows);
    let mut grads: Vec<f32> = (0..n * d).map(|_| rng.normal()).collect();
    for e in (1..n).step_by(3) {
        for j in 0..d {
            grads[e * d + j] = -grads[(e - 1) * d + j] + 0.1 * rng.normal();
        }
    }
    (counts, grads)
}

/// Counts over `cols` abilities with one row per env: the abilities it covers and their counts.
fn counts_of_rows(cols: usize, rows: Vec<(Vec<u32>, Vec<f32>)>) -> SparseCounts {
    let mut counts = SparseCounts {
        rows: rows.len(),
        cols,
        indptr: vec![0],
        indices: Vec::new(),
        values: Vec::new(),
    };
    for (abilities, values) in rows {
        counts.indices.extend(abilities);
        counts.values.extend(values);
        counts.indptr.push(counts.indices.len());
    }
    counts
}

/// `n` envs, env `i` covering ability `i` alone.
fn one_ability_each(n: usize) -> SparseCounts {
    SparseCounts {
        rows: n,
        cols: n,
        indptr: (0..=n).collect(),
        indices: (0..n as u32).collect(),
        values: vec![1.0; n],
    }
}

/// Two envs and one ability, which only the first covers; no gradients.
fn only_the_first_of_two() -> Problem {
    let counts = SparseCounts {
        rows: 2,
        cols: 1,
        indptr: vec![0, 1, 1],
        indices: vec![0],
        values: vec![1.0],
    };
    Problem::from_counts(counts, None, None).unwrap()
}

fn arb() -> impl Strategy<Value = (Problem, usize)> {
    (2usize..30, 1usize..10, 1usize..6, any::<u64>(), 0.0f64..1.0).prop_map(|(n, a, d, seed, f)| {
        let k = 1 + ((n - 1) as f64 * f) as usize;
        (instance(n, a, d, seed), k)
    })
}

fn with(k: usize, optimizer: Optimizer) -> SelectConfig {
    SelectConfig {
        optimizer,
        ..SelectConfig::aes(k)
    }
}

const STOCHASTIC: Optimizer = Optimizer::Stochastic {
    epsilon: 0.2,
    seed: 11,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_duplicates_and_exactly_k((p, k) in arb()) {
        for opt in [Optimizer::Naive, Optimizer::Lazy, STOCHASTIC] {
            let s = select(&p, &with(k, opt)).unwrap();
            let mut r = s.ranking.clone();
            r.sort_unstable();
            r.dedup();
            prop_assert_eq!(r.len(), k);
            prop_assert!(r.iter().all(|e| *e < p.n_envs()));
            prop_assert_eq!(s.env_ids.len(), k);
        }
    }

    #[test]
    fn lazy_equals_naive((p, k) in arb(), agg in 0usize..2, weighting in 0usize..3, cov_only in any::<bool>(), include in any::<bool>()) {
        let mut cfg = SelectConfig::aes(k);
        if cov_only {
            cfg = cfg.coverage_only();
        }
        if include {
            cfg.must_include = vec![EnvId::new(format!("env/{}", p.n_envs() / 2))];
        }
        cfg.aggregation = [Aggregation::Max, Aggregation::Sum][agg];
        cfg.ability_weighting = [
            envdist_selection::AbilityWeighting::Uniform,
            envdist_selection::AbilityWeighting::Frequency,
            envdist_selection::AbilityWeighting::Rarity,
        ][weighting];
        let lazy = select(&p, &SelectConfig { optimizer: Optimizer::Lazy, ..cfg.clone() }).unwrap();
        let naive = select(&p, &SelectConfig { optimizer: Optimizer::Naive, ..cfg }).unwrap();
        prop_assert!(!lazy.lazy_fell_back);
        prop_assert_eq!(&lazy.ranking, &naive.ranking);
        prop_assert_eq!(lazy.gains(), naive.gains());
        // Lazy coverage greedy tracks its certificate while it runs; naive replays the
        // ranking afterwards: the same bounds.
        let bounds = |s: &envdist_selection::Selection| {
            s.certificate.as_ref().map(|c| (c.upper_bound, c.coverage_upper_bound))
        };
        prop_assert_eq!(bounds(&lazy), bounds(&naive));
    }

    #[test]
    fn gains_never_increase_when_submodular((p, k) in arb(), cov_only in any::<bool>()) {
        let mut cfg = SelectConfig::aes(k);
        if cov_only {
            cfg = cfg.coverage_only();
        }
        prop_assert!(cfg.gains_non_increasing());
        let s = select(&p, &cfg).unwrap();
        for w in s.gains().windows(2) {
            prop_assert!(w[1] <= w[0], "{:?}", s.gains());
        }
    }

    #[test]
    fn trace_adds_up_to_the_objective_of_the_selection((p, k) in arb(), agg in 0usize..3, clamp in any::<bool>()) {
        let mut cfg = SelectConfig::aes(k);
        cfg.aggregation = [Aggregation::Max, Aggregation::Sum, Aggregation::Mean][agg];
        cfg.clamp_conflict = clamp;
        let s = select(&p, &cfg).unwrap();
        let checked = cfg.validate(&p).unwrap();
        let reference = evaluate_ranking(&p, &checked, &s.ranking).unwrap();
        let total: f32 = reference.iter().map(|t| t.gain).sum();
        prop_assert!((s.objective - total).abs() <= 1e-3 * (1.0 + total.abs()), "{} vs {}", s.objective, total);
        for (a, b) in s.steps.iter().zip(&reference) {
            prop_assert!((a.gain - b.gain).abs() < 1e-4);
            prop_assert!((a.coverage - b.coverage).abs() < 1e-4);
            prop_assert!((a.redundancy - b.redundancy).abs() < 1e-4);
            prop_assert!((a.conflict - b.conflict).abs() < 1e-4);
            prop_assert!((a.gain - (a.coverage + a.redundancy + a.conflict)).abs() < 1e-4);
        }
        // With sum aggregation the objective is a set function: any order scores the same.
        if cfg.aggregation == Aggregation::Sum {
            let mut rev = s.ranking.clone();
            rev.reverse();
            let back: f32 = evaluate_ranking(&p, &checked, &rev).unwrap().iter().map(|t| t.gain).sum();
            prop_assert!((back - total).abs() <= 1e-3 * (1.0 + total.abs()));
        }
    }

    #[test]
    fn deterministic_for_a_seed((p, k) in arb(), seed in any::<u64>()) {
        let opt = Optimizer::Stochastic { epsilon: 0.3, seed };
        prop_assert_eq!(select(&p, &with(k, opt)).unwrap(), select(&p, &with(k, opt)).unwrap());
        let r = |s| baseline(&p, &SelectConfig::aes(k), Baseline::Random { seed: s }).unwrap().ranking;
        prop_assert_eq!(r(seed), r(seed));
    }

    #[test]
    fn ablation_switches_change_only_their_term((p, k) in arb(), seed in any::<u64>()) {
        let full = SelectConfig::aes(k);
        let run = |cfg: &SelectConfig| baseline(&p, cfg, Baseline::Random { seed }).unwrap();
        let base = run(&full);
        for (cfg, which) in [
            (full.clone().without_conflict(), 2),
            (full.clone().without_redundancy(), 1),
            (full.clone().coverage_only(), 3),
        ] {
            let abl = run(&cfg);
            prop_assert_eq!(&abl.ranking, &base.ranking);
            for (a, b) in abl.steps.iter().zip(&base.steps) {
                prop_assert_eq!(a.coverage, b.coverage);
                if which & 1 == 0 { prop_assert_eq!(a.redundancy, b.redundancy) } else { prop_assert_eq!(a.redundancy, 0.0) }
                if which & 2 == 0 { prop_assert_eq!(a.conflict, b.conflict) } else { prop_assert_eq!(a.conflict, 0.0) }
            }
        }
    }

    #[test]
    fn full_coverage_is_met_or_refused((p, k) in arb(), opt in 0usize..3) {
        let cfg = SelectConfig {
            require_full_coverage: true,
            ..with(k, [Optimizer::Naive, Optimizer::Lazy, STOCHASTIC][opt])
        };
        match select(&p, &cfg) {
            Ok(s) => prop_assert_eq!(s.covered, s.coverable),
            Err(SelectError::CoverageInfeasible { needed, budget, .. }) => prop_assert!(needed > budget),
            Err(e) => prop_assert!(false, "{e}"),
        }
    }

    #[test]
    fn lazy_falls_back_and_says_so_when_gains_can_rise((p, k) in arb()) {
        let cfg = SelectConfig { aggregation: Aggregation::Mean, ..SelectConfig::aes(k) };
        let lazy = select(&p, &cfg).unwrap();
        let naive = select(&p, &SelectConfig { optimizer: Optimizer::Naive, ..cfg }).unwrap();
        prop_assert!(lazy.lazy_fell_back && !lazy.gains_non_increasing);
        prop_assert!(lazy.notes.iter().any(|n| n.contains("mean")));
        prop_assert_eq!(lazy.ranking, naive.ranking);
    }
}

#[test]
fn must_include_and_exclude_are_honoured_and_checked() {
    let p = instance(20, 6, 3, 5);
    let id = |i: usize| EnvId::new(format!("env/{i}"));
    let cfg = SelectConfig {
        must_include: vec![id(7), id(3)],
        must_exclude: vec![id(0), id(1), id(2)],
        ..SelectConfig::aes(6)
    };
    let s = select(&p, &cfg).unwrap();
    assert_eq!(&s.ranking[..2], &[3, 7]);
    assert!(s.ranking.iter().all(|e| *e > 2));
    let bad = SelectConfig {
        must_include: vec![id(99)],
        ..SelectConfig::aes(6)
    };
    let e = select(&p, &bad).unwrap_err().to_string();
    assert!(e.contains("must_include") && e.contains("env/99"), "{e}");
    let e = select(&p, &SelectConfig::aes(21)).unwrap_err().to_string();
    assert!(e.contains("`k`") && e.contains("from 1 to 20"), "{e}");
}

#[test]
fn infeasible_full_coverage_is_reported_clearly() {
    // Ten envs, each covering one distinct ability: full coverage needs all ten.
    let counts = one_ability_each(10);
    let p = Problem::from_counts(counts, None, None).unwrap();
    let cfg = SelectConfig {
        require_full_coverage: true,
        ..SelectConfig::aes(4).coverage_only()
    };
    let e = select(&p, &cfg).unwrap_err();
    assert!(
        matches!(
            e,
            SelectError::CoverageInfeasible {
                needed: 10,
                suggested_k: 10,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("raise k to 10"), "{e}");
}

#[test]
fn conflict_without_gradients_is_refused() {
    let p = only_the_first_of_two();
    let e = select(&p, &SelectConfig::aes(1)).unwrap_err().to_string();
    assert!(
        e.contains("terms.conflict") && e.contains("gradients"),
        "{e}"
    );
    assert!(select(&p, &SelectConfig::aes(1).without_conflict()).is_ok());
}

#[test]
fn the_conflict_term_avoids_planted_opposed_pairs() {
    use envdist_selection::synthetic::{SyntheticConfig, generate};
    let pool = generate(&SyntheticConfig {
        n: 200,
        conflict_clusters: 8,
        cluster_size: 16,
        seed: 3,
        ..Default::default()
    })
    .unwrap();
    let g = pool.problem.gradients().unwrap();
    let opposed = |r: &[usize]| {
        let mut c = 0;
        for (i, &a) in r.iter().enumerate() {
            for &b in &r[..i] {
                c += usize::from(g.cosine(a, b) < -0.5);
            }
        }
        c
    };
    let aes = select(&pool.problem, &SelectConfig::aes(30)).unwrap();
    let blind = baseline(&pool.problem, &SelectConfig::aes(30), Baseline::NoConflict).unwrap();
    let (with, without) = (opposed(&aes.ranking), opposed(&blind.ranking));
    eprintln!("opposed pairs: aes {with}, no-conflict {without}");
    assert!(with < without, "aes {with} vs no-conflict {without}");
}

/// `instance`'s rows and gradients with the environments in `order` (`order[i]` is the
/// original index of environment `i`), named by their original index.
fn reordered(n: usize, a: usize, d: usize, seed: u64, order: &[usize]) -> Problem {
    let original = instance(n, a, d, seed);
    let (_, grads) = raw_instance(n, a, d, seed);
    let mut raw_rows = Vec::new();
    let mut rows = Vec::with_capacity(n);
    for &old in order {
        rows.push((
            original.env_abilities(old).to_vec(),
            original.env_weights(old).to_vec(),
        ));
        raw_rows.extend_from_slice(&grads[old * d..(old + 1) * d]);
    }
    let counts = counts_of_rows(a, rows);
    let ids = order
        .iter()
        .map(|&old| original.env_ids()[old].clone())
        .collect();
    Problem::from_counts(counts, Some(ids), None)
        .unwrap()
        .with_gradient_rows(d, raw_rows)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A seeded tie-break is the selection of the environments in the seeded order (what the
    /// study did by shuffling its profiles before building the problem), mapped back.
    #[test]
    fn a_seeded_tie_break_selects_as_on_the_shuffled_pool(
        n in 2usize..24, a in 1usize..8, d in 1usize..5, seed in any::<u64>(),
        tie in any::<u64>(), f in 0.0f64..1.0,
    ) {
        let k = 1 + ((n - 1) as f64 * f) as usize;
        let p = instance(n, a, d, seed);
        let mut order: Vec<usize> = (0..n).collect();
        Rng::derive(tie, 0x5449_4542).shuffle(&mut order);
        let shuffled = reordered(n, a, d, seed, &order);
        let seeded = SelectConfig { tie_break: TieBreak::Seeded(tie), ..SelectConfig::aes(k) };
        let runs: Vec<(Selection, Selection)> = vec![
            (select(&p, &seeded).unwrap(), select(&shuffled, &SelectConfig::aes(k)).unwrap()),
            (
                baseline(&p, &seeded, Baseline::NoConflict).unwrap(),
                baseline(&shuffled, &SelectConfig::aes(k), Baseline::NoConflict).unwrap(),
            ),
            (
                baseline(&p, &seeded, Baseline::Random { seed: 9 }).unwrap(),
                baseline(&shuffled, &SelectConfig::aes(k), Baseline::Random { seed: 9 }).unwrap(),
            ),
        ];
        for (mine, theirs) in runs {
            prop_assert_eq!(&mine.env_ids, &theirs.env_ids);
            prop_assert_eq!(mine.gains(), theirs.gains());
            let mapped: Vec<usize> = theirs.ranking.iter().map(|&r| order[r]).collect();
            prop_assert_eq!(&mine.ranking, &mapped);
            prop_assert!(mine.steps.iter().zip(&mine.ranking).all(|(s, r)| s.env == *r));
        }
    }
}

#[test]
fn relax_gives_up_the_zero_gradient_exclusion_then_full_coverage_and_says_so() {
    // Four envs, one ability each; env 3's gradient is zero.
    let counts = one_ability_each(4);
    let grads = vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0];
    let p = Problem::from_counts(counts, None, None)
        .unwrap()
        .with_gradient_rows(2, grads)
        .unwrap();
    let strict = SelectConfig {
        require_full_coverage: true,
        exclude_zero_gradient: true,
        ..SelectConfig::aes(4)
    };
    // Excluding env 3 leaves three envs for k = 4: infeasible, and said so without `relax`.
    let e = select(&p, &strict).unwrap_err().to_string();
    assert!(e.contains("`k`"), "{e}");
    let s = select(
        &p,
        &SelectConfig {
            relax: true,
            ..strict.clone()
        },
    )
    .unwrap();
    assert_eq!(s.ranking.len(), 4);
    match &s.relaxation {
        Some(Relaxation::ZeroGradientKept {
            excluded: 1,
            reason,
        }) => {
            assert!(reason.contains("`k`"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        s.relaxation
            .as_ref()
            .unwrap()
            .to_string()
            .contains("zero-gradient")
    );
    // With k = 2, full coverage of four abilities is out of reach: coverage is given up and
    // the exclusion kept.
    let s = select(
        &p,
        &SelectConfig {
            relax: true,
            k: 2,
            ..strict.clone()
        },
    )
    .unwrap();
    assert!(
        matches!(s.relaxation, Some(Relaxation::FullCoverage { .. })),
        "{:?}",
        s.relaxation
    );
    assert!(!s.ranking.contains(&3), "the exclusion held");
    // A feasible selection relaxes nothing.
    let s = select(
        &p,
        &SelectConfig {
            relax: true,
            exclude_zero_gradient: false,
            ..strict
        },
    )
    .unwrap();
    assert_eq!(s.relaxation, None);
    // Without gradients there are no zero rows to find: refused by name.
    let plain = only_the_first_of_two();
    let e = select(
        &plain,
        &SelectConfig {
            exclude_zero_gradient: true,
            ..SelectConfig::aes(1).without_conflict()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("exclude_zero_gradient"), "{e}");
}
