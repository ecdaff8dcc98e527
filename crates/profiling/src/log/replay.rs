//! Replaying trajectories in their environment to fill in missing ability tags.

use std::collections::BTreeMap;

use envdist_core::env::EnvFactory;
use envdist_core::{Trajectory, nearest_ids};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// What [`replay_abilities`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Trajectories whose steps got the environment's tags.
    pub replayed: u64,
    /// Trajectories left as they were because they already carry tags.
    pub tagged: u64,
    /// Trajectories of environments the factory cannot make (left without tags).
    pub unknown_env: u64,
    /// Those environments' ids as the log wrote them, each with its number of trajectories
    /// and the nearest ids the factory knows (a misspelt id finds the one it meant).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_env_ids: BTreeMap<String, UnknownEnvId>,
    /// Replays in which the episode ended before the logged steps did (the log's seed or
    /// scale is probably not the episode's): the steps after the end have no tags.
    pub ended_early: u64,
}

/// An environment id of a log that the replay's factory does not know.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownEnvId {
    /// Trajectories of it in the log.
    pub trajectories: u64,
    /// Up to five known ids nearest to it, nearest first.
    pub nearest: Vec<String>,
}

impl ReplayReport {
    /// The unknown ids as one line: `"maze/clasic" (3 trajectories; nearest: maze/classic,
    /// ...)`, or `None` when every environment was known.
    pub fn describe_unknown(&self) -> Option<String> {
        if self.unknown_env_ids.is_empty() {
            return None;
        }
        Some(
            self.unknown_env_ids
                .iter()
                .map(|(id, u)| {
                    format!(
                        "{id:?} ({} trajectories; nearest: {})",
                        u.trajectories,
                        u.nearest.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

/// Fill in the ability tags of trajectories that have none (a trainer's chat log rarely has
/// them) by replaying their actions in the environment `factory` makes: reset with the
/// trajectory's task, then step. Exact when the log records the episode's seed, harness and
/// scale (envdist's tickets do); otherwise the tags are those of a similar episode.
/// Deterministic and independent of the number of threads.
pub fn replay_abilities(trajectories: &mut [Trajectory], factory: &dyn EnvFactory) -> ReplayReport {
    #[derive(Clone, Copy)]
    enum Outcome {
        Tagged,
        Unknown,
        Replayed { ended_early: bool },
    }
    let outcomes: Vec<Outcome> = trajectories
        .par_iter_mut()
        .map(|t| {
            if t.steps.iter().any(|s| !s.abilities.is_empty()) {
                return Outcome::Tagged;
            }
            let Ok(mut env) = factory.make(&t.task.env) else {
                return Outcome::Unknown;
            };
            env.reset(&t.task);
            let mut ended_early = false;
            let len = t.steps.len();
            for (i, step) in t.steps.iter_mut().enumerate() {
                let s = env.step(step.action);
                step.abilities = s.abilities.iter().map(|a| a.to_string()).collect();
                if (s.done || s.truncated) && i + 1 < len {
                    ended_early = true;
                    break;
                }
            }
            Outcome::Replayed { ended_early }
        })
        .collect();
    let mut report = ReplayReport::default();
    let specs = factory.specs();
    let known: Vec<&str> = specs.iter().map(|s| s.id.as_str()).collect();
    for (o, t) in outcomes.into_iter().zip(trajectories.iter()) {
        match o {
            Outcome::Tagged => report.tagged += 1,
            Outcome::Unknown => {
                report.unknown_env += 1;
                let id = t.task.env.as_str();
                report
                    .unknown_env_ids
                    .entry(id.to_string())
                    .or_insert_with(|| UnknownEnvId {
                        trajectories: 0,
                        nearest: nearest_ids(id, &known)
                            .into_iter()
                            .map(str::to_string)
                            .collect(),
                    })
                    .trajectories += 1;
            }
            Outcome::Replayed { ended_early } => {
                report.replayed += 1;
                report.ended_early += ended_early as u64;
            }
        }
    }
    report
}
