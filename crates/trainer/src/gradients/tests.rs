//! Tests of the per-environment gradients.

use super::estimate::*;
use super::projection::*;
use super::*;
use crate::config::ModelConfig;
use crate::encode::Features;
use crate::play::{Played, Recorded};
use crate::{Device, PolicyModel, full_gradients, per_env_gradients_report};
use envdist_core::env::{EnvFactory, UnknownEnv};
use envdist_core::{
    ActionId, ActionMask, Env, EnvId, EnvSpec, EpisodeOutcome, HarnessText, Observation, Rgb8Image,
    ScaleRange, Split, Step, Task, Turn,
};
use proptest::prelude::*;

/// A single-turn question for the exact estimator: a lit cell among four on a 16x16
/// canvas; answer `k` earns `REWARDS[(k - cell) mod 4]` (graded, so that the expected
/// reward is not a function of one probability). `pick/fixed` lights cell 2 whatever the
/// seed (one instance: the exact gradient is a constant), `pick/seeded` the seed's cell,
/// `pick/long` is `pick/seeded` whose answers leave the episode running (not one-step).
struct Pick {
    spec: EnvSpec,
    cell: usize,
}

const REWARDS: [f32; 4] = [1.0, 0.0, 0.5, 0.0];

fn pick_spec(variant: &str) -> EnvSpec {
    EnvSpec {
        id: EnvId::new(format!("pick/{variant}")),
        family: "pick".into(),
        variant: variant.into(),
        turn: Turn::Single,
        scale: ScaleRange { min: 1, max: 1 },
        split: Split::Pool,
        abilities: vec!["look".into()],
        conflict_twin: None,
        instruction: "Which cell is lit?".into(),
        max_steps: if variant == "long" { 3 } else { 1 },
    }
}

impl Pick {
    fn observe(&self) -> Observation {
        let mut img = Rgb8Image::new(16, 16);
        img.fill([10, 10, 10]);
        let c = self.cell as i32;
        img.fill_rect((c % 2) * 8, (c / 2) * 8, 8, 8, [250, 250, 250]);
        Observation {
            image: img,
            instruction: self.spec.instruction.clone(),
            harness: HarnessText::default(),
        }
    }
}

impl Env for Pick {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }
    fn reset(&mut self, task: &Task) -> Observation {
        self.cell = if self.spec.variant == "fixed" {
            2
        } else {
            envdist_core::Rng::seed_from_u64(task.seed).below(4) as usize
        };
        self.observe()
    }
    fn step(&mut self, action: ActionId) -> Step {
        let k = action.answer_value().unwrap_or(0);
        let done = self.spec.variant != "long";
        Step {
            observation: self.observe(),
            reward: REWARDS[(k + 4 - self.cell) % 4],
            done,
            truncated: false,
            success: done && k == self.cell,
            abilities: vec!["look"],
            legal: self.legal_actions(),
        }
    }
    fn legal_actions(&self) -> ActionMask {
        ActionMask::answers(4)
    }
}

struct PickFactory;

impl EnvFactory for PickFactory {
    fn specs(&self) -> Vec<EnvSpec> {
        ["fixed", "seeded", "long"].map(pick_spec).to_vec()
    }
    fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv> {
        self.specs()
            .into_iter()
            .find(|s| &s.id == id)
            .map(|spec| Box::new(Pick { spec, cell: 0 }) as Box<dyn Env>)
            .ok_or_else(|| UnknownEnv(id.clone()))
    }
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn exact_single_turn_gradient_is_the_mean_of_sampled_ones() {
    let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
    let envs = [EnvId::new("pick/fixed")];
    let exact_cfg = GradientConfig {
        rollouts_per_env: 4,
        ..GradientConfig::default()
    };
    assert_eq!(exact_cfg.single_turn, SingleTurn::Exact, "the default");
    let exact = full_gradients(&model, &PickFactory, &envs, &exact_cfg)
        .unwrap()
        .remove(0);
    assert!(norm(&exact) > 0.0);
    // One instance: every instance's exact gradient is the same, whatever the seed.
    let other = GradientConfig {
        seed: 9,
        rollouts_per_env: 6,
        ..exact_cfg.clone()
    };
    let again = full_gradients(&model, &PickFactory, &envs, &other)
        .unwrap()
        .remove(0);
    assert!(cosine(&exact, &again) > 0.9999);
    // The mean of many sampled estimates (M episodes each, mean baseline over the M, which
    // shrinks the expectation by 1 - 1/M) converges to it.
    let m = 64;
    let seeds = 100;
    let mut mean = vec![0.0f32; exact.len()];
    for seed in 0..seeds {
        let cfg = GradientConfig {
            rollouts_per_env: m,
            seed,
            single_turn: SingleTurn::Sampled,
            ..exact_cfg.clone()
        };
        let g = full_gradients(&model, &PickFactory, &envs, &cfg)
            .unwrap()
            .remove(0);
        mean.iter_mut()
            .zip(&g)
            .for_each(|(a, b)| *a += b / seeds as f32);
    }
    let shrink = 1.0 - 1.0 / m as f32;
    let ratio = norm(&mean) / (shrink * norm(&exact));
    let cos = cosine(&mean, &exact);
    eprintln!("mean of {seeds} sampled vs exact: cosine {cos:.4}, norm ratio {ratio:.3}");
    assert!(cos > 0.995, "cosine {cos}");
    assert!((ratio - 1.0).abs() < 0.05, "norm ratio {ratio}");
}

#[test]
fn exact_single_turn_gradients_are_more_reliable_than_sampled_ones() {
    let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
    let envs = [EnvId::new("pick/seeded")];
    let mean_split_half = |single_turn: SingleTurn| -> f32 {
        let seeds = 8;
        let mut total = 0.0;
        for seed in 0..seeds {
            let cfg = GradientConfig {
                rollouts_per_env: 32,
                seed,
                single_turn,
                ..GradientConfig::default()
            };
            let r =
                per_env_gradients_report(&model, &PickFactory, &envs, &cfg, &mut |_| {}).unwrap();
            if single_turn == SingleTurn::Exact {
                // Each instance answered all four ways; the same instances either way.
                assert_eq!((r.cost.episodes, r.cost.env_steps), (32, 4 * 32));
            }
            total += r.split_half_cosine[0];
        }
        total / seeds as f32
    };
    let exact = mean_split_half(SingleTurn::Exact);
    let sampled = mean_split_half(SingleTurn::Sampled);
    eprintln!("mean split-half cosine at 32 instances: exact {exact:.3}, sampled {sampled:.3}");
    assert!(exact > sampled + 0.2, "exact {exact} sampled {sampled}");
    assert!(exact > 0.8, "exact {exact}");
}

#[test]
fn exact_needs_one_step_answers_and_multi_turn_envs_are_sampled() {
    let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
    let cfg = GradientConfig {
        rollouts_per_env: 4,
        ..GradientConfig::default()
    };
    let e = full_gradients(&model, &PickFactory, &[EnvId::new("pick/long")], &cfg)
        .unwrap_err()
        .to_string();
    assert!(e.contains("pick/long") && e.contains("sampled"), "{e}");
    let sampled = GradientConfig {
        single_turn: SingleTurn::Sampled,
        ..cfg.clone()
    };
    assert!(full_gradients(&model, &PickFactory, &[EnvId::new("pick/long")], &sampled).is_ok());
    // A multi-turn env's gradient is the same whichever single-turn estimator is asked for.
    let toy = [EnvId::new("toy/goal")];
    let factory = crate::toy::ToyFactory;
    assert_eq!(
        full_gradients(&model, &factory, &toy, &cfg).unwrap(),
        full_gradients(&model, &factory, &toy, &sampled).unwrap()
    );
    for bad in [
        GradientConfig {
            lambda: 1.5,
            baseline: Baseline::Value,
            ..cfg.clone()
        },
        GradientConfig {
            lambda: 0.9,
            ..cfg.clone()
        },
    ] {
        let e = full_gradients(&model, &factory, &toy, &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("gradients.lambda"), "{e}");
    }
}

fn played(steps: &[(f32, f32)]) -> Played {
    let features = Features {
        patches: Vec::new(),
        text: Default::default(),
        legal: ActionMask::ALL,
    };
    Played {
        outcome: EpisodeOutcome {
            task: Task {
                env: EnvId::new("x/y"),
                seed: 0,
                harness: HarnessLevel::H4,
                scale: 1,
            },
            success: false,
            episode_return: steps.iter().map(|s| s.0).sum(),
            steps: steps.len() as u32,
        },
        steps: steps
            .iter()
            .map(|&(reward, value)| Recorded {
                features: features.clone(),
                action: ActionId::WAIT,
                reward,
                value,
            })
            .collect(),
    }
}

#[test]
fn advantages_are_returns_minus_a_baseline_or_gae() {
    // (reward, value) per step.
    let a = played(&[(0.0, 0.5), (0.0, 0.25), (1.0, 0.75)]);
    let b = played(&[(0.0, 0.5)]);
    let eps = [&a, &b];
    let adv = |baseline, gamma, lambda| -> Vec<f32> {
        advantages(&eps, gamma, baseline, lambda)
            .iter()
            .map(|(_, t)| match t {
                Target::Action(_, x) => *x,
                Target::Answers(_) => unreachable!(),
            })
            .collect()
    };
    let close = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(a, b)| (a - b).abs() < 1e-6);
    // Returns-to-go 1, 1, 1, 0; mean 0.75.
    assert!(close(
        &adv(Baseline::Mean, 1.0, 1.0),
        &[0.25, 0.25, 0.25, -0.75]
    ));
    // lambda 1: the return minus the value.
    assert!(close(
        &adv(Baseline::Value, 1.0, 1.0),
        &[0.5, 0.75, 0.25, -0.5]
    ));
    // lambda 0: one-step TD errors r + gamma V(s') - V(s), nothing after the last step.
    let g = 0.9;
    assert!(close(
        &adv(Baseline::Value, g, 0.0),
        &[g * 0.25 - 0.5, g * 0.75 - 0.25, 1.0 - 0.75, -0.5]
    ));
}

#[test]
fn projection_is_deterministic_and_independent_of_the_env_set() {
    let a: Vec<f32> = (0..700).map(|i| (i as f32 * 0.37).sin()).collect();
    let b: Vec<f32> = (0..700).map(|i| (i as f32 * 0.11).cos()).collect();
    let both = project(&[a.clone(), b.clone()], 64, ProjectionKind::Rademacher, 3);
    let one = project(std::slice::from_ref(&b), 64, ProjectionKind::Rademacher, 3);
    assert_eq!(&both[64..], &one[..]);
    let other_seed = project(&[b], 64, ProjectionKind::Rademacher, 4);
    assert_ne!(one, other_seed);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Johnson-Lindenstrauss: with d = 1024, the projected cosine of two random vectors
    /// (of chosen true cosine) is within 0.15 of the true one (about 5 standard errors).
    #[test]
    fn projection_preserves_cosines(seed in 0u64..10_000, mix in -1.0f32..1.0, gauss in any::<bool>()) {
        let mut rng = envdist_core::Rng::seed_from_u64(seed);
        let p = 3000;
        let u: Vec<f32> = (0..p).map(|_| rng.normal()).collect();
        let w: Vec<f32> = (0..p).map(|_| rng.normal()).collect();
        let v: Vec<f32> = u.iter().zip(&w).map(|(a, b)| mix * a + (1.0 - mix.abs()) * b).collect();
        let kind = if gauss { ProjectionKind::Gaussian } else { ProjectionKind::Rademacher };
        let pr = project(&[u.clone(), v.clone()], 1024, kind, seed);
        let full = cosine(&u, &v);
        let proj = cosine(&pr[..1024], &pr[1024..]);
        prop_assert!((full - proj).abs() < 0.15, "full {full} projected {proj}");
    }
}
