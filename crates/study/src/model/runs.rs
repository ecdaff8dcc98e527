//! What each training run of an arm recorded: its scores, curriculum, diagnostics.

use std::collections::BTreeMap;

use envdist_core::EnvId;
use serde::{Deserialize, Serialize};

use super::arms::Arm;
pub use envdist_trainer::SplitScores;

/// Where an HDC arm's curriculum went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurriculumSummary {
    /// Training episodes played at each harness level H0..H4.
    pub episodes_per_level: [u64; 5],
    /// Environments whose current level at the end is H0..H4.
    pub final_levels: [u32; 5],
    /// Share of the environments at H4 at the end.
    pub share_at_h4: f32,
    /// Share of the budget (in episodes) spent when the first half of the environments
    /// reached H4 (`None` if half never did).
    pub half_at_h4_after: Option<f32>,
    /// Stage advances forced by the per-stage episode cap (not earned by competence).
    pub capped_advances: u32,
    /// Stage advances in all.
    pub advances: u32,
}

/// An arm's curriculum summaries summed over its runs (seeds): the one sum behind
/// `preconditions.hdc_reach` and the report's HDC table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CurriculumTotals {
    /// Runs summed.
    pub runs: usize,
    /// Training episodes at each harness level H0..H4.
    pub episodes_per_level: [u64; 5],
    /// Environment-runs whose level at the end is H0..H4.
    pub final_levels: [u32; 5],
    /// The runs' shares of environments at H4 at the end, summed (divide by `runs`).
    pub share_at_h4_sum: f32,
    /// `half_at_h4_after` of the runs where half the environments reached H4.
    pub half_at_h4_after: Vec<f32>,
    /// Stage advances forced by the stage cap.
    pub capped_advances: u32,
    /// Stage advances in all.
    pub advances: u32,
}

impl CurriculumTotals {
    /// The sum of `summaries`, in their order.
    pub fn of<'a>(summaries: impl IntoIterator<Item = &'a CurriculumSummary>) -> Self {
        let mut t = Self::default();
        for s in summaries {
            t.runs += 1;
            for k in 0..5 {
                t.episodes_per_level[k] += s.episodes_per_level[k];
                t.final_levels[k] += s.final_levels[k];
            }
            t.share_at_h4_sum += s.share_at_h4;
            t.half_at_h4_after.extend(s.half_at_h4_after);
            t.capped_advances += s.capped_advances;
            t.advances += s.advances;
        }
        t
    }

    /// Training episodes in all.
    pub fn episodes(&self) -> u64 {
        self.episodes_per_level.iter().sum()
    }
}

/// One training arm at one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmRun {
    /// The arm.
    pub arm: Arm,
    /// Training seed index.
    pub seed: u32,
    /// The environments trained on (the last selection for the online arm).
    pub train_envs: Vec<EnvId>,
    /// Success per evaluated environment (ID and OOD), per evaluated scale, at H4.
    pub per_env: BTreeMap<EnvId, Vec<f32>>,
    /// The paper's four columns.
    pub scores: SplitScores,
    /// Environment steps of training (equal for every arm but base).
    pub env_steps: u64,
    /// Wall time of training + evaluation in seconds (of the invocation that computed it).
    pub wall_seconds: f64,
    /// Learning curve: (env steps, training success rate of the update's episodes).
    pub curve: Vec<(u64, f32)>,
    /// The RL's diagnostics over training (every update, or a subsample of at most 128).
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    /// HDC arms: where the curriculum went.
    pub curriculum: Option<CurriculumSummary>,
    /// Online arm: the selections in order (the first is the one-shot AES).
    #[serde(default)]
    pub reselections: Vec<Vec<EnvId>>,
    /// Training throughput, env steps/s, learning included.
    #[serde(default)]
    pub env_steps_per_s: f32,
    /// Seconds of the final evaluation (part of `wall_seconds`).
    #[serde(default)]
    pub eval_seconds: f64,
}

impl ArmRun {
    /// A run known by its evaluation alone (`per_env`): no training, no diagnostics; the
    /// base's evaluation and the analysis's tests start from it.
    pub fn evaluated(arm: Arm, seed: u32, per_env: BTreeMap<EnvId, Vec<f32>>) -> Self {
        Self {
            arm,
            seed,
            train_envs: vec![],
            per_env,
            scores: SplitScores::default(),
            env_steps: 0,
            wall_seconds: 0.0,
            curve: vec![],
            diagnostics: vec![],
            curriculum: None,
            reselections: vec![],
            env_steps_per_s: 0.0,
            eval_seconds: 0.0,
        }
    }

    /// Success of `env` averaged over the evaluated scales.
    pub fn success(&self, env: &EnvId) -> Option<f32> {
        self.per_env
            .get(env)
            .map(|v| v.iter().sum::<f32>() / v.len().max(1) as f32)
    }
}

/// One update's diagnostics of an arm's RL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Environment steps so far.
    pub env_steps: u64,
    /// Training success (sampled actions) of the single-turn episodes that ended in the update.
    pub success_single: Option<f32>,
    /// The same for the multi-turn episodes.
    pub success_multi: Option<f32>,
    /// Mean value loss.
    pub value_loss: f32,
    /// Mean policy entropy (nats).
    pub entropy: f32,
    /// KL divergence from the base to the current policy on the update's states.
    pub kl_to_base: Option<f32>,
    /// A critic warm-up update (the policy did not move).
    pub value_only: bool,
}

/// One point of the pool-size scaling study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// Number of random pool environments trained on.
    pub pool_size: usize,
    /// Seed index.
    pub seed: u32,
    /// The run (under the name of [`crate::model::SCALING_RECIPE`], at this size).
    pub run: ArmRun,
}

/// Mean and (population) standard deviation.
pub fn mean_std(xs: &[f32]) -> Option<(f32, f32)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f32;
    let mean = xs.iter().sum::<f32>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
    Some((mean, var.sqrt()))
}
