//! Stages `preconditions/…`: what the testbed lets the paper's mechanisms do, measured
//! before any arm trains.
//!
//! - `base-by-harness`: the base's greedy success on the pool at each harness level H0–H4
//!   (the arms' evaluation instances). A harness that hands over the answer shows as near
//!   perfect success at H0 whatever the base can see.
//! - `matrix/base`, `matrix/probeNN`: the transfer matrix. Sources are drawn from the pool,
//!   evenly from `transfer.strata` strata of their mean profile overlap with the rest of the
//!   pool; each is fine-tuned alone at H4 ([`super::transfer::fine_tune`]) and evaluated on
//!   every pool and held-out environment. Transfer to a target is the change of its success
//!   over the base's on the same instances.
//! - `harness/probeNN`: the first `transfer.harness_probes` sources fine-tuned again with the
//!   same steps and PPO stream, at H0–H2 only, and evaluated at H4 on themselves: does
//!   training with the scaffold teach what bare vision needs?

use std::collections::BTreeMap;
use std::sync::Arc;

use envdist_core::{EnvId, GradientSet, HarnessLevel, ProfileSet, Rng};
use envdist_envs::Suite;
use envdist_trainer::PolicyModel;
use serde::{Deserialize, Serialize};

use super::eval::{evaluate, evaluate_at};
use super::transfer::{Harness, eval_config, fine_tune};
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::model::PreconditionRuns;
use crate::observer::Observer;

/// The code these stages run.
const CODE: [Crate; 4] = [Crate::Core, Crate::Envs, Crate::Curriculum, Crate::Trainer];

/// The key of the base's evaluation at every harness level: the base and the `eval` section.
pub fn by_harness_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("eval", &cfg.evaluation())?
        .with("levels", &HarnessLevel::ALL)
}

/// The base's success (mean over scales) on every environment of `pool` at each level.
pub fn base_by_harness(
    cfg: &ExperimentConfig,
    suite: &Suite,
    pool: &[EnvId],
    base: &PolicyModel,
) -> Result<BTreeMap<HarnessLevel, BTreeMap<EnvId, f32>>> {
    HarnessLevel::ALL
        .iter()
        .map(|&h| {
            Ok((
                h,
                evaluate_at(&cfg.evaluation(), suite, pool, base, h)?.means(),
            ))
        })
        .collect()
}

/// One drawn source of the transfer matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The environment.
    pub env: EnvId,
    /// Its stratum, 0 = the least overlap with the rest of the pool.
    pub stratum: usize,
}

/// Mean profile overlap (meta-ability coverage cosine) of each pool env with the others.
fn mean_overlap(pool: &[EnvId], profiles: &ProfileSet) -> Vec<(EnvId, f32)> {
    let of = |e: &EnvId| profiles.profiles.iter().find(|p| &p.env == e);
    pool.iter()
        .map(|a| {
            let Some(pa) = of(a) else {
                return (a.clone(), 0.0);
            };
            let others: Vec<f32> = pool
                .iter()
                .filter(|b| *b != a)
                .filter_map(of)
                .map(|pb| envdist_profiling::pipeline::coverage_cosine(pa, pb))
                .collect();
            let mean = others.iter().sum::<f32>() / others.len().max(1) as f32;
            (a.clone(), mean)
        })
        .collect()
}

/// `n` sources from `pool`: the pool sorted by mean profile overlap (ties by id) and cut into
/// `strata` equal runs; each run shuffled with a stream of `seed`; then drawn in turn, one
/// per stratum, so that any prefix (the harness probes') spreads over the strata.
pub fn sources(
    pool: &[EnvId],
    profiles: &ProfileSet,
    n: usize,
    strata: usize,
    seed: u64,
) -> Vec<Source> {
    let mut ranked = mean_overlap(pool, profiles);
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let strata = strata.clamp(1, ranked.len().max(1));
    let mut rng = Rng::derive(seed, 0x4d41_5452);
    let mut runs: Vec<Vec<EnvId>> = (0..strata)
        .map(|k| {
            let (lo, hi) = (k * ranked.len() / strata, (k + 1) * ranked.len() / strata);
            let mut run: Vec<EnvId> = ranked[lo..hi].iter().map(|(e, _)| e.clone()).collect();
            rng.shuffle(&mut run);
            run.reverse();
            run
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    while out.len() < n && runs.iter().any(|r| !r.is_empty()) {
        for (stratum, run) in runs.iter_mut().enumerate() {
            if out.len() < n
                && let Some(env) = run.pop()
            {
                out.push(Source { env, stratum });
            }
        }
    }
    out
}

/// The key of one probe: the base, the arms' RL settings, the `transfer` section's steps and
/// evaluation, the source, the targets and the harness it trains at.
pub fn probe_key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    source: &EnvId,
    targets: &[EnvId],
    harness: Harness,
) -> Result<StageKey> {
    StageKey::new(code, &CODE)?
        .after("base", base)?
        .with("seed", &cfg.seed)?
        .with("model", &cfg.model)?
        .with("rl", &cfg.rl)?
        .with("steps", &cfg.transfer.steps)?
        .with("eval", &eval_config(cfg))?
        .with("source", source)?
        .with("targets", &targets)?
        .with("scaffolded", &(harness == Harness::Scaffolded))
}

/// A probe's output: success on each target after fine-tuning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeOutput {
    /// In target order.
    pub after: Vec<f32>,
    /// Training success of the last update that ended episodes.
    pub final_train_success: Option<f32>,
}

/// The base's success on `targets` under the probes' evaluation.
pub fn run_matrix_base(
    cfg: &ExperimentConfig,
    suite: &Suite,
    targets: &[EnvId],
    base: &PolicyModel,
) -> Result<Vec<f32>> {
    let means = evaluate(&eval_config(cfg), suite, targets, base)?.means();
    Ok(targets.iter().map(|e| means[e]).collect())
}

/// Fine-tune `base` on `source` at `harness` and evaluate it at H4 on `targets`.
pub fn run_probe(
    cfg: &ExperimentConfig,
    suite: &Arc<Suite>,
    base: &PolicyModel,
    source: &EnvId,
    targets: &[EnvId],
    harness: Harness,
    observer: &dyn Observer,
) -> Result<ProbeOutput> {
    let (policy, last) = fine_tune(cfg, &cfg.transfer, suite, base, source, harness, observer)?;
    let means = evaluate(&eval_config(cfg), suite, targets, &policy)?.means();
    Ok(ProbeOutput {
        after: targets.iter().map(|e| means[e]).collect(),
        final_train_success: last,
    })
}

/// The profile overlap and gradient cosine of `source` with each target (`None` where
/// unknown).
pub fn similarities(
    source: &EnvId,
    targets: &[EnvId],
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> (Vec<Option<f32>>, Vec<Option<f32>>) {
    let of = |e: &EnvId| profiles.profiles.iter().find(|p| &p.env == e);
    let zero = grads.zero_rows();
    let known = |e: &EnvId| grads.index_of(e).filter(|_| !zero.contains(e));
    targets
        .iter()
        .map(|t| {
            let overlap = of(source)
                .zip(of(t))
                .map(|(a, b)| envdist_profiling::pipeline::coverage_cosine(a, b));
            let cosine = known(source).zip(known(t)).map(|(i, j)| grads.cosine(i, j));
            (overlap, cosine)
        })
        .unzip()
}

/// The transfer response of every pool environment to the first `probes` matrix probes (the
/// first drawn, spread over the strata): row `e`, column `p` is the transfer of
/// probe `p` to `e` (points) minus probe `p`'s mean transfer over the pool, the source's own
/// entry left at 0 (its own gain is not transfer). Two environments whose rows point the same
/// way rise and fall with the same fine-tunes; opposite rows are what one fine-tune helps and
/// the other's hurts: `aes-transfer`'s conflict term is the negative cosine of these rows,
/// in place of the base's gradients. An environment no probe moved at all (every transfer
/// exactly 0, as an env the base never solves and no fine-tune does) gets a zero row: its
/// conflict is unknown, as a zero gradient's is. `None` without probes.
pub fn transfer_response(
    runs: &PreconditionRuns,
    pool: &[EnvId],
    probes: usize,
) -> Option<GradientSet> {
    let matrix = &runs.matrix[..probes.min(runs.matrix.len())];
    let probes = matrix.len();
    if probes == 0 {
        return None;
    }
    let index: Vec<Option<usize>> = pool
        .iter()
        .map(|e| runs.targets.iter().position(|t| t == e))
        .collect();
    // transfer[p][e], 0 for the source itself.
    let transfer: Vec<Vec<f64>> = matrix
        .iter()
        .map(|m| {
            pool.iter()
                .zip(&index)
                .map(|(e, i)| match i {
                    Some(i) if *e != m.source => {
                        100.0 * (m.after[*i] as f64 - runs.base[*i] as f64)
                    }
                    _ => 0.0,
                })
                .collect()
        })
        .collect();
    let means: Vec<f64> = transfer
        .iter()
        .zip(matrix)
        .map(|(row, m)| {
            let n = pool.iter().filter(|e| **e != m.source).count().max(1);
            row.iter().sum::<f64>() / n as f64
        })
        .collect();
    let mut values = Vec::with_capacity(pool.len() * probes);
    for (k, e) in pool.iter().enumerate() {
        let moved = transfer.iter().any(|row| row[k] != 0.0);
        for (p, m) in matrix.iter().enumerate() {
            let v = if !moved || *e == m.source {
                0.0
            } else {
                transfer[p][k] - means[p]
            };
            values.push(v as f32);
        }
    }
    Some(GradientSet {
        env_ids: pool.to_vec(),
        dim: probes,
        values,
        projection_seed: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::AbilityProfile;

    fn profiles(envs: &[EnvId]) -> ProfileSet {
        // Env i covers ability i % 3: the first third overlaps a third of the pool, and so on.
        ProfileSet {
            schema_version: envdist_core::PROFILE_SCHEMA_VERSION,
            abilities: vec!["a".into(), "b".into(), "c".into()],
            meta_abilities: vec![],
            profiles: envs
                .iter()
                .enumerate()
                .map(|(i, e)| AbilityProfile {
                    env: e.clone(),
                    coverage: [(["a", "b", "c"][i % 3].to_string(), 1.0)].into(),
                    atomic_counts: Default::default(),
                    transitions: vec![],
                    trajectories: 1,
                })
                .collect(),
        }
    }

    #[test]
    fn sources_spread_over_the_strata_and_repeat_no_env() {
        let pool: Vec<EnvId> = (0..20).map(|i| EnvId::new(format!("f{i}/v"))).collect();
        let p = profiles(&pool);
        let s = sources(&pool, &p, 12, 4, 7);
        assert_eq!(s.len(), 12);
        // One per stratum in turn.
        let strata: Vec<usize> = s.iter().map(|x| x.stratum).collect();
        assert_eq!(&strata[..4], &[0, 1, 2, 3]);
        assert_eq!(&strata[4..8], &[0, 1, 2, 3]);
        let mut envs: Vec<&EnvId> = s.iter().map(|x| &x.env).collect();
        envs.sort();
        envs.dedup();
        assert_eq!(envs.len(), 12);
        // Asking for more than the pool gives the pool once.
        assert_eq!(sources(&pool, &p, 50, 4, 7).len(), 20);
        // The seed changes the draw, not its spread.
        assert_ne!(sources(&pool, &p, 12, 4, 8), s);
    }

    #[test]
    fn the_transfer_response_centres_each_probe_and_zeroes_unmoved_envs() {
        let pool: Vec<EnvId> = ["a/x", "b/x", "c/x", "d/x"].map(EnvId::new).to_vec();
        let probe = |source: &str, after: [f32; 4]| crate::model::MatrixProbe {
            source: EnvId::new(source),
            stratum: 0,
            after: after.to_vec(),
            profile_overlap: vec![None; 4],
            gradient_cosine: vec![None; 4],
            final_train_success: None,
        };
        // Base 0.5 everywhere but d (never solved, never moved).
        let runs = PreconditionRuns {
            targets: pool.clone(),
            base: vec![0.5, 0.5, 0.5, 0.0],
            matrix: vec![
                // a's fine-tune: itself up, b up 10 points, c down 10.
                probe("a/x", [0.9, 0.6, 0.4, 0.0]),
                // b's: a up, c down.
                probe("b/x", [0.6, 0.9, 0.4, 0.0]),
            ],
            ..PreconditionRuns::default()
        };
        // The first probe alone: a's column only.
        let first = transfer_response(&runs, &pool, 1).unwrap();
        assert_eq!(first.dim, 1);
        assert!((first.values[1] - 10.0).abs() < 1e-4 && (first.values[2] + 10.0).abs() < 1e-4);
        assert!(transfer_response(&runs, &pool, 0).is_none());
        let g = transfer_response(&runs, &pool, 9).unwrap();
        assert_eq!((g.dim, g.env_ids.len()), (2, 4));
        let row = |i: usize| &g.values[i * 2..i * 2 + 2];
        // Probe a's transfers to b, c, d are +10, -10, 0: mean 0, so unchanged; its own 0.
        assert_eq!(row(0)[0], 0.0);
        assert!((row(1)[0] - 10.0).abs() < 1e-4 && (row(2)[0] + 10.0).abs() < 1e-4);
        // d moved with no probe: a zero row (unknown).
        assert_eq!(row(3), &[0.0, 0.0]);
        // a and b rise together with the other's probe; c falls with both: c conflicts.
        assert!(
            g.cosine(0, 2) < -0.5 && g.cosine(1, 2) < -0.5,
            "{:?}",
            g.values
        );
    }
}
