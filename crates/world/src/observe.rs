//! What an experimenter sees of a world: profiles from a noisy annotator, gradients sampled
//! from episodes, and transfer measured by fine-tuning on one environment and evaluating on
//! a finite number of instances. Each is drawn from streams keyed by the environment's id, so
//! one environment's observation does not depend on the others, and every draw is made
//! whatever the noise knobs say (cells of a sweep are paired by seed).

use std::collections::BTreeMap;

use envdist_core::{AbilityProfile, GradientSet, HarnessLevel, ProfileSet, Rng};

use crate::learner::{Learner, Practice};
use crate::world::World;

const ANNOTATOR_STREAM: u64 = 0x414e_4e4f;
const GRADIENT_STREAM: u64 = 0x4752_4144;
const IRRELEVANT_STREAM: u64 = 0x4952_5245;

/// The profiles an annotator with the world's `annotator_noise` writes: each true ability
/// missed with probability `noise`, each other ability invented with probability `noise *
/// m / (K - m)` (`m` true abilities of `K`: on average `noise` invented per true one). Every
/// tag weighs 1.
pub fn annotate(world: &World, seed: u64) -> ProfileSet {
    let c = world.config();
    let k = world.ability_names().len();
    let profiles = world
        .envs()
        .iter()
        .zip(world.specs())
        .map(|(env, spec)| {
            let mut rng = Rng::derive(seed ^ ANNOTATOR_STREAM, spec.id.stable_hash());
            let m = env.abilities.len();
            let miss = c.annotator_noise.min(1.0);
            let invent = (c.annotator_noise * m as f32 / (k - m).max(1) as f32).min(1.0);
            let mut coverage = BTreeMap::new();
            for a in 0..k {
                let u = rng.next_f32();
                let true_tag = env.abilities.iter().any(|(b, _)| *b == a);
                if (true_tag && u >= miss) || (!true_tag && u < invent) {
                    coverage.insert(world.ability_names()[a].clone(), 1.0);
                }
            }
            AbilityProfile::of_coverage(spec.id.clone(), coverage)
        })
        .collect();
    ProfileSet::of_abilities(world.ability_names().to_vec(), profiles)
}

/// One environment's gradient as observed from `episodes` episodes: zero when none or all
/// of them succeed (a mean baseline leaves no signal), else the exact gradient plus noise of
/// norm `gradient_noise * sqrt(p (1 - p)) / 2 * sqrt(gradient_episodes / episodes)`.
fn observe_row(
    world: &World,
    learner: &Learner,
    e: usize,
    episodes: u32,
    rng: &mut Rng,
) -> Vec<f32> {
    let c = world.config();
    let p = learner.h4_success(world, e);
    let solved = (0..episodes).filter(|_| rng.chance(p)).count() as u32;
    let scale = c.gradient_noise
        * 0.5
        * (p * (1.0 - p)).sqrt()
        * (c.gradient_episodes as f32 / episodes as f32).sqrt()
        / (world.dim() as f32).sqrt();
    let mut row = learner.gradient(world, e);
    if c.gradient_relevance < 1.0 {
        // The environment's own fixed direction, scaled to the exact gradient's norm: drawn
        // from a stream of the world and its id alone, so every draw of the gradients holds
        // the same one.
        let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
        let mut fixed = Rng::derive(
            world.seed() ^ IRRELEVANT_STREAM,
            world.specs()[e].id.stable_hash(),
        );
        let dir: Vec<f32> = (0..row.len()).map(|_| fixed.normal()).collect();
        let dir_norm = dir
            .iter()
            .map(|v| v * v)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        let (a, b) = (
            c.gradient_relevance.sqrt(),
            (1.0 - c.gradient_relevance).sqrt(),
        );
        for (v, d) in row.iter_mut().zip(&dir) {
            *v = a * *v + b * norm * d / dir_norm;
        }
    }
    for v in row.iter_mut() {
        *v += scale * rng.normal();
    }
    if solved == 0 || solved == episodes {
        row.iter_mut().for_each(|v| *v = 0.0);
    }
    row
}

fn stream(world: &World, seed: u64, e: usize) -> Rng {
    Rng::derive(seed ^ GRADIENT_STREAM, world.specs()[e].id.stable_hash())
}

/// Every environment's gradient at `learner`, observed from the world's
/// `gradient_episodes` episodes each, as core's [`GradientSet`] (no projection: the rows are
/// over the learner's parameters).
pub fn observe_gradients(world: &World, learner: &Learner, seed: u64) -> GradientSet {
    let n = world.config().gradient_episodes;
    let mut values = Vec::with_capacity(world.len() * world.dim());
    for e in 0..world.len() {
        values.extend(observe_row(
            world,
            learner,
            e,
            n,
            &mut stream(world, seed, e),
        ));
    }
    GradientSet {
        env_ids: world.ids(),
        dim: world.dim(),
        values,
        projection_seed: None,
    }
}

/// The split-half reliability of the observed gradients, as the study measures its own:
/// each environment's episodes in two halves, the cosine of the two halves' gradients, its
/// mean over the environments where both halves have signal, and that mean's Spearman-Brown
/// correction to the full count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplitHalf {
    /// Mean cosine of the two halves' gradients.
    pub cosine: f32,
    /// `2 r / (1 + r)` of that mean: the reliability of a gradient from all the episodes.
    pub reliability: f32,
    /// Environments where both halves have signal.
    pub with_signal: usize,
}

/// [`SplitHalf`] of the gradients [`observe_gradients`] would observe at `learner`.
pub fn split_half(world: &World, learner: &Learner, seed: u64) -> SplitHalf {
    let half = world.config().gradient_episodes / 2;
    let (mut sum, mut count) = (0.0f64, 0usize);
    for e in 0..world.len() {
        let mut rng = stream(world, seed ^ 0x4841_4c46, e);
        let a = observe_row(world, learner, e, half, &mut rng);
        let b = observe_row(world, learner, e, half, &mut rng);
        if a.iter().any(|v| *v != 0.0) && b.iter().any(|v| *v != 0.0) {
            sum += envdist_core::cosine(&a, &b) as f64;
            count += 1;
        }
    }
    let cosine = if count == 0 {
        0.0
    } else {
        (sum / count as f64) as f32
    };
    SplitHalf {
        cosine,
        reliability: 2.0 * cosine / (1.0 + cosine),
        with_signal: count,
    }
}

/// Where a probe trains its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProbeLevels {
    /// At H4, as evaluation plays.
    H4,
    /// At H0, H1 and H2 in equal shares, never at H4 (the record's harness probes).
    Scaffolded,
}

/// How a probe fine-tunes the base on one environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// Episodes of the fine-tune.
    pub episodes: f32,
    /// Where it trains.
    pub levels: ProbeLevels,
    /// Rounds of the deterministic practice ([`Learner::practise`]).
    pub steps: u32,
}

impl Probe {
    /// `base` fine-tuned on `source` alone.
    pub fn run(&self, world: &World, base: &Learner, source: usize) -> Learner {
        let levels: &[HarnessLevel] = match self.levels {
            ProbeLevels::H4 => &[HarnessLevel::H4],
            ProbeLevels::Scaffolded => &[HarnessLevel::H0, HarnessLevel::H1, HarnessLevel::H2],
        };
        let mix: Vec<Practice> = levels
            .iter()
            .map(|&level| Practice {
                env: source,
                level,
                weight: 1.0,
            })
            .collect();
        let mut l = base.clone();
        l.practise(world, &mix, self.episodes, self.steps);
        l
    }

    /// The true transfer of a fine-tune on each of `sources` to every environment: one row
    /// per source, H4 success after minus before, in points.
    pub fn transfer(&self, world: &World, base: &Learner, sources: &[usize]) -> Vec<Vec<f32>> {
        transfers(sources, &base.successes(world), |s| {
            self.run(world, base, s).successes(world)
        })
    }
}

/// One row per source: `after(source)` minus `before`, in points.
fn transfers(
    sources: &[usize],
    before: &[f32],
    mut after: impl FnMut(usize) -> Vec<f32>,
) -> Vec<Vec<f32>> {
    sources
        .iter()
        .map(|&s| {
            after(s)
                .iter()
                .zip(before)
                .map(|(a, b)| 100.0 * (a - b))
                .collect()
        })
        .collect()
}

/// Success rates as measured on `instances` evaluation episodes each (binomial draws), in
/// the same order.
pub fn measured(successes: &[f32], instances: u32, rng: &mut Rng) -> Vec<f32> {
    successes
        .iter()
        .map(|&p| (0..instances).filter(|_| rng.chance(p)).count() as f32 / instances as f32)
        .collect()
}

/// [`Probe::transfer`] as a record measures it: the base's success and every fine-tune's
/// measured on `instances` episodes per environment (the base once, shared by every probe),
/// so each transfer carries the evaluation's binomial noise.
pub fn measured_transfer(
    world: &World,
    base: &Learner,
    probe: &Probe,
    sources: &[usize],
    instances: u32,
    seed: u64,
) -> Vec<Vec<f32>> {
    let mut rng = Rng::derive(seed, 0x4d45_4153);
    let before = measured(&base.successes(world), instances, &mut rng);
    transfers(sources, &before, |s| {
        measured(
            &probe.run(world, base, s).successes(world),
            instances,
            &mut rng,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorldConfig;
    use envdist_core::Validate;

    fn world(c: WorldConfig) -> World {
        World::generate(&c.checked().unwrap(), 2)
    }

    #[test]
    fn a_perfect_annotator_writes_the_true_sets_and_noise_changes_them() {
        let w = world(WorldConfig {
            annotator_noise: 0.0,
            ..Default::default()
        });
        let p = annotate(&w, 1);
        for (prof, env) in p.profiles.iter().zip(w.envs()) {
            let truth: Vec<&String> = env
                .abilities
                .iter()
                .map(|(a, _)| &w.ability_names()[*a])
                .collect();
            assert_eq!(prof.coverage.len(), truth.len());
            assert!(truth.iter().all(|a| prof.coverage.contains_key(*a)));
        }
        let noisy = annotate(
            &world(WorldConfig {
                annotator_noise: 0.5,
                ..Default::default()
            }),
            1,
        );
        assert_ne!(noisy, p);
        p.validate(std::path::Path::new("profiles")).unwrap();
    }

    #[test]
    fn noise_lowers_the_split_half_reliability() {
        let base = |noise| {
            let w = world(WorldConfig {
                gradient_noise: noise,
                ..Default::default()
            });
            split_half(&w, &Learner::base(&w), 4)
        };
        let (clean, noisy) = (base(0.0), base(2.0));
        assert!(clean.reliability > 0.99, "{clean:?}");
        assert!(noisy.reliability < clean.reliability - 0.2, "{noisy:?}");
        assert!(clean.with_signal > 0);
    }

    #[test]
    fn observed_gradients_are_exact_without_noise_and_zero_without_signal() {
        let w = world(WorldConfig {
            gradient_noise: 0.0,
            base_logit: -6.0,
            family_spread: 3.0,
            ..Default::default()
        });
        let base = Learner::base(&w);
        let g = observe_gradients(&w, &base, 3);
        let zero = g.zero_rows().len();
        assert!(zero > 0 && zero < w.len(), "{zero}");
        for e in 0..w.len() {
            if g.row(e).iter().any(|v| *v != 0.0) {
                assert_eq!(g.row(e), base.gradient(&w, e).as_slice());
            }
        }
    }
}
