//! Evaluation: greedy, at H4 (image and task statement only), on fixed instances that differ
//! per environment (so the theme variants of a family are not the same instances replayed),
//! at each evaluated scale; and the constant-answer baseline of each single-turn environment.

use std::collections::BTreeMap;

use envdist_core::{EnvId, HarnessLevel, Rng, Split, Task, Turn};
use envdist_envs::Suite;
use envdist_trainer::{PolicyModel, SplitScores, constant_answer_baseline, play_greedy};
use serde::{Deserialize, Serialize};

use super::specs_of;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::{EvalConfig, ExperimentConfig};
use crate::error::Result;

/// The code an evaluation runs: the suite's and the trainer's (greedy play).
pub const CODE: [Crate; 3] = [Crate::Core, Crate::Envs, Crate::Trainer];

/// The key of the constant-answer baselines: the pool and the `eval` section.
pub fn constant_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    pool: &StageKey,
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("pool", pool)?
        .with("eval", &cfg.evaluation())
}

/// The key of the base model's evaluation: the base (and through it the pool) and the `eval`
/// section.
pub fn base_eval_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("eval", &cfg.evaluation())
}

/// The evaluation instances of `env`: `episodes` seeds per scale from the env's own stream.
pub fn eval_tasks(suite: &Suite, env: &EnvId, key: &EvalConfig) -> Result<Vec<Task>> {
    eval_tasks_at(suite, env, key, HarnessLevel::H4)
}

/// [`eval_tasks`]'s instances (the same seeds and scales) played at `harness`.
pub fn eval_tasks_at(
    suite: &Suite,
    env: &EnvId,
    key: &EvalConfig,
    harness: HarnessLevel,
) -> Result<Vec<Task>> {
    let spec = &specs_of(suite, std::slice::from_ref(env))?[0];
    let mut tasks = Vec::with_capacity(key.episodes as usize * key.scales.len());
    for (k, scale) in key.scales.iter().enumerate() {
        let mut rng = Rng::derive(0x4556_414c ^ env.stable_hash() ^ key.instances, k as u64);
        for _ in 0..key.episodes {
            tasks.push(Task {
                env: env.clone(),
                seed: rng.next_u64() >> 1,
                harness,
                scale: scale.for_spec(spec),
            });
        }
    }
    Ok(tasks)
}

/// Success of one model on every evaluated environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Per environment, its success rate at each evaluated scale (in `EvalConfig::scales` order).
    pub per_env: BTreeMap<EnvId, Vec<f32>>,
}

impl Evaluation {
    /// Per environment, success averaged over scales.
    pub fn means(&self) -> BTreeMap<EnvId, f32> {
        self.per_env
            .iter()
            .map(|(e, v)| (e.clone(), v.iter().sum::<f32>() / v.len().max(1) as f32))
            .collect()
    }

    /// The paper's four columns: mean over single-/multi-turn envs of the pool (ID) and of the
    /// held-out set (OOD).
    pub fn splits(&self, suite: &Suite) -> SplitScores {
        let means = self.means();
        let col = |turn: Turn, split: Split| -> Option<f32> {
            let v: Vec<f32> = means
                .iter()
                .filter(|(e, _)| {
                    suite
                        .spec(e)
                        .is_some_and(|s| s.turn == turn && s.split == split)
                })
                .map(|(_, x)| *x)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32)
        };
        SplitScores {
            st_id: col(Turn::Single, Split::Pool),
            mt_id: col(Turn::Multi, Split::Pool),
            st_ood: col(Turn::Single, Split::Ood),
            mt_ood: col(Turn::Multi, Split::Ood),
        }
    }
}

/// Evaluate `model` on `envs` (at H4).
pub fn evaluate(
    key: &EvalConfig,
    suite: &Suite,
    envs: &[EnvId],
    model: &PolicyModel,
) -> Result<Evaluation> {
    evaluate_at(key, suite, envs, model, HarnessLevel::H4)
}

/// Evaluate `model` on `envs`, the same instances as [`evaluate`] played at `harness`.
pub fn evaluate_at(
    key: &EvalConfig,
    suite: &Suite,
    envs: &[EnvId],
    model: &PolicyModel,
    harness: HarnessLevel,
) -> Result<Evaluation> {
    let mut tasks = Vec::new();
    for e in envs {
        tasks.extend(eval_tasks_at(suite, e, key, harness)?);
    }
    let outcomes = play_greedy(model, suite, &tasks)?;
    let per_scale = key.episodes as usize;
    let mut per_env = BTreeMap::new();
    for (e, chunk) in envs
        .iter()
        .zip(outcomes.chunks(per_scale * key.scales.len()))
    {
        let rates: Vec<f32> = chunk
            .chunks(per_scale)
            .map(|c| c.iter().filter(|o| o.success).count() as f32 / c.len().max(1) as f32)
            .collect();
        per_env.insert(e.clone(), rates);
    }
    Ok(Evaluation { per_env })
}

/// The constant-answer baseline of every single-turn environment among `envs` (mean over
/// the evaluated scales).
pub fn constant_baselines(
    key: &EvalConfig,
    suite: &Suite,
    envs: &[EnvId],
) -> Result<BTreeMap<EnvId, f32>> {
    let mut out = BTreeMap::new();
    for e in envs {
        if suite.spec(e).is_none_or(|s| s.turn != Turn::Single) {
            continue;
        }
        let tasks = eval_tasks(suite, e, key)?;
        let mut rates = Vec::new();
        for chunk in tasks.chunks(key.episodes as usize) {
            if let Some(r) = constant_answer_baseline(suite, chunk)? {
                rates.push(r);
            }
        }
        if !rates.is_empty() {
            out.insert(e.clone(), rates.iter().sum::<f32>() / rates.len() as f32);
        }
    }
    Ok(out)
}
