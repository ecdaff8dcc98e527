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
    /// For each unknown environment, up to five known ids nearest to it (a misspelt id
    /// finds the one it meant).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nearest_known: BTreeMap<String, Vec<String>>,
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
            let nearest = match self.nearest_known.get(env) {
                Some(ids) if !ids.is_empty() => format!(" (nearest known: {})", ids.join(", ")),
                _ => String::new(),
            };
            out.push(format!(
                "unknown environment {env:?} ({n} trajectories): not in the known specs{nearest}; profiled anyway"
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
    let known: Vec<&str> = specs.iter().map(|s| s.id.as_str()).collect();
    check.nearest_known = check
        .unknown_envs
        .keys()
        .map(|id| {
            let near = envdist_core::nearest_ids(id, &known);
            (id.clone(), near.into_iter().map(str::to_string).collect())
        })
        .collect();
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
        // A misspelt id names the one it meant.
        let misspelt = check_trajectories(&[traj("toy/wakl", &[&["navigate"]])], &specs);
        assert_eq!(misspelt.nearest_known["toy/wakl"][0], "toy/walk");
        assert!(
            misspelt.describe()[0].contains(
                "\"toy/wakl\" (1 trajectories): not in the known specs (nearest known: toy/walk"
            ),
            "{:?}",
            misspelt.describe()
        );
        assert!(
            check_trajectories(&ts[..1], &[])
                .unknown_envs
                .contains_key("toy/walk")
        );
    }
}
