//! Development and confirmation as separate sets (docs/experiments/PROTOCOL.md): pilots and
//! tuning use development training seeds, evaluation instances and held-out environments; the
//! committed record runs on confirmatory ones no pilot has seen. The split is one field of the
//! configuration, and everything that differs between the two follows from it here.

use serde::{Deserialize, Serialize};

/// Which set a run measures on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Pilots, tuning and every run whose configuration was changed from a preset's.
    #[default]
    Development,
    /// The committed record: training seeds, evaluation instances and held-out envs no pilot
    /// has touched.
    Confirmatory,
}

/// The first training-seed index of a confirmatory run; development runs use the indices
/// below it.
pub const CONFIRMATORY_SEED_BASE: u32 = 100;

impl Split {
    /// Every split.
    pub const ALL: [Split; 2] = [Split::Development, Split::Confirmatory];

    /// The name in files and tables.
    pub fn name(self) -> &'static str {
        match self {
            Split::Development => "development",
            Split::Confirmatory => "confirmatory",
        }
    }

    /// The training-seed indices of a run with `seeds` seeds: `0..seeds` in development,
    /// [`CONFIRMATORY_SEED_BASE`] on in confirmation. Every stream a training seed drives (its
    /// PPO stream, its gradients and selections, its random draws) derives from its index, so
    /// the two sets share no stream.
    pub fn seed_indices(self, seeds: u32) -> std::ops::Range<u32> {
        let base = self.seed_base();
        base..base + seeds
    }

    /// The first training-seed index.
    pub fn seed_base(self) -> u32 {
        match self {
            Split::Development => 0,
            Split::Confirmatory => CONFIRMATORY_SEED_BASE,
        }
    }

    /// What salts the evaluation instances' stream: 0 keeps the development instances every
    /// earlier record and pilot played; confirmation draws others.
    pub fn eval_salt(self) -> u64 {
        match self {
            Split::Development => 0,
            Split::Confirmatory => 0x434f_4e46_4952_4d00,
        }
    }
}

/// The salt of the instances probes are scored on (the transfer matrix, the harness probes,
/// the conflict-pair probes): disjoint from every evaluation's, so nothing a selection reads
/// was measured on the instances that score the arms.
pub const PROBE_SALT: u64 = 0x5052_4f42_4553_0000;

/// Whether a split was named by the configuration a run was given.
pub fn names_split(overrides: &serde_json::Value) -> bool {
    overrides
        .get("protocol")
        .and_then(|p| p.get("split"))
        .is_some()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use envdist_envs::Suite;

    use super::*;
    use crate::config::{ExperimentConfig, Preset};
    use crate::stages::{eval, pool};

    /// Every evaluation instance seed of `cfg` on `envs`.
    fn instances(
        cfg: &ExperimentConfig,
        suite: &Suite,
        envs: &[envdist_core::EnvId],
    ) -> BTreeSet<u64> {
        envs.iter()
            .flat_map(|e| eval::eval_tasks(suite, e, &cfg.evaluation()).unwrap())
            .map(|t| t.seed)
            .collect()
    }

    /// A pilot (any changed configuration that does not name the split) is a development run,
    /// and a development run shares no training seed, no evaluation instance and no held-out
    /// environment with the confirmatory record.
    #[test]
    fn a_pilot_cannot_reach_the_confirmatory_set() {
        let record = ExperimentConfig::preset(Preset::Cpu);
        assert_eq!(record.protocol.split, Split::Confirmatory);
        let overrides = serde_json::json!({"rl": {"kl_coef": 0.5}, "seeds": 99});
        let pilot =
            ExperimentConfig::from_overrides(Preset::Cpu, &overrides, "pilot.json").unwrap();
        assert_eq!(pilot.protocol.split, Split::Development);
        // Naming the split is the one way to a confirmatory run with a config.
        let named = serde_json::json!({"protocol": {"split": "confirmatory"}});
        let again = ExperimentConfig::from_overrides(Preset::Cpu, &named, "config.json").unwrap();
        assert_eq!(again.protocol.split, Split::Confirmatory);

        let seeds: BTreeSet<u32> = pilot.seed_indices().collect();
        assert!(record.seed_indices().all(|s| !seeds.contains(&s)));
        // A development run cannot ask for enough seeds to reach the confirmatory ones.
        let mut greedy = pilot.clone();
        greedy.seeds = CONFIRMATORY_SEED_BASE + 1;
        let e = envdist_core::Validate::validate(&greedy)
            .unwrap_err()
            .to_string();
        assert!(e.contains("seeds"), "{e}");

        let suite = Suite::with_canvas(record.suite.canvas).unwrap();
        let (dev, conf) = (
            pool::run(&pilot, &suite).unwrap(),
            pool::run(&record, &suite).unwrap(),
        );
        assert_eq!(dev.pool, conf.pool, "the pool is the testbed, shared");
        assert!(!conf.ood.is_empty() && conf.ood.iter().all(|e| !dev.ood.contains(e)));
        let family = |e: &envdist_core::EnvId| suite.spec(e).unwrap().family.clone();
        let dev_families: BTreeSet<String> = dev.ood.iter().map(family).collect();
        assert!(conf.ood.iter().all(|e| !dev_families.contains(&family(e))));

        let envs = &dev.pool[..20];
        let (a, b) = (
            instances(&pilot, &suite, envs),
            instances(&record, &suite, envs),
        );
        assert!(a.is_disjoint(&b), "evaluation instances shared");
        // Probes are scored on instances of their own, none of them an evaluation's.
        let probes: BTreeSet<u64> = envs
            .iter()
            .flat_map(|e| {
                eval::eval_tasks(&suite, e, &crate::stages::transfer::eval_config(&record)).unwrap()
            })
            .map(|t| t.seed)
            .collect();
        assert!(probes.is_disjoint(&a) && probes.is_disjoint(&b));
    }
}
