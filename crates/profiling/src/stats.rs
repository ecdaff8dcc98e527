//! Per-environment ability statistics: counts, frequencies and transition probabilities.

use std::collections::BTreeMap;

use envdist_core::{AbilityTransition, EnvId};

/// What the segmented trajectories of one environment contain.
///
/// Counts are segments (occurrences in the segmented sequences), transitions are pairs of
/// consecutive segments within one trajectory (never across trajectories).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvAbilityStats {
    /// The environment.
    pub env: EnvId,
    /// Trajectories added.
    pub trajectories: u32,
    /// Occurrences of each atomic ability.
    pub counts: BTreeMap<String, u64>,
    /// Observed `(from, to)` consecutive pairs.
    pub transitions: BTreeMap<(String, String), u64>,
}

impl EnvAbilityStats {
    /// Empty statistics for `env`.
    pub fn new(env: EnvId) -> Self {
        Self {
            env,
            trajectories: 0,
            counts: BTreeMap::new(),
            transitions: BTreeMap::new(),
        }
    }

    /// Add the segmented ability sequence of one trajectory.
    pub fn add_sequence(&mut self, sequence: &[String]) {
        self.trajectories += 1;
        for a in sequence {
            *self.counts.entry(a.clone()).or_default() += 1;
        }
        for w in sequence.windows(2) {
            *self
                .transitions
                .entry((w[0].clone(), w[1].clone()))
                .or_default() += 1;
        }
    }

    /// Total segments.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Share of all segments that are `ability` (0 when there are none).
    pub fn frequency(&self, ability: &str) -> f32 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        self.counts.get(ability).copied().unwrap_or(0) as f32 / total as f32
    }

    /// All frequencies, keyed by ability.
    pub fn frequencies(&self) -> BTreeMap<String, f32> {
        self.counts
            .keys()
            .map(|a| (a.clone(), self.frequency(a)))
            .collect()
    }

    /// P(next = `to` | current = `from`): the pair's count over all transitions out of `from`.
    pub fn transition_probability(&self, from: &str, to: &str) -> f32 {
        let out: u64 = self
            .transitions
            .iter()
            .filter(|((f, _), _)| f == from)
            .map(|(_, c)| c)
            .sum();
        if out == 0 {
            return 0.0;
        }
        let c = self
            .transitions
            .get(&(from.to_string(), to.to_string()))
            .copied()
            .unwrap_or(0);
        c as f32 / out as f32
    }

    /// Every observed transition with its probability, ordered by `(from, to)`.
    pub fn transition_list(&self) -> Vec<AbilityTransition> {
        let mut out_totals: BTreeMap<&str, u64> = BTreeMap::new();
        for ((from, _), c) in &self.transitions {
            *out_totals.entry(from.as_str()).or_default() += c;
        }
        self.transitions
            .iter()
            .map(|((from, to), &count)| AbilityTransition {
                from: from.clone(),
                to: to.clone(),
                count,
                probability: count as f32 / out_totals[from.as_str()] as f32,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn frequencies_and_outgoing_probabilities_sum_to_one(
            seqs in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "d"]), 0..10),
                1..6,
            )
        ) {
            let mut s = EnvAbilityStats::new(EnvId::new("p/q"));
            for q in &seqs {
                s.add_sequence(&q.iter().map(|x| x.to_string()).collect::<Vec<_>>());
            }
            let total: usize = seqs.iter().map(Vec::len).sum();
            prop_assert_eq!(s.total(), total as u64);
            if total > 0 {
                let f: f32 = s.frequencies().values().sum();
                prop_assert!((f - 1.0).abs() < 1e-5);
            }
            let mut out: BTreeMap<String, f32> = BTreeMap::new();
            for t in s.transition_list() {
                *out.entry(t.from).or_default() += t.probability;
            }
            for (_, p) in out {
                prop_assert!((p - 1.0).abs() < 1e-5);
            }
            let pairs: usize = seqs.iter().map(|q| q.len().saturating_sub(1)).sum();
            prop_assert_eq!(s.transitions.values().sum::<u64>(), pairs as u64);
        }
    }

    fn seq(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn exact_counts_and_transition_probabilities() {
        let mut s = EnvAbilityStats::new(EnvId::new("toy/walk"));
        s.add_sequence(&seq(&["nav", "pick", "nav", "door"]));
        s.add_sequence(&seq(&["nav", "door"]));
        s.add_sequence(&seq(&[]));
        assert_eq!(s.trajectories, 3);
        assert_eq!(s.total(), 6);
        assert_eq!(s.counts["nav"], 3);
        assert_eq!(s.counts["pick"], 1);
        assert_eq!(s.counts["door"], 2);
        assert_eq!(s.frequency("nav"), 0.5);
        assert_eq!(s.frequency("door"), 2.0 / 6.0);
        assert_eq!(s.frequency("absent"), 0.0);
        // Out of nav: nav->pick once, nav->door twice; no transition spans trajectories.
        assert_eq!(s.transition_probability("nav", "pick"), 1.0 / 3.0);
        assert_eq!(s.transition_probability("nav", "door"), 2.0 / 3.0);
        assert_eq!(s.transition_probability("pick", "nav"), 1.0);
        assert_eq!(s.transition_probability("door", "nav"), 0.0);
        let list = s.transition_list();
        let got: Vec<(&str, &str, u64, f32)> = list
            .iter()
            .map(|t| (t.from.as_str(), t.to.as_str(), t.count, t.probability))
            .collect();
        assert_eq!(
            got,
            [
                ("nav", "door", 2, 2.0 / 3.0),
                ("nav", "pick", 1, 1.0 / 3.0),
                ("pick", "nav", 1, 1.0),
            ]
        );
    }
}
