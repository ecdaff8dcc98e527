//! Helpers shared by the integration tests of this crate.
#![allow(dead_code)]

use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, ScaleRange, Split, Task, Turn};

/// Environments `fam/v0..` with the given scale ranges.
pub fn specs(ranges: &[(u32, u32)]) -> Vec<EnvSpec> {
    ranges
        .iter()
        .enumerate()
        .map(|(i, &(min, max))| EnvSpec {
            id: EnvId::new(format!("fam/v{i}")),
            family: "fam".into(),
            variant: format!("v{i}"),
            turn: Turn::Multi,
            scale: ScaleRange { min, max },
            split: Split::Pool,
            abilities: vec![],
            conflict_twin: None,
            instruction: String::new(),
            max_steps: 10,
        })
        .collect()
}

/// A deterministic outcome that depends only on the task: solved when the task's seed
/// falls under `p_percent` of 100 (so two runs with the same tasks see the same outcomes).
pub fn play(task: Task, p_percent: u64) -> EpisodeOutcome {
    let success = task.seed % 100 < p_percent;
    EpisodeOutcome {
        task,
        success,
        episode_return: success as u32 as f32,
        steps: 1,
    }
}
