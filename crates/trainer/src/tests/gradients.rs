//! Per-environment gradients and the critic's warm-up.

use super::*;

#[test]
fn projected_gradients_preserve_cosines_of_full_gradients() {
    let factory = ToyFactory;
    let model = PolicyModel::new(&ModelConfig::tiny(), 3, Device::Cpu).unwrap();
    let envs: Vec<EnvId> = ["toy/goal", "toy/goal-theme", "toy/goal-mirrored"]
        .iter()
        .map(|e| EnvId::new(*e))
        .collect();
    let cfg = GradientConfig {
        rollouts_per_env: 8,
        harness: HarnessLevel::H4,
        dim: 1024,
        ..GradientConfig::default()
    };
    let full = full_gradients(&model, &factory, &envs, &cfg).unwrap();
    assert_eq!(full[0].len(), model.num_params());
    let set = per_env_gradients(&model, &factory, &envs, &cfg).unwrap();
    assert_eq!((set.len(), set.dim), (3, 1024));
    for i in 0..3 {
        for j in i + 1..3 {
            let c_full = cosine(&full[i], &full[j]);
            let c_proj = cosine(set.row(i), set.row(j));
            eprintln!(
                "{} vs {}: full {c_full:.3} projected {c_proj:.3}",
                envs[i], envs[j]
            );
            // d = 1024: standard error of a projected cosine is at most 1/32.
            assert!((c_full - c_proj).abs() < 0.1, "{c_full} vs {c_proj}");
        }
    }
    // Deterministic from the seed.
    assert_eq!(
        per_env_gradients(&model, &factory, &envs, &cfg).unwrap(),
        set
    );
}

fn toy_envs() -> Vec<EnvId> {
    ["toy/goal", "toy/goal-theme", "toy/goal-mirrored"]
        .iter()
        .map(|e| EnvId::new(*e))
        .collect()
}

#[test]
fn head_only_gradient_is_the_head_slice_of_the_full_gradient() {
    let factory = Arc::new(ToyFactory);
    let envs = toy_envs();
    // On the smallest grid a near-uniform fresh policy reaches the goal in some episodes and
    // not in others, so every env's gradient is non-zero.
    let model = PolicyModel::new(&ModelConfig::tiny(), 5, Device::Cpu).unwrap();
    let all = GradientConfig {
        rollouts_per_env: 12,
        scale: ScaleChoice::Min,
        ..GradientConfig::default()
    };
    let head = GradientConfig {
        params: GradientParams::PolicyHead,
        ..all.clone()
    };
    let range = model.gradient_param_range(GradientParams::PolicyHead);
    let cfg = model.config();
    assert_eq!(
        range.len(),
        cfg.hidden * envdist_core::NUM_ACTIONS + envdist_core::NUM_ACTIONS
    );
    assert_eq!(
        model.gradient_param_range(GradientParams::All),
        0..model.num_params()
    );
    assert!(range.end <= model.num_params());
    let full = full_gradients(&model, factory.as_ref(), &envs, &all).unwrap();
    let part = full_gradients(&model, factory.as_ref(), &envs, &head).unwrap();
    for (f, h) in full.iter().zip(&part) {
        assert_eq!(h.len(), range.len());
        let slice = &f[range.clone()];
        assert!(h.iter().any(|v| *v != 0.0), "a non-zero head gradient");
        let scale = slice.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        for (a, b) in slice.iter().zip(h) {
            assert!((a - b).abs() <= 1e-5 * scale.max(1e-6), "{a} vs {b}");
        }
    }
    // Projected: same shape as the full estimate, with far fewer parameters differentiated.
    let report =
        per_env_gradients_report(&model, factory.as_ref(), &envs, &head, &mut |_| {}).unwrap();
    assert_eq!((report.set.len(), report.set.dim), (3, head.dim));
    assert_eq!(report.cost.params, range.len());
    assert_eq!(report.cost.episodes, 3 * 12);
    // Two halves per env, each at most 512 steps here: one backward pass each.
    assert_eq!(report.cost.backward_passes, 3 * 2);
}

#[test]
fn capped_episodes_are_shorter_and_bad_gradient_configs_are_errors() {
    let factory = ToyFactory;
    let model = PolicyModel::new(&ModelConfig::tiny(), 3, Device::Cpu).unwrap();
    let envs = toy_envs();
    let base = GradientConfig {
        rollouts_per_env: 8,
        scale: ScaleChoice::Max,
        ..GradientConfig::default()
    };
    let full = per_env_gradients_report(&model, &factory, &envs, &base, &mut |_| {}).unwrap();
    let capped = GradientConfig {
        max_episode_steps: Some(3),
        ..base.clone()
    };
    let short = per_env_gradients_report(&model, &factory, &envs, &capped, &mut |_| {}).unwrap();
    assert_eq!(short.cost.episodes, full.cost.episodes);
    assert!(short.cost.env_steps <= 3 * 8 * 3, "{:?}", short.cost);
    assert!(
        short.cost.env_steps < full.cost.env_steps,
        "{:?}",
        short.cost
    );
    assert_eq!(full.cost.params, model.num_params());
    for (field, bad) in [
        (
            "max_episode_steps",
            GradientConfig {
                max_episode_steps: Some(0),
                ..base.clone()
            },
        ),
        (
            "rollouts_per_env",
            GradientConfig {
                rollouts_per_env: 0,
                ..base.clone()
            },
        ),
        (
            "dim",
            GradientConfig {
                dim: 0,
                ..base.clone()
            },
        ),
    ] {
        let e = per_env_gradients(&model, &factory, &envs, &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{e}");
    }
    // Older configs without the new fields still parse, to the full estimate.
    let mut json = serde_json::to_value(&base).unwrap();
    let obj = json.as_object_mut().unwrap();
    obj.remove("params");
    obj.remove("max_episode_steps");
    let back: GradientConfig = serde_json::from_value(json).unwrap();
    assert_eq!(back, base);
}

/// Monte-Carlo returns (gamma) and the values `model` gives on the steps of a fixed batch of
/// episodes played by `model`.
fn value_error_on(model: &PolicyModel, batch: &[crate::play::Played], gamma: f32) -> f32 {
    #[allow(irrefutable_let_patterns)]
    let crate::policy::ModelInner::Cpu(net) = &model.inner else {
        unreachable!("the tests run on the CPU")
    };
    let mut err = 0.0f64;
    let mut n = 0usize;
    for ep in batch {
        let mut g = 0.0f32;
        let mut returns = vec![0.0f32; ep.steps.len()];
        for (t, s) in ep.steps.iter().enumerate().rev() {
            g = s.reward + gamma * g;
            returns[t] = g;
        }
        let mut bufs = crate::encode::BatchBuffers::default();
        bufs.fill(ep.steps.iter().map(|s| &s.features), &model.cfg);
        let (_, values) = crate::play::infer(net, &bufs, &model.cfg, &Default::default()).unwrap();
        for (v, g) in values.iter().zip(&returns) {
            err += ((v - g) as f64).powi(2);
            n += 1;
        }
    }
    (err / n.max(1) as f64) as f32
}

#[test]
fn critic_warm_up_fits_the_value_and_leaves_the_policy_where_it_was() {
    let factory = Arc::new(ToyFactory);
    let envs = [EnvId::new("toy/goal")];
    // A behaviour clone of the toy's solver: a policy that mostly succeeds, and a value head
    // that has never learned (cloning fits the policy alone), as the study's base.
    let mut cfg = tiny(60 * 128);
    cfg.value_warmup_updates = 60;
    cfg.lr = 3e-3;
    let mut cloner = Trainer::new(cfg.clone(), factory.clone(), Device::Cpu).unwrap();
    let mut demos = sampler(&["toy/goal"], HarnessLevel::H0);
    cloner
        .clone_behaviour(
            &mut demos,
            &CloneConfig {
                samples: 4_000,
                ..CloneConfig::default()
            },
            &mut |_| {},
        )
        .unwrap();
    let start = cloner.policy();
    // A fixed batch of the start policy's own episodes (sampled actions).
    let tasks: Vec<envdist_core::Task> = (0..64)
        .map(|i| envdist_core::Task {
            env: envs[0].clone(),
            seed: 500 + i,
            harness: HarnessLevel::H0,
            scale: 3,
        })
        .collect();
    #[allow(irrefutable_let_patterns)]
    let crate::policy::ModelInner::Cpu(net) = &start.inner else {
        unreachable!("the tests run on the CPU")
    };
    let mut rngs: Vec<envdist_core::Rng> = (0..tasks.len() as u64)
        .map(envdist_core::Rng::seed_from_u64)
        .collect();
    let batch = crate::play::play_episodes(
        net,
        factory.as_ref(),
        &start.cfg,
        &Default::default(),
        &tasks,
        64,
        crate::play::Mode::Sample(&mut rngs),
        true,
        None,
    )
    .unwrap();
    assert!(
        batch.iter().any(|p| p.outcome.success),
        "the batch has returns to fit"
    );
    let before = value_error_on(&start, &batch, cfg.gamma);
    let mut t = Trainer::from_policy(cfg.clone(), factory.clone(), &start).unwrap();
    let mut s = sampler(&["toy/goal"], HarnessLevel::H0);
    let stats: Vec<UpdateStats> = (0..60).map(|_| t.train_update(&mut s).unwrap()).collect();
    assert!(stats.iter().all(|u| u.value_only));
    let after = value_error_on(&t.policy(), &batch, cfg.gamma);
    // The best constant predictor's error: the variance of the batch's returns.
    let returns: Vec<f32> = batch
        .iter()
        .flat_map(|ep| {
            let mut g = 0.0f32;
            let mut r: Vec<f32> = ep
                .steps
                .iter()
                .rev()
                .map(|s| {
                    g = s.reward + cfg.gamma * g;
                    g
                })
                .collect();
            r.reverse();
            r
        })
        .collect();
    let mean = returns.iter().sum::<f32>() / returns.len() as f32;
    let var = returns.iter().map(|g| (g - mean).powi(2)).sum::<f32>() / returns.len() as f32;
    assert!(
        after < 0.5 * before && after < var,
        "value error on the fixed batch {before} -> {after} (a constant would make {var})"
    );
    // The policy did not move: the KL to the start is exactly zero and greedy play is the same.
    assert!(
        stats.iter().all(|u| u.kl_to_start == Some(0.0)),
        "{:?}",
        stats[59].kl_to_start
    );
    let seeds: Vec<u64> = (2000..2030).collect();
    let eval = |p: &PolicyModel| {
        evaluate(
            p,
            factory.as_ref(),
            &envs,
            &seeds,
            HarnessLevel::H0,
            ScaleChoice::Fixed(3),
        )
        .unwrap()
        .mean
    };
    assert_eq!(eval(&start), eval(&t.policy()));
    // After the warm-up the policy learns as usual.
    let next = t.train_update(&mut s).unwrap();
    assert!(!next.value_only && next.kl_to_start.is_some_and(|k| k > 0.0));
    assert_eq!(
        next.env_outcomes.values().map(|c| c[0]).sum::<u32>(),
        next.episodes
    );
}
