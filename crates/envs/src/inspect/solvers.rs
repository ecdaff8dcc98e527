//! The solver success table: each family's solver played on fixed seeds at both ends of its
//! scale range (the check that every family is solvable, and how long its episodes run).

use envdist_core::env::EnvFactory;
use envdist_core::{Env, EnvId, HarnessLevel, InvalidValue, Split, Task, Turn};
use serde::{Deserialize, Serialize};

use super::InspectError;
use crate::Suite;

/// Success rate and mean episode length of a solver over some seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverRate {
    /// Share of episodes solved.
    pub success: f32,
    /// Mean steps per episode.
    pub mean_steps: f32,
}

/// Play `env`'s solver at H4 on seeds `0..seeds` at `scale`. An episode ends when the env
/// says so or when the solver has no action left (unsolved). `seeds` must be at least 1.
pub fn solver_rate(env: &mut dyn Env, id: &EnvId, scale: u32, seeds: u64) -> SolverRate {
    let mut wins = 0;
    let mut steps = 0u64;
    for seed in 0..seeds {
        env.reset(&Task {
            env: id.clone(),
            seed,
            harness: HarnessLevel::H4,
            scale,
        });
        while let Some(a) = env.oracle_action() {
            let s = env.step(a);
            steps += 1;
            if s.done || s.truncated {
                wins += s.success as u64;
                break;
            }
        }
    }
    SolverRate {
        success: wins as f32 / seeds as f32,
        mean_steps: steps as f32 / seeds as f32,
    }
}

/// One family's row of the solver table (its classic variant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolverRecord {
    /// Family name.
    pub family: String,
    /// Single- or multi-turn (`ST`/`MT`).
    pub turn: Turn,
    /// Pool or held-out (`pool`/`ood`).
    pub split: Split,
    /// Smallest scale.
    pub scale_min: u32,
    /// Solver success at the smallest scale.
    pub success_at_min: f32,
    /// Mean episode length at the smallest scale.
    pub mean_steps_at_min: f32,
    /// Largest scale.
    pub scale_max: u32,
    /// Solver success at the largest scale.
    pub success_at_max: f32,
    /// Mean episode length at the largest scale.
    pub mean_steps_at_max: f32,
}

/// The solver table of `suite`: one record per family (its classic variant), in registration
/// order, each from `seeds` seeds at both ends of the scale range. `on_record` sees each
/// record as it is made (progress). Zero `seeds` is refused.
pub fn solver_success(
    suite: &Suite,
    seeds: u64,
    on_record: &mut dyn FnMut(&SolverRecord),
) -> Result<Vec<SolverRecord>, InspectError> {
    if seeds == 0 {
        return Err(InvalidValue::new("seeds", "at least 1", seeds).into());
    }
    let mut records = Vec::new();
    for spec in suite.specs().into_iter().filter(|s| s.variant == "classic") {
        let mut env = suite.make(&spec.id)?;
        let lo = solver_rate(env.as_mut(), &spec.id, spec.scale.min, seeds);
        let hi = solver_rate(env.as_mut(), &spec.id, spec.scale.max, seeds);
        let record = SolverRecord {
            family: spec.family,
            turn: spec.turn,
            split: spec.split,
            scale_min: spec.scale.min,
            success_at_min: lo.success,
            mean_steps_at_min: lo.mean_steps,
            scale_max: spec.scale.max,
            success_at_max: hi.success,
            mean_steps_at_max: hi.mean_steps,
        };
        on_record(&record);
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_one_record_and_the_maze_solver_always_wins() {
        let suite = Suite::with_canvas(16).unwrap();
        let mut seen = 0;
        let records = solver_success(&suite, 2, &mut |_| seen += 1).unwrap();
        assert_eq!(records.len(), suite.families().len());
        assert_eq!(seen, records.len());
        let maze = records.iter().find(|r| r.family == "maze").unwrap();
        assert_eq!((maze.success_at_min, maze.success_at_max), (1.0, 1.0));
        assert!(maze.mean_steps_at_min >= 1.0);
        assert!(maze.mean_steps_at_max >= maze.mean_steps_at_min);
        let json = serde_json::to_value(maze).unwrap();
        assert_eq!(
            (json["turn"].as_str(), json["split"].as_str()),
            (Some("MT"), Some("pool"))
        );
    }

    #[test]
    fn zero_seeds_are_refused_by_name() {
        let e = solver_success(&Suite::with_canvas(16).unwrap(), 0, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("`seeds`"), "{e}");
    }
}
