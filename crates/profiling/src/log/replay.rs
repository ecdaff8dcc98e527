//! Replaying trajectories in their environment to fill in missing ability tags.

use envdist_core::Trajectory;
use envdist_core::env::EnvFactory;
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
    /// Replays in which the episode ended before the logged steps did (the log's seed or
    /// scale is probably not the episode's): the steps after the end have no tags.
    pub ended_early: u64,
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
    for o in outcomes {
        match o {
            Outcome::Tagged => report.tagged += 1,
            Outcome::Unknown => report.unknown_env += 1,
            Outcome::Replayed { ended_early } => {
                report.replayed += 1;
                report.ended_early += ended_early as u64;
            }
        }
    }
    report
}
