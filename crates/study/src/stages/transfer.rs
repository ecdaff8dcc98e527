//! Stages `transfer/base` and `transfer/<source>`: measured transfer, the check of AES's
//! conflict term. For each designed conflict pair (A, A') of the pool, the base is fine-tuned
//! on A alone (H4, scale uniform, the arms' RL settings, `transfer.steps` env steps) and
//! evaluated on four targets: A itself, its twin A', a same-family non-twin B of A, and an
//! environment C of another family. The transfer to X is the change of X's success over the
//! base's on the same instances. The analysis then asks whether twins interfere (their
//! transfer below the same-family one) and how well the base's gradient cosines predict the
//! measured transfer (rank correlation over every pair).

use std::sync::Arc;

use envdist_core::{
    EnvFactory, EnvId, EpisodeOutcome, HarnessLevel, InvalidValue, OutcomeError, Rng,
    SamplerStateError, Task, TaskSampler,
};
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
        instances: crate::protocol::PROBE_SALT,
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

/// The key of the base's evaluation on the probes' targets: the base, the probes and the
/// evaluation.
pub fn base_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    probes: &[Probe],
) -> Result<StageKey> {
    targets_base_key(cfg, code, base, &targets(probes))
}

/// The key of the base's evaluation on `targets` under the probes' evaluation (the conflict
/// probes' targets here, the transfer matrix's in the preconditions).
pub fn targets_base_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    targets: &[EnvId],
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("eval", &eval_config(cfg))?
        .with("targets", &targets)
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
    let (policy, last) = fine_tune(cfg, t, suite, base, &probe.source, Harness::H4, observer)?;
    let envs: Vec<EnvId> = probe.targets.iter().map(|(e, _)| e.clone()).collect();
    let scores = evaluate(&eval_config(cfg), suite, &envs, &policy)?.means();
    Ok(ProbeRun {
        after: envs.iter().map(|e| scores[e]).collect(),
        probe: probe.clone(),
        final_train_success: last,
    })
}

/// The harness levels a single-environment fine-tune trains at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// Bare vision, as the arms without a curriculum and the evaluation.
    H4,
    /// The scaffolded levels only: H0, H1 and H2, one third of the episodes each.
    Scaffolded,
}

/// Fine-tune `base` on `source` alone for `t.steps` env steps (the arms' RL settings, scale
/// uniform over the env's range, the harness as `harness` says); the tuned policy and the
/// training success of its last update that ended episodes. The PPO stream depends on the
/// master seed and the source only, so an H4 and a scaffolded fine-tune of one source are
/// paired.
pub fn fine_tune(
    cfg: &ExperimentConfig,
    t: &TransferConfig,
    suite: &Arc<Suite>,
    base: &PolicyModel,
    source: &EnvId,
    harness: Harness,
    observer: &dyn Observer,
) -> Result<(PolicyModel, Option<f32>)> {
    let stream = cfg.seed ^ source.stable_hash() ^ 0x5452_4e53;
    let specs = specs_of(suite, std::slice::from_ref(source))?;
    let h4 = uniform_h4(false).build(&specs, stream)?;
    let mut sampler: Box<dyn TaskSampler> = match harness {
        Harness::H4 => h4,
        Harness::Scaffolded => Box::new(Scaffolded(h4)),
    };
    let factory: Arc<dyn EnvFactory> = suite.clone();
    let mut trainer = Trainer::from_policy(
        TrainConfig {
            total_env_steps: t.steps,
            ..cfg.train_config(stream)
        },
        factory,
        base,
    )?;
    let what = match harness {
        Harness::H4 => "transfer from",
        Harness::Scaffolded => "H0-H2 fine-tune on",
    };
    let progress = observer.progress(&format!("{what} {source}"), t.steps);
    let mut last = None;
    trainer.run(sampler.as_mut(), &RunOptions::default(), &mut |s| {
        progress.set(s.env_steps);
        if s.success_rate.is_some() {
            last = s.success_rate;
        }
    })?;
    progress.finish();
    Ok((trainer.policy(), last))
}

/// The scaffolded levels, in the order a task's seed picks them.
const SCAFFOLDED: [HarnessLevel; 3] = [HarnessLevel::H0, HarnessLevel::H1, HarnessLevel::H2];

/// An H4 sampler whose tasks are played at H0, H1 or H2 instead, picked by the task's seed
/// (so the choice needs no state of its own and resumes with the inner sampler's). Outcomes
/// reach the inner sampler as the H4 tasks it issued.
struct Scaffolded(Box<dyn TaskSampler>);

impl Scaffolded {
    fn as_issued(outcome: &EpisodeOutcome) -> EpisodeOutcome {
        let mut o = outcome.clone();
        o.task.harness = HarnessLevel::H4;
        o
    }
}

impl TaskSampler for Scaffolded {
    fn sample(&mut self) -> Task {
        let mut task = self.0.sample();
        task.harness = SCAFFOLDED[(task.seed % SCAFFOLDED.len() as u64) as usize];
        task
    }

    fn check_outcome(&self, outcome: &EpisodeOutcome) -> std::result::Result<(), OutcomeError> {
        if !SCAFFOLDED.contains(&outcome.task.harness) {
            return Err(OutcomeError {
                task: outcome.task.clone(),
                problem: InvalidValue::new(
                    "harness",
                    "one of the levels this sampler plays (H0, H1, H2)",
                    outcome.task.harness,
                ),
            });
        }
        self.0.check_outcome(&Self::as_issued(outcome))
    }

    fn update(&mut self, outcome: &EpisodeOutcome) -> std::result::Result<(), OutcomeError> {
        self.check_outcome(outcome)?;
        self.0.update(&Self::as_issued(outcome))
    }

    fn state(&self) -> serde_json::Value {
        self.0.state()
    }

    fn restore(&mut self, state: &serde_json::Value) -> std::result::Result<(), SamplerStateError> {
        self.0.restore(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaffolded_sampler_plays_h0_to_h2_and_refuses_h4() {
        let suite = Suite::with_canvas(16).unwrap();
        let env = suite.pool_specs()[0].id.clone();
        let specs = specs_of(&suite, std::slice::from_ref(&env)).unwrap();
        let mut s = Scaffolded(uniform_h4(false).build(&specs, 3).unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..60 {
            let task = s.sample();
            assert!(SCAFFOLDED.contains(&task.harness), "{:?}", task.harness);
            seen.insert(task.harness);
            let outcome = EpisodeOutcome {
                task,
                success: true,
                episode_return: 1.0,
                steps: 1,
            };
            s.update(&outcome).unwrap();
        }
        assert_eq!(seen.len(), 3, "all three scaffolded levels: {seen:?}");
        let mut bare = s.sample();
        bare.harness = HarnessLevel::H4;
        let e = s
            .check_outcome(&EpisodeOutcome {
                task: bare,
                success: true,
                episode_return: 1.0,
                steps: 1,
            })
            .unwrap_err();
        assert!(e.to_string().contains("harness"), "{e}");
    }
}
