//! Stages `transfer/base` and `transfer/<source>`: measured transfer, the check of AES's
//! conflict term. For each designed conflict pair (A, A') of the pool, the base is fine-tuned
//! on A alone (H4, scale uniform, the arms' RL settings, `transfer.steps` env steps) and
//! evaluated on four targets: A itself, its twin A', a same-family non-twin B of A, and an
//! environment C of another family. The transfer to X is the change of X's success over the
//! base's on the same instances. The analysis then asks whether twins interfere (their
//! transfer below the same-family one) and how well the base's gradient cosines predict the
//! measured transfer (rank correlation over every pair).

use std::sync::Arc;

use envdist_core::{EnvFactory, EnvId, Rng};
use envdist_envs::Suite;
use envdist_trainer::{PolicyModel, RunOptions, TrainConfig, Trainer};

use super::arms::uniform_h4;
use super::eval::evaluate;
use super::pool::PoolStage;
use super::specs_of;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::{EvalConfig, ExperimentConfig, TransferConfig};
use crate::error::Result;
use crate::model::{Probe, ProbeRun, Relation};
use crate::observer::Observer;

/// The probes of a pool: one per designed conflict pair (its first member the source), up to
/// `max`. The same-family target is the source family's first other variant (by id) that is
/// not the twin; the other-family target is drawn with a stream seeded by `seed`.
pub fn probes(suite: &Suite, pool: &PoolStage, max: usize, seed: u64) -> Vec<Probe> {
    let family = |e: &EnvId| suite.spec(e).map(|s| s.family.clone()).unwrap_or_default();
    let mut rng = Rng::derive(seed, 0x5052_4f42);
    pool.conflict_pairs
        .iter()
        .take(max)
        .filter_map(|(a, twin)| {
            let fam = family(a);
            let same = pool
                .pool
                .iter()
                .find(|e| *e != a && *e != twin && family(e) == fam)?
                .clone();
            let others: Vec<&EnvId> = pool.pool.iter().filter(|e| family(e) != fam).collect();
            let other = (*rng.choose(&others)?).clone();
            Some(Probe {
                source: a.clone(),
                targets: vec![
                    (a.clone(), Relation::Itself),
                    (twin.clone(), Relation::Twin),
                    (same, Relation::SameFamily),
                    (other, Relation::OtherFamily),
                ],
            })
        })
        .collect()
}

/// The evaluation of the transfer targets: more instances than the arms', the same seeds
/// for the base and for every fine-tune.
pub fn eval_config(cfg: &ExperimentConfig) -> EvalConfig {
    EvalConfig {
        episodes: cfg.transfer.eval_episodes,
        ..cfg.eval.clone()
    }
}

/// Every target of `probes`, once each, sorted.
pub fn targets(probes: &[Probe]) -> Vec<EnvId> {
    let mut t: Vec<EnvId> = probes
        .iter()
        .flat_map(|p| p.targets.iter().map(|(e, _)| e.clone()))
        .collect();
    t.sort();
    t.dedup();
    t
}

/// The code a transfer stage runs.
const CODE: [Crate; 4] = [Crate::Core, Crate::Envs, Crate::Curriculum, Crate::Trainer];

/// The key of the base's evaluation on the targets: the base, the probes and the evaluation.
pub fn base_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    probes: &[Probe],
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("eval", &eval_config(cfg))?
        .with("targets", &targets(probes))
}

/// The key of one fine-tune: the base, its probe, the arms' RL preset and settings and the
/// `transfer` section.
pub fn probe_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    probe: &Probe,
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("seed", &cfg.seed)?
        .with("model", &cfg.model)?
        .with("rl", &cfg.rl)?
        .with("transfer", &cfg.transfer)?
        .with("eval", &eval_config(cfg))?
        .with("probe", probe)
}

/// Fine-tune `base` on the probe's source and evaluate it on its targets.
pub fn run_probe(
    cfg: &ExperimentConfig,
    t: &TransferConfig,
    suite: &Arc<Suite>,
    base: &PolicyModel,
    probe: &Probe,
    observer: &dyn Observer,
) -> Result<ProbeRun> {
    let stream = cfg.seed ^ probe.source.stable_hash() ^ 0x5452_4e53;
    let specs = specs_of(suite, std::slice::from_ref(&probe.source))?;
    let mut sampler = uniform_h4(false).build(&specs, stream)?;
    let factory: Arc<dyn EnvFactory> = suite.clone();
    let mut trainer = Trainer::from_policy(
        TrainConfig {
            total_env_steps: t.steps,
            ..cfg.train_config(stream)
        },
        factory,
        base,
    )?;
    let progress = observer.progress(&format!("transfer from {}", probe.source), t.steps);
    let mut last = None;
    trainer.run(sampler.as_mut(), &RunOptions::default(), &mut |s| {
        progress.set(s.env_steps);
        if s.success_rate.is_some() {
            last = s.success_rate;
        }
    })?;
    progress.finish();
    let envs: Vec<EnvId> = probe.targets.iter().map(|(e, _)| e.clone()).collect();
    let scores = evaluate(&eval_config(cfg), suite, &envs, &trainer.policy())?.means();
    Ok(ProbeRun {
        after: envs.iter().map(|e| scores[e]).collect(),
        probe: probe.clone(),
        final_train_success: last,
    })
}
