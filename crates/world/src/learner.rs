//! The learner: parameters the environments' skill vectors read, moved by training.
//!
//! Success of environment `e` at a level and scale is `sigmoid(offset + skill_e · theta -
//! drift_e + scaffold skill below H4)`, where `drift_e = interference * (1 - exp(-U /
//! interference_episodes)) * exp(-P / protection_episodes)`: `U` sums, over the episodes
//! played, the share of `e`'s work each did not do ([`World::overlap`]: none within its
//! family, the share of `e`'s abilities it does not require elsewhere), and `P` counts the
//! episodes played on `e`'s family. Drift takes what training does not use; practising an
//! environment or its family keeps it (training optimises what it plays). One episode at
//! success `p` moves `theta` by `learning_rate * p (1 - p)` along `skill_e`: the expected step
//! of a policy gradient on a binary reward, whatever the episode's outcome. So learning is a
//! function of the tasks played, not of the success draws, and the only randomness of a
//! training run is which tasks its sampler draws (and the draws it reports to the sampler).
//! At a scaffolded level (H0-H3) a share `carry_over` of the step moves `theta` and the rest a
//! skill that helps only while the harness is there.

use envdist_core::{EpisodeOutcome, HarnessLevel, Rng, Task, TaskSampler};

use crate::error::WorldError;
use crate::world::World;

/// The learner's state. Starts at the base (`theta = 0`).
#[derive(Debug, Clone, PartialEq)]
pub struct Learner {
    theta: Vec<f32>,
    scaffold: Vec<f32>,
    played: Vec<f32>,
    unrelated: Vec<f32>,
    practised: Vec<f32>,
}

/// One part of a practice mixture ([`Learner::practise`]): an environment at a level, with
/// its share of the episodes (scales uniform over the environment's range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Practice {
    /// The environment (pool index).
    pub env: usize,
    /// The harness level it is played at.
    pub level: HarnessLevel,
    /// Its weight in the mixture (normalised over the mixture).
    pub weight: f32,
}

/// What a [`Learner::train`] run played.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Training {
    /// Episodes played.
    pub episodes: u64,
    /// Episodes solved.
    pub successes: u64,
    /// Episodes played below H4 (at a scaffolded level).
    pub below_h4: u64,
    /// Episodes the sampler did not train on (played for their score only).
    pub untrained: u64,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Learner {
    /// The base learner of `world`: nothing learnt yet.
    pub fn base(world: &World) -> Self {
        Self {
            theta: vec![0.0; world.dim()],
            scaffold: vec![0.0; world.len()],
            played: vec![0.0; world.len()],
            unrelated: vec![0.0; world.len()],
            practised: vec![0.0; world.len()],
        }
    }

    /// The parameters the skill vectors read.
    pub fn theta(&self) -> &[f32] {
        &self.theta
    }

    /// This learner with other parameters (finite differences, tests). Fails when `theta`
    /// has another length than the world's parameters.
    pub fn with_theta(mut self, theta: Vec<f32>) -> Result<Self, WorldError> {
        if theta.len() != self.theta.len() {
            return Err(WorldError::Config(envdist_core::InvalidValue::new(
                "theta",
                format!("{} parameters", self.theta.len()),
                theta.len(),
            )));
        }
        self.theta = theta;
        Ok(self)
    }

    fn logit(&self, world: &World, e: usize, level: HarnessLevel, scale: u32) -> f32 {
        let c = world.config();
        let skill: f32 = world.envs()[e]
            .skill
            .iter()
            .map(|&(i, w)| w * self.theta[i])
            .sum();
        let scaffolded = if level == HarnessLevel::H4 {
            0.0
        } else {
            self.scaffold[e]
        };
        let drift = c.interference
            * (1.0 - (-self.unrelated[e] / c.interference_episodes).exp())
            * (-self.practised[e] / c.protection_episodes).exp();
        world.offset(e, level, scale) + skill - drift + scaffolded
    }

    /// Probability that environment `e` is solved at `level` and `scale`.
    pub fn success(&self, world: &World, e: usize, level: HarnessLevel, scale: u32) -> f32 {
        sigmoid(self.logit(world, e, level, scale))
    }

    /// Success of `e` at H4 over the evaluation scales ([`World::eval_scales`]): what
    /// evaluation measures and what the per-environment gradient is the gradient of.
    pub fn h4_success(&self, world: &World, e: usize) -> f32 {
        let scales = world.eval_scales();
        scales
            .iter()
            .map(|&s| self.success(world, e, HarnessLevel::H4, s))
            .sum::<f32>()
            / scales.len() as f32
    }

    /// The whole pool's mean [`Learner::h4_success`], in [0, 1].
    pub fn score(&self, world: &World) -> f32 {
        (0..world.len())
            .map(|e| self.h4_success(world, e))
            .sum::<f32>()
            / world.len() as f32
    }

    /// Every environment's [`Learner::h4_success`], in pool order.
    pub fn successes(&self, world: &World) -> Vec<f32> {
        (0..world.len())
            .map(|e| self.h4_success(world, e))
            .collect()
    }

    /// The exact gradient of [`Learner::h4_success`] of `e` with respect to
    /// [`Learner::theta`] (dense, one entry per parameter).
    pub fn gradient(&self, world: &World, e: usize) -> Vec<f32> {
        let scales = world.eval_scales();
        let slope: f32 = scales
            .iter()
            .map(|&s| {
                let p = self.success(world, e, HarnessLevel::H4, s);
                p * (1.0 - p)
            })
            .sum::<f32>()
            / scales.len() as f32;
        let mut g = vec![0.0; self.theta.len()];
        for &(i, w) in &world.envs()[e].skill {
            g[i] = slope * w;
        }
        g
    }

    /// The expected learning of `episodes` episodes of `e` at `level` and `scale`, at the
    /// current success (see the module docs).
    pub fn learn(
        &mut self,
        world: &World,
        e: usize,
        level: HarnessLevel,
        scale: u32,
        episodes: f32,
    ) {
        let step = self.step(world, e, level, scale, episodes);
        self.apply(world, e, level, step, episodes);
    }

    /// The logit step `episodes` episodes of `e` at `level` and `scale` make now.
    fn step(&self, world: &World, e: usize, level: HarnessLevel, scale: u32, episodes: f32) -> f32 {
        let c = world.config();
        let p = self.success(world, e, level, scale);
        c.learning_rate * episodes * p * (1.0 - p) / (1.0 + self.played[e] / c.saturation)
    }

    fn apply(&mut self, world: &World, e: usize, level: HarnessLevel, step: f32, episodes: f32) {
        let carry = if level == HarnessLevel::H4 {
            1.0
        } else {
            world.config().carry_over
        };
        for &(i, w) in &world.envs()[e].skill {
            self.theta[i] += carry * step * w;
        }
        self.scaffold[e] += (1.0 - carry) * step;
        self.played[e] += episodes;
        for t in 0..world.len() {
            let w = world.overlap(e, t);
            self.unrelated[t] += episodes * (1.0 - w);
            if world.same_family(e, t) {
                self.practised[t] += episodes;
            }
        }
    }

    /// Play `task` once: draw its success from `rng`, learn from it when `trains`. Refuses a
    /// task of an environment the world does not have, or at a scale outside its range.
    pub fn play(
        &mut self,
        world: &World,
        task: &Task,
        trains: bool,
        rng: &mut Rng,
    ) -> Result<EpisodeOutcome, WorldError> {
        let e = world
            .index_of(&task.env)
            .ok_or_else(|| WorldError::UnknownEnv(task.clone()))?;
        world.specs()[e]
            .scale
            .check(&task.env, task.scale)
            .map_err(|problem| WorldError::Task {
                task: task.clone(),
                problem,
            })?;
        let success = rng.chance(self.success(world, e, task.harness, task.scale));
        if trains {
            self.learn(world, e, task.harness, task.scale, 1.0);
        }
        Ok(EpisodeOutcome {
            task: task.clone(),
            success,
            episode_return: success as u32 as f32,
            steps: 1,
        })
    }

    /// Train for `episodes` episodes on the tasks `sampler` draws, reporting every outcome
    /// back to it (any [`TaskSampler`]: HDC, its rivals, a uniform draw). Success draws come
    /// from `seed`'s stream.
    pub fn train(
        &mut self,
        world: &World,
        sampler: &mut dyn TaskSampler,
        episodes: u64,
        seed: u64,
    ) -> Result<Training, WorldError> {
        let mut rng = Rng::derive(seed, 0x504c_4159);
        let mut stats = Training::default();
        for _ in 0..episodes {
            let task = sampler.sample();
            let trains = sampler.trains_on(&task);
            let outcome = self.play(world, &task, trains, &mut rng)?;
            sampler.update(&outcome)?;
            stats.episodes += 1;
            stats.successes += outcome.success as u64;
            stats.below_h4 += (task.harness != HarnessLevel::H4) as u64;
            stats.untrained += (!trains) as u64;
        }
        Ok(stats)
    }

    /// Train on `mixture` for `episodes` episodes in expectation, deterministically: `steps`
    /// rounds, each applying every part's share of the episodes (spread evenly over its
    /// scales) at the success the round starts from. The mean of [`Learner::train`] under a
    /// sampler that draws the mixture, without its sampling noise: what the oracle and the
    /// probes use.
    pub fn practise(&mut self, world: &World, mixture: &[Practice], episodes: f32, steps: u32) {
        let total: f32 = mixture.iter().map(|p| p.weight.max(0.0)).sum();
        if total <= 0.0 || steps == 0 {
            return;
        }
        let scales = world.config().scale_max;
        let mut moves: Vec<(usize, HarnessLevel, f32, f32)> = Vec::new();
        for _ in 0..steps {
            moves.clear();
            for part in mixture {
                let share = episodes * part.weight.max(0.0) / total / steps as f32 / scales as f32;
                for s in 1..=scales {
                    let step = self.step(world, part.env, part.level, s, share);
                    moves.push((part.env, part.level, step, share));
                }
            }
            for &(e, level, step, share) in &moves {
                self.apply(world, e, level, step, share);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorldConfig;
    use envdist_core::Validate;

    fn world(c: WorldConfig) -> World {
        World::generate(&c.checked().unwrap(), 5)
    }

    #[test]
    fn gradients_equal_finite_differences_of_success() {
        let w = world(WorldConfig {
            trunk: 0.1,
            interference: 0.5,
            ..Default::default()
        });
        // Away from the base, so that every part of the logit is in play.
        let mut l = Learner::base(&w);
        l.practise(
            &w,
            &[
                Practice {
                    env: 0,
                    level: HarnessLevel::H4,
                    weight: 1.0,
                },
                Practice {
                    env: 7,
                    level: HarnessLevel::H1,
                    weight: 1.0,
                },
            ],
            400.0,
            8,
        );
        let h = 1e-2f32;
        for e in [0, 3, 7, 40] {
            let g = l.gradient(&w, e);
            let mut worst = 0.0f32;
            for i in 0..w.dim() {
                let at = |d: f32| {
                    let mut t = l.theta().to_vec();
                    t[i] += d;
                    l.clone().with_theta(t).unwrap().h4_success(&w, e)
                };
                let fd = (at(h) - at(-h)) / (2.0 * h);
                worst = worst.max((fd - g[i]).abs());
            }
            let norm = g.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!(norm > 1e-3, "env {e}: a zero gradient tests nothing");
            assert!(
                worst < 2e-3 * norm.max(0.05),
                "env {e}: {worst} vs norm {norm}"
            );
        }
    }

    #[test]
    fn training_an_env_helps_it_with_diminishing_returns_and_twins_interfere() {
        let w = world(WorldConfig {
            twin_fraction: 1.0,
            conflict: 1.0,
            family_share: 0.5,
            transfer: 0.3,
            ..Default::default()
        });
        let nv = w.config().variants;
        let (e, twin) = (0, nv - 1);
        let base = Learner::base(&w);
        let mut l = base.clone();
        let mix = [Practice {
            env: e,
            level: HarnessLevel::H4,
            weight: 1.0,
        }];
        let logit = |l: &Learner| l.logit(&w, e, HarnessLevel::H4, 1);
        l.practise(&w, &mix, 200.0, 16);
        let first = logit(&l) - logit(&base);
        let before = logit(&l);
        l.practise(&w, &mix, 200.0, 16);
        let second = logit(&l) - before;
        assert!(first > 0.0 && second > 0.0);
        assert!(w.kernel(e, twin) < 0.0);
        assert!(l.h4_success(&w, twin) < base.h4_success(&w, twin));
        assert!(second < first, "returns diminish: {first} then {second}");
    }

    #[test]
    fn train_refuses_tasks_the_world_does_not_have() {
        let w = world(WorldConfig::default());
        let mut l = Learner::base(&w);
        let mut rng = Rng::seed_from_u64(1);
        let bad = Task {
            env: envdist_core::EnvId::new("f00/nope"),
            seed: 0,
            harness: HarnessLevel::H4,
            scale: 1,
        };
        let e = l.play(&w, &bad, true, &mut rng).unwrap_err().to_string();
        assert!(e.contains("f00/nope"), "{e}");
        let bad = Task {
            env: w.specs()[0].id.clone(),
            scale: 99,
            ..bad
        };
        let e = l.play(&w, &bad, true, &mut rng).unwrap_err().to_string();
        assert!(e.contains("scale") && e.contains("99"), "{e}");
    }
}
