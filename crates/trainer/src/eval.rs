//! Evaluation: fixed seeds, greedy actions, one harness level (H4, bare vision, by default).

use burn::tensor::backend::AutodiffBackend;
use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, EnvSpec, HarnessLevel, Split, Task, Turn};
use serde::{Deserialize, Serialize};

use crate::config::ModelConfig;
use crate::error::TrainerError;
use crate::model::PolicyNet;
use crate::play::{Mode, play_episodes};

/// Schema version of [`EvalReport`] files.
pub const EVAL_SCHEMA_VERSION: u32 = 1;

/// Which state scale an episode is played at, relative to each env's declared range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleChoice {
    /// The smallest (easiest) scale.
    Min,
    /// The middle scale.
    Mid,
    /// The largest scale.
    Max,
    /// This scale, clamped into each env's range.
    Fixed(u32),
}

impl ScaleChoice {
    /// The scale for `spec`.
    pub fn for_spec(self, spec: &EnvSpec) -> u32 {
        match self {
            Self::Min => spec.scale.min,
            Self::Mid => spec.scale.mid(),
            Self::Max => spec.scale.max,
            Self::Fixed(s) => s.clamp(spec.scale.min, spec.scale.max),
        }
    }
}

impl std::fmt::Display for ScaleChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Min => f.write_str("min"),
            Self::Mid => f.write_str("mid"),
            Self::Max => f.write_str("max"),
            Self::Fixed(s) => write!(f, "{s}"),
        }
    }
}

impl std::str::FromStr for ScaleChoice {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "min" => Ok(Self::Min),
            "mid" => Ok(Self::Mid),
            "max" => Ok(Self::Max),
            n => n.parse().map(Self::Fixed).map_err(|_| {
                TrainerError::Config(InvalidValue::new("scale", "min, mid, max or an integer", n))
            }),
        }
    }
}

/// One environment's evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvScore {
    /// The environment.
    pub env: EnvId,
    /// Single- or multi-turn.
    pub turn: Turn,
    /// In the pool (ID), held out (OOD) or held out for confirmation.
    pub split: Split,
    /// Fraction of seeds solved.
    pub success: f32,
    /// Episodes played.
    pub episodes: u32,
    /// Mean episode return.
    pub mean_return: f32,
    /// Mean episode length.
    pub mean_steps: f32,
}

/// Mean success split the paper's way: single- and multi-turn, in-pool (ID) and held-out
/// (OOD). `None` where a split has no environment. Confirmatory environments
/// ([`Split::Confirm`]) count in none of the four: a record that evaluates them reports them
/// apart, so that no pilot's columns ever mix them in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitScores {
    /// Mean success of single-turn pool envs.
    pub st_id: Option<f32>,
    /// Mean success of multi-turn pool envs.
    pub mt_id: Option<f32>,
    /// Mean success of single-turn held-out envs.
    pub st_ood: Option<f32>,
    /// Mean success of multi-turn held-out envs.
    pub mt_ood: Option<f32>,
}

impl SplitScores {
    /// The four means in the paper's column order: ST (ID), MT (ID), ST (OOD), MT (OOD).
    pub fn columns(&self) -> [Option<f32>; 4] {
        [self.st_id, self.mt_id, self.st_ood, self.mt_ood]
    }
}

/// Per-environment success and its averages by turn and split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// Always [`EVAL_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Harness level played.
    pub harness: HarnessLevel,
    /// One row per environment, in the order asked.
    pub per_env: Vec<EnvScore>,
    /// Means by turn and split.
    #[serde(flatten)]
    pub splits: SplitScores,
    /// Mean success over all envs.
    pub mean: f32,
}

impl EvalReport {
    /// Success of `env`, if it was evaluated.
    pub fn success(&self, env: &EnvId) -> Option<f32> {
        self.per_env
            .iter()
            .find(|s| &s.env == env)
            .map(|s| s.success)
    }
}

fn mean_of(scores: &[EnvScore], turn: Turn, split: Split) -> Option<f32> {
    let v: Vec<f32> = scores
        .iter()
        .filter(|s| s.turn == turn && s.split == split)
        .map(|s| s.success)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32)
}

/// The success rate of the best constant answer on `tasks` (all of one single-turn env): the
/// share of tasks whose solver answer is the most common one. What a policy that ignores the
/// image entirely can reach, the bar "above chance" has to clear. `None` when the env has no
/// solver or the tasks are empty.
pub fn constant_answer_baseline(
    factory: &dyn EnvFactory,
    tasks: &[Task],
) -> Result<Option<f32>, TrainerError> {
    let mut counts = std::collections::BTreeMap::new();
    for t in tasks {
        let mut env = factory
            .make(&t.env)
            .map_err(|e| TrainerError::UnknownEnv(e.0))?;
        env.reset(t);
        let Some(a) = env.oracle_action() else {
            return Ok(None);
        };
        *counts.entry(a).or_insert(0u32) += 1;
    }
    let best = counts.values().copied().max().unwrap_or(0);
    Ok((!tasks.is_empty()).then(|| best as f32 / tasks.len() as f32))
}

pub(crate) fn specs_for(
    factory: &dyn EnvFactory,
    envs: &[EnvId],
) -> Result<Vec<EnvSpec>, TrainerError> {
    factory
        .specs_of(envs)
        .map_err(|e| TrainerError::UnknownEnv(e.0))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn evaluate_core<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    cfg: &ModelConfig,
    device: &B::Device,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    seeds: &[u64],
    harness: HarnessLevel,
    scale: ScaleChoice,
) -> Result<EvalReport, TrainerError> {
    let specs = specs_for(factory, envs)?;
    let tasks: Vec<Task> = specs
        .iter()
        .flat_map(|spec| {
            seeds.iter().map(move |&seed| Task {
                env: spec.id.clone(),
                seed,
                harness,
                scale: scale.for_spec(spec),
            })
        })
        .collect();
    let played = play_episodes(
        net,
        factory,
        cfg,
        device,
        &tasks,
        256,
        Mode::Greedy,
        false,
        None,
    )?;
    let per_env: Vec<EnvScore> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let eps = &played[i * seeds.len()..(i + 1) * seeds.len()];
            let n = eps.len().max(1) as f32;
            EnvScore {
                env: spec.id.clone(),
                turn: spec.turn,
                split: spec.split,
                success: eps.iter().filter(|p| p.outcome.success).count() as f32 / n,
                episodes: eps.len() as u32,
                mean_return: eps.iter().map(|p| p.outcome.episode_return).sum::<f32>() / n,
                mean_steps: eps.iter().map(|p| p.outcome.steps as f32).sum::<f32>() / n,
            }
        })
        .collect();
    let mean = if per_env.is_empty() {
        0.0
    } else {
        per_env.iter().map(|s| s.success).sum::<f32>() / per_env.len() as f32
    };
    Ok(EvalReport {
        schema_version: EVAL_SCHEMA_VERSION,
        harness,
        splits: SplitScores {
            st_id: mean_of(&per_env, Turn::Single, Split::Pool),
            mt_id: mean_of(&per_env, Turn::Multi, Split::Pool),
            st_ood: mean_of(&per_env, Turn::Single, Split::Ood),
            mt_ood: mean_of(&per_env, Turn::Multi, Split::Ood),
        },
        mean,
        per_env,
    })
}
