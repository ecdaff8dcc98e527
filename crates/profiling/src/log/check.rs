//! Checking trajectories against the known environment specs.

use std::collections::BTreeMap;

use envdist_core::{EnvId, EnvSpec, Trajectory};
use serde::{Deserialize, Serialize};

/// What in a set of trajectories does not match the known environment specs. Nothing is
/// dropped from profiling because of it; it is reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCheck {
    /// Environment ids not among the specs, with their number of trajectories.
    pub unknown_envs: BTreeMap<String, u64>,
    /// For known environments: step tags their spec does not declare, with occurrence counts.
    pub unknown_abilities: BTreeMap<String, BTreeMap<String, u64>>,
}

impl LogCheck {
    /// Whether everything matched.
    pub fn is_clean(&self) -> bool {
        self.unknown_envs.is_empty() && self.unknown_abilities.is_empty()
    }

    /// One human-readable line per finding.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (env, n) in &self.unknown_envs {
            out.push(format!(
                "unknown environment {env:?} ({n} trajectories): not in the known specs; profiled anyway"
            ));
        }
        for (env, abilities) in &self.unknown_abilities {
            for (a, n) in abilities {
                out.push(format!(
                    "environment {env:?}: ability {a:?} ({n} occurrences) is not declared in its spec; profiled anyway"
                ));
            }
        }
        out
    }
}

/// Compare the envs and step tags of `trajectories` with `specs`.
pub fn check_trajectories(trajectories: &[Trajectory], specs: &[EnvSpec]) -> LogCheck {
    let by_id: BTreeMap<&EnvId, &EnvSpec> = specs.iter().map(|s| (&s.id, s)).collect();
    let mut check = LogCheck::default();
    for t in trajectories {
        let Some(spec) = by_id.get(&t.task.env) else {
            *check
                .unknown_envs
                .entry(t.task.env.to_string())
                .or_default() += 1;
            continue;
        };
        for step in &t.steps {
            for a in &step.abilities {
                if !spec.abilities.contains(a) {
                    *check
                        .unknown_abilities
                        .entry(t.task.env.to_string())
                        .or_default()
                        .entry(a.clone())
                        .or_default() += 1;
                }
            }
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::traj;

    #[test]
    fn unknown_envs_and_abilities_are_reported() {
        let specs = envdist_core::env::EnvFactory::specs(&crate::toy::ToyFactory);
        let ts = vec![
            traj("toy/walk", &[&["navigate", "teleport"], &["teleport"]]),
            traj("other/env", &[&["navigate"]]),
            traj("other/env", &[]),
        ];
        let c = check_trajectories(&ts, &specs);
        assert_eq!(c.unknown_envs["other/env"], 2);
        assert_eq!(c.unknown_abilities["toy/walk"]["teleport"], 2);
        assert!(!c.is_clean());
        let lines = c.describe();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("other/env") && lines[1].contains("teleport"));
        assert!(
            check_trajectories(&ts[..1], &[])
                .unknown_envs
                .contains_key("toy/walk")
        );
    }
}
