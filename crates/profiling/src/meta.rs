//! Meta-abilities: a deterministic clustering of atomic abilities.
//!
//! # Method
//! For two atomic abilities `a`, `b`:
//! - co-occurrence `C(a,b)`: cosine similarity of their per-environment frequency vectors
//!   (`x_a[e]` = share of env `e`'s segments that are `a`), i.e. how much they are exercised
//!   by the same environments in the same proportions;
//! - transition affinity `T(a,b) = max(P(b|a), P(a|b))` from the pool-wide transition graph,
//!   i.e. how strongly one leads to the other;
//! - similarity `S = w·C + (1−w)·T` with `w = cooccurrence_weight` (default 0.5).
//!
//! Average-linkage agglomerative clustering then merges, one pair at a time, the two clusters
//! with the highest mean pairwise `S`, while that mean is at least `threshold` (default 0.75).
//! Ties go to the pair whose clusters' alphabetically first members come first. Environments
//! are sorted by id before any sum and abilities by name, so the result depends only on the
//! statistics, never on their order or on thread count. Every atomic ability ends in exactly
//! one meta-ability (a singleton when nothing is similar enough).
//!
//! A meta-ability is named after its most frequent member (ties by name), with `+k` appended
//! when it has `k` further members, e.g. `navigate+2`.

use envdist_core::InvalidValue;
use std::collections::BTreeMap;

use envdist_core::MetaAbility;
use serde::{Deserialize, Serialize};

use crate::ProfilingError;
use crate::graph::AbilityGraph;
use crate::stats::EnvAbilityStats;

/// Settings of the meta-ability clustering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaConfig {
    /// Weight `w` of co-occurrence in the similarity; `1 − w` goes to transition affinity.
    pub cooccurrence_weight: f32,
    /// Merge while the best average-linkage similarity is at least this.
    pub threshold: f32,
}

impl Default for MetaConfig {
    fn default() -> Self {
        Self {
            cooccurrence_weight: 0.5,
            threshold: 0.75,
        }
    }
}

impl MetaConfig {
    /// Check both values lie in `[0, 1]`.
    pub fn validate(&self) -> Result<(), ProfilingError> {
        for (field, v) in [
            ("cooccurrence_weight", self.cooccurrence_weight),
            ("threshold", self.threshold),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(ProfilingError::Config(InvalidValue::new(
                    field,
                    "a number in [0, 1]",
                    v.to_string(),
                )));
            }
        }
        Ok(())
    }
}

/// The pairwise similarity matrix `S` over `abilities` (name order), as defined above.
pub fn similarity_matrix(
    abilities: &[String],
    stats: &[EnvAbilityStats],
    graph: &AbilityGraph,
    config: &MetaConfig,
) -> Vec<Vec<f32>> {
    let mut sorted: Vec<&EnvAbilityStats> = stats.iter().collect();
    sorted.sort_by(|a, b| a.env.cmp(&b.env));
    let vectors: Vec<Vec<f32>> = abilities
        .iter()
        .map(|a| sorted.iter().map(|s| s.frequency(a)).collect())
        .collect();
    let norms: Vec<f32> = vectors
        .iter()
        .map(|v| v.iter().map(|x| x * x).sum::<f32>().sqrt())
        .collect();
    let n = abilities.len();
    let w = config.cooccurrence_weight;
    let mut s = vec![vec![0.0f32; n]; n];
    for i in 0..n {
        s[i][i] = 1.0;
        for j in i + 1..n {
            let dot: f32 = vectors[i].iter().zip(&vectors[j]).map(|(x, y)| x * y).sum();
            let cos = if norms[i] > 0.0 && norms[j] > 0.0 {
                (dot / (norms[i] * norms[j])).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t = graph
                .probability(&abilities[i], &abilities[j])
                .max(graph.probability(&abilities[j], &abilities[i]));
            let v = w * cos + (1.0 - w) * t;
            s[i][j] = v;
            s[j][i] = v;
        }
    }
    s
}

/// Cluster the atomic abilities seen in `stats` into meta-abilities (see the module docs).
/// Meta-abilities come out ordered by name, members by name.
pub fn cluster(
    stats: &[EnvAbilityStats],
    graph: &AbilityGraph,
    config: &MetaConfig,
) -> Result<Vec<MetaAbility>, ProfilingError> {
    config.validate()?;
    let abilities: Vec<String> = graph.nodes().iter().map(|n| n.name.clone()).collect();
    let counts: BTreeMap<&str, u64> = graph
        .nodes()
        .iter()
        .map(|n| (n.name.as_str(), n.count))
        .collect();
    let sim = similarity_matrix(&abilities, stats, graph, config);
    // Clusters hold indices into the name-sorted abilities and stay ordered by their first
    // (smallest) member, which is what makes the strict `>` below break ties by name.
    let mut clusters: Vec<Vec<usize>> = (0..abilities.len()).map(|i| vec![i]).collect();
    loop {
        let mut best: Option<(f32, usize, usize)> = None;
        for i in 0..clusters.len() {
            for j in i + 1..clusters.len() {
                let mut total = 0.0f32;
                for &a in &clusters[i] {
                    for &b in &clusters[j] {
                        total += sim[a][b];
                    }
                }
                let mean = total / (clusters[i].len() * clusters[j].len()) as f32;
                if best.is_none_or(|(m, _, _)| mean > m) {
                    best = Some((mean, i, j));
                }
            }
        }
        match best {
            Some((mean, i, j)) if mean >= config.threshold => {
                let merged = clusters.remove(j);
                clusters[i].extend(merged);
                clusters[i].sort_unstable();
            }
            _ => break,
        }
    }
    let mut out: Vec<MetaAbility> = clusters
        .into_iter()
        .map(|members| {
            let names: Vec<String> = members.iter().map(|&i| abilities[i].clone()).collect();
            // Members are in name order, so `max_by_key` keeping the first maximum would pick
            // the last; compare counts then reverse name order to take the first.
            let top = names
                .iter()
                .max_by(|a, b| {
                    counts[a.as_str()]
                        .cmp(&counts[b.as_str()])
                        .then_with(|| b.cmp(a))
                })
                .cloned()
                .unwrap_or_default();
            let name = if names.len() == 1 {
                top
            } else {
                format!("{top}+{}", names.len() - 1)
            };
            MetaAbility {
                name,
                members: names,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Atomic ability -> its meta-ability's name.
pub fn meta_of(metas: &[MetaAbility]) -> BTreeMap<String, String> {
    metas
        .iter()
        .flat_map(|m| m.members.iter().map(|a| (a.clone(), m.name.clone())))
        .collect()
}

/// An environment's meta-ability coverage: for each meta-ability, the summed frequencies of
/// its members (so the weights of an env with any segment sum to 1). Zero weights are omitted.
/// Abilities missing from `meta_of` are skipped (they cannot occur when the clustering was
/// built from the same statistics).
pub fn coverage(
    stats: &EnvAbilityStats,
    meta_of: &BTreeMap<String, String>,
) -> BTreeMap<String, f32> {
    let total = stats.total();
    let mut out: BTreeMap<String, f32> = BTreeMap::new();
    if total == 0 {
        return out;
    }
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (a, &c) in &stats.counts {
        if let Some(m) = meta_of.get(a) {
            *counts.entry(m.as_str()).or_default() += c;
        }
    }
    for (m, c) in counts {
        if c > 0 {
            out.insert(m.to_string(), c as f32 / total as f32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::EnvId;
    use proptest::prelude::*;

    fn stats(env: &str, seqs: &[Vec<String>]) -> EnvAbilityStats {
        let mut s = EnvAbilityStats::new(EnvId::new(env));
        for q in seqs {
            s.add_sequence(q);
        }
        s
    }

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn abilities_of_one_family_with_strong_transitions_merge() {
        // nav/door always together and chained; count/add together in other envs; "rare"
        // appears alone.
        let all = vec![
            stats("maze/a", &[v(&["nav", "door", "nav", "door"])]),
            stats("maze/b", &[v(&["nav", "door"])]),
            stats("dice/a", &[v(&["count", "add"])]),
            stats("dice/b", &[v(&["count", "add", "count", "add"])]),
            stats("odd/a", &[v(&["rare"])]),
        ];
        let g = AbilityGraph::from_stats(&all);
        let metas = cluster(&all, &g, &MetaConfig::default()).unwrap();
        let got: Vec<(&str, Vec<&str>)> = metas
            .iter()
            .map(|m| {
                (
                    m.name.as_str(),
                    m.members.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("add+1", vec!["add", "count"]),
                ("door+1", vec!["door", "nav"]),
                ("rare", vec!["rare"]),
            ]
        );
        let m = meta_of(&metas);
        let cov = coverage(&all[0], &m);
        assert_eq!(cov.len(), 1);
        assert_eq!(cov["door+1"], 1.0);
        // Threshold 0 merges everything into one meta-ability.
        let loose = MetaConfig {
            threshold: 0.0,
            ..MetaConfig::default()
        };
        let one = cluster(&all, &g, &loose).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].members.len(), 5);
        let bad = MetaConfig {
            threshold: 1.5,
            ..MetaConfig::default()
        };
        assert!(cluster(&all, &g, &bad).is_err());
    }

    fn arb_stats() -> impl Strategy<Value = Vec<EnvAbilityStats>> {
        let names = prop::sample::select(vec!["a", "b", "c", "d", "e", "f", "g", "h"]);
        let seq = prop::collection::vec(names, 0..8);
        let env = prop::collection::vec(seq, 1..4);
        prop::collection::vec(env, 1..7).prop_map(|envs| {
            envs.iter()
                .enumerate()
                .map(|(i, seqs)| {
                    let seqs: Vec<Vec<String>> = seqs.iter().map(|q| v(q)).collect();
                    stats(&format!("env/{i}"), &seqs)
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_atomic_ability_lands_in_exactly_one_meta_ability_deterministically(
            all in arb_stats(),
            threshold in 0.0f32..=1.0,
            w in 0.0f32..=1.0,
        ) {
            let config = MetaConfig { cooccurrence_weight: w, threshold };
            let g = AbilityGraph::from_stats(&all);
            let metas = cluster(&all, &g, &config).unwrap();
            let mut seen: Vec<String> = metas.iter().flat_map(|m| m.members.clone()).collect();
            seen.sort();
            let expected: Vec<String> = g.nodes().iter().map(|n| n.name.clone()).collect();
            prop_assert_eq!(&seen, &expected);
            let mut names: Vec<&String> = metas.iter().map(|m| &m.name).collect();
            names.dedup();
            prop_assert_eq!(names.len(), metas.len());

            // Same statistics in another order: same meta-abilities.
            let mut reversed = all.clone();
            reversed.reverse();
            let g2 = AbilityGraph::from_stats(&reversed);
            prop_assert_eq!(cluster(&reversed, &g2, &config).unwrap(), metas.clone());

            // Coverage of every env with segments sums to 1.
            let m = meta_of(&metas);
            for s in &all {
                let total: f32 = coverage(s, &m).values().sum();
                if s.total() > 0 {
                    prop_assert!((total - 1.0).abs() < 1e-4);
                }
            }
        }
    }
}
