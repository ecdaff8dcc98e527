//! A synthetic learner for simulations, tests and benchmarks: its success probability
//! rises with practice in an environment and falls with scale and with weaker harness.
//! It stands in for a real policy so the curriculum's dynamics can be looked at in seconds;
//! [`simulate`] drives any sampler with it (`xtask curriculum simulate`).

use std::collections::HashMap;

use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, OutcomeError, Rng, ScaleRange, Task};
use serde::{Deserialize, Serialize};

use crate::{CurriculumSampler, TraceEvent};

/// Parameters of [`SyntheticLearner`]: `P(success) = sigmoid(bias + ease + skill -
/// scale_penalty * scale_fraction - harness_penalty * level)`, where `skill =
/// max_skill * (1 - exp(-practice / practice_scale))`. `practice` is counted per level of
/// the task: episodes played in that environment at the same or a weaker harness count in
/// full (what was learnt from fewer text channels still works with more), episodes at a
/// stronger harness count `transfer` each (text-reliant skill carries over only partly), so
/// every harness level has to be learnt again, as the paper's staircase assumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearnerParams {
    /// Logit of success at zero skill, smallest scale, H0.
    pub bias: f32,
    /// Skill reached after a lot of practice.
    pub max_skill: f32,
    /// Episodes of practice for 63% of `max_skill`.
    pub practice_scale: f32,
    /// Logit lost from the smallest to the largest scale.
    pub scale_penalty: f32,
    /// Logit lost per harness level.
    pub harness_penalty: f32,
    /// Environments differ: each gets an `ease` uniform in `[-spread, spread]`.
    pub spread: f32,
    /// Weight of an episode at a stronger harness in a weaker level's practice, in [0, 1].
    pub transfer: f32,
}

impl Default for LearnerParams {
    fn default() -> Self {
        Self {
            bias: -0.5,
            max_skill: 7.0,
            practice_scale: 3000.0,
            scale_penalty: 2.5,
            harness_penalty: 0.5,
            spread: 0.5,
            transfer: 0.3,
        }
    }
}

#[derive(Debug, Clone)]
struct Known {
    scale: ScaleRange,
    ease: f32,
    /// Episodes played per harness level.
    practice: [u64; 5],
}

/// A learner that gets better with practice. Deterministic from its seed.
#[derive(Debug, Clone)]
pub struct SyntheticLearner {
    params: LearnerParams,
    envs: HashMap<EnvId, Known>,
    rng: Rng,
}

impl SyntheticLearner {
    /// A learner for `envs`, with per-environment ease drawn from `seed`.
    pub fn new(envs: &[EnvSpec], params: LearnerParams, seed: u64) -> Self {
        let mut rng = Rng::derive(seed, 1);
        let envs = envs
            .iter()
            .map(|e| {
                let ease = (rng.next_f32() * 2.0 - 1.0) * params.spread;
                (
                    e.id.clone(),
                    Known {
                        scale: e.scale,
                        ease,
                        practice: [0; 5],
                    },
                )
            })
            .collect();
        Self {
            params,
            envs,
            rng: Rng::derive(seed, 2),
        }
    }

    /// Success probability at H4 (the evaluation condition) averaged over `spec`'s scales: how
    /// good the learner is on an environment, whatever it was trained on.
    pub fn h4_success(&self, spec: &EnvSpec) -> f64 {
        let r = spec.scale;
        let n = (r.max - r.min) as u64 + 1;
        (r.min..=r.max)
            .map(|scale| {
                self.success_probability(&Task {
                    env: spec.id.clone(),
                    seed: 0,
                    harness: envdist_core::HarnessLevel::H4,
                    scale,
                }) as f64
            })
            .sum::<f64>()
            / n as f64
    }

    /// [`SyntheticLearner::h4_success`] averaged over `specs`.
    pub fn mean_h4_success(&self, specs: &[EnvSpec]) -> f64 {
        specs.iter().map(|s| self.h4_success(s)).sum::<f64>() / specs.len().max(1) as f64
    }

    /// Probability that `task` is solved now (0 for an unknown environment).
    pub fn success_probability(&self, task: &Task) -> f32 {
        let Some(k) = self.envs.get(&task.env) else {
            return 0.0;
        };
        let p = &self.params;
        let span = (k.scale.max - k.scale.min).max(1) as f32;
        let frac = (task.scale.saturating_sub(k.scale.min) as f32 / span).min(1.0);
        let level = task.harness.index();
        let practice: f32 = k
            .practice
            .iter()
            .enumerate()
            .map(|(j, &n)| n as f32 * if j >= level { 1.0 } else { p.transfer })
            .sum();
        let skill = p.max_skill * (1.0 - (-practice / p.practice_scale).exp());
        let logit =
            p.bias + k.ease + skill - p.scale_penalty * frac - p.harness_penalty * level as f32;
        1.0 / (1.0 + (-logit).exp())
    }

    /// Play `task` once: draw success, then count the practice.
    pub fn play(&mut self, task: &Task) -> EpisodeOutcome {
        let success = self.rng.chance(self.success_probability(task));
        if let Some(k) = self.envs.get_mut(&task.env) {
            k.practice[task.harness.index()] += 1;
        }
        EpisodeOutcome {
            task: task.clone(),
            success,
            episode_return: success as u32 as f32,
            steps: 1,
        }
    }
}

/// The files a simulation writes into its output directory (`xtask curriculum simulate`),
/// named here so that the command and its tests do not spell them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulationFiles {
    dir: std::path::PathBuf,
}

impl SimulationFiles {
    /// The files of a simulation writing into `dir`.
    pub fn new(dir: impl Into<std::path::PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// One JSON line per trace event (HDC) or per snapshot (the rivals).
    pub fn trace(&self) -> std::path::PathBuf {
        self.dir.join("trace.jsonl")
    }

    /// The sampler's final state ([`CurriculumSampler::save_state_file`]).
    pub fn state(&self) -> std::path::PathBuf {
        self.dir.join("state.json")
    }

    /// The plot of the trace.
    pub fn plot(&self) -> std::path::PathBuf {
        self.dir.join("curriculum.png")
    }
}

/// How [`simulate`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimulateOptions {
    /// Episodes to play.
    pub steps: u64,
    /// Seed of the stream that draws the success of episodes the sampler would not train on
    /// (robust PLR's new levels): they are played without practice.
    pub seed: u64,
    /// Keep one [`TraceEvent`] per outcome (and count the moves of the played environment's
    /// position).
    pub trace: bool,
}

/// What [`simulate`] saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Simulation {
    /// Episodes played.
    pub steps: u64,
    /// Episodes solved.
    pub successes: u64,
    /// Episodes the sampler would train on ([`envdist_core::TaskSampler::trains_on`]), which
    /// the learner practised.
    pub trained: u64,
    /// With `trace`: outcomes after which the played environment's level
    /// ([`TraceEvent::level`]) changed. For HDC: its level changes (one per shared level
    /// change in [`crate::Mode::Global`]).
    pub level_moves: u64,
    /// With `trace`: outcomes after which the played environment's window bottom moved and its
    /// level did not. For HDC: its window moves.
    pub window_moves: u64,
    /// With `trace`: one event per outcome, numbered from 0.
    pub trace: Vec<TraceEvent>,
}

/// Drive `sampler` with `learner` for `options.steps` episodes: sample a task, play it
/// (with practice only when the sampler would train on it), report the outcome. `progress`
/// is called with the number of episodes done, 0 first and then after each episode, with
/// the sampler and the learner as they are then (for snapshots and progress bars). The
/// learner plays the tasks as drawn, so an error (a sampler refusing an outcome of a task it
/// drew) is a bug of that sampler.
pub fn simulate(
    sampler: &mut dyn CurriculumSampler,
    learner: &mut SyntheticLearner,
    options: SimulateOptions,
    progress: &mut dyn FnMut(u64, &dyn CurriculumSampler, &SyntheticLearner),
) -> Result<Simulation, OutcomeError> {
    let mut eval_rng = Rng::derive(options.seed, 3);
    let mut sim = Simulation {
        steps: options.steps,
        trace: Vec::with_capacity(if options.trace {
            options.steps as usize
        } else {
            0
        }),
        ..Simulation::default()
    };
    progress(0, sampler, learner);
    for done in 1..=options.steps {
        let task = sampler.sample();
        let outcome = if sampler.trains_on(&task) {
            sim.trained += 1;
            learner.play(&task)
        } else {
            let success = eval_rng.chance(learner.success_probability(&task));
            EpisodeOutcome {
                task,
                success,
                episode_return: success as u32 as f32,
                steps: 1,
            }
        };
        sim.successes += outcome.success as u64;
        let step = sim.trace.len() as u64;
        let before = options
            .trace
            .then(|| sampler.trace_event(step, &outcome))
            .flatten();
        sampler.update(&outcome)?;
        if let Some(before) = before
            && let Some(after) = sampler.trace_event(step, &outcome)
        {
            if after.level != before.level {
                sim.level_moves += 1;
            } else if after.window_lo != before.window_lo {
                sim.window_moves += 1;
            }
            sim.trace.push(after);
        }
        progress(done, sampler, learner);
    }
    Ok(sim)
}

/// Environments `family/e0, family/e1, ...` (multi-turn, pool) with the given scale ranges:
/// stand-ins for real specs in simulations and benchmarks (the sampler reads only ids and
/// scale ranges).
pub fn synthetic_specs(family: &str, ranges: &[(u32, u32)]) -> Vec<EnvSpec> {
    ranges
        .iter()
        .enumerate()
        .map(|(i, &(min, max))| EnvSpec {
            id: EnvId::new(format!("{family}/e{i}")),
            family: family.into(),
            variant: format!("e{i}"),
            turn: envdist_core::Turn::Multi,
            scale: ScaleRange { min, max },
            split: envdist_core::Split::Pool,
            abilities: vec![],
            conflict_twin: None,
            instruction: "synthetic".into(),
            max_steps: 1,
        })
        .collect()
}

/// `n` staggered scale ranges `2..=5 + (5 i mod 6)`, so windows climb for different lengths.
pub fn staggered_ranges(n: usize) -> Vec<(u32, u32)> {
    (0..n).map(|i| (2, 5 + (i as u32 * 5) % 6)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::specs;
    use envdist_core::{HarnessLevel, TaskSampler};

    #[test]
    fn simulate_counts_every_episode_and_traces_hdc_moves() {
        use crate::{HdcConfig, HdcSampler, SamplerConfig, UpdateEffect};
        let envs = synthetic_specs("s", &staggered_ranges(3));
        let config = HdcConfig {
            min_episodes: 5,
            ..Default::default()
        };
        // A quick learner, so the curriculum moves within a few thousand episodes.
        let quick = LearnerParams {
            bias: 1.0,
            practice_scale: 300.0,
            ..Default::default()
        };
        // The moves counted from the trace are the state machine's own effects.
        let mut plain = HdcSampler::new(&envs, None, config.clone(), 4).unwrap();
        let mut l = SyntheticLearner::new(&envs, quick.clone(), 4);
        let (mut windows, mut levels) = (0, 0);
        for _ in 0..3000 {
            let t = plain.sample_task();
            match plain.record(&l.play(&t)).unwrap() {
                UpdateEffect::WindowUp => windows += 1,
                UpdateEffect::LevelUp | UpdateEffect::GlobalLevelUp => levels += 1,
                _ => {}
            }
        }
        let mut s = HdcSampler::new(&envs, None, config, 4).unwrap();
        let mut l = SyntheticLearner::new(&envs, quick.clone(), 4);
        let mut calls = 0;
        let options = SimulateOptions {
            steps: 3000,
            seed: 4,
            trace: true,
        };
        let sim = simulate(&mut s, &mut l, options, &mut |done, _, _| {
            assert_eq!(done, calls);
            calls += 1;
        })
        .unwrap();
        assert_eq!(calls, 3001);
        assert_eq!((sim.window_moves, sim.level_moves), (windows, levels));
        assert!(levels > 0 && windows > 0);
        assert_eq!((sim.trace.len(), sim.trained), (3000, 3000));
        assert_eq!(s.state(), plain.state());
        // Robust PLR's new levels are played without practice.
        let mut plr = SamplerConfig::default_for("plr")
            .unwrap()
            .build(&envs, 4)
            .unwrap();
        let options = SimulateOptions {
            trace: false,
            ..options
        };
        let sim = simulate(plr.as_mut(), &mut l, options, &mut |_, _, _| {}).unwrap();
        assert!(sim.trained < sim.steps && sim.trace.is_empty());
    }

    #[test]
    fn practice_helps_scale_and_harness_hurt() {
        let envs = specs(1, 2, 10);
        let mut l = SyntheticLearner::new(&envs, LearnerParams::default(), 0);
        let t = |h, s| Task {
            env: envs[0].id.clone(),
            seed: 0,
            harness: h,
            scale: s,
        };
        let p0 = l.success_probability(&t(HarnessLevel::H0, 2));
        assert!(l.success_probability(&t(HarnessLevel::H0, 10)) < p0);
        assert!(l.success_probability(&t(HarnessLevel::H4, 2)) < p0);
        for _ in 0..1000 {
            l.play(&t(HarnessLevel::H0, 2));
        }
        assert!(l.success_probability(&t(HarnessLevel::H0, 2)) > p0);
        // Practice at H0 transfers only partly to H4; practice at H4 fully to H0.
        let h4 = l.success_probability(&t(HarnessLevel::H4, 2));
        let mut m = SyntheticLearner::new(&envs, LearnerParams::default(), 0);
        for _ in 0..1000 {
            m.play(&t(HarnessLevel::H4, 2));
        }
        assert!(m.success_probability(&t(HarnessLevel::H4, 2)) > h4);
        assert!(
            (m.success_probability(&t(HarnessLevel::H0, 2))
                - l.success_probability(&t(HarnessLevel::H0, 2)))
            .abs()
                < 1e-6
        );
    }
}
