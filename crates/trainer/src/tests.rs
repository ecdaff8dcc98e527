//! Crate-level tests on the toy environment.

use std::sync::Arc;

use envdist_core::{EnvId, HarnessLevel, TaskSampler};

use crate::toy::ToyFactory;
use crate::*;

fn tiny(steps: u64) -> TrainConfig {
    let mut cfg = TrainConfig::preset("tiny").unwrap();
    cfg.total_env_steps = steps;
    cfg
}

fn sampler(envs: &[&str], harness: HarnessLevel) -> UniformSampler {
    let ids: Vec<EnvId> = envs.iter().map(|e| EnvId::new(*e)).collect();
    UniformSampler::new(&ToyFactory, &ids, harness, Some(ScaleChoice::Fixed(3)), 5).unwrap()
}

/// `f` run on a rayon pool of `threads` threads (the backend's products and env stepping use it).
fn at_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-trainer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn learns_the_toy_grid_from_hints() {
    let factory = Arc::new(ToyFactory);
    let envs = [EnvId::new("toy/goal")];
    let mut s = sampler(&["toy/goal"], HarnessLevel::H0);
    let cfg = tiny(6_000);
    let mut t = Trainer::new(cfg, factory.clone(), Device::Cpu).unwrap();
    let seeds: Vec<u64> = (1000..1040).collect();
    let before = evaluate(
        &t.policy(),
        factory.as_ref(),
        &envs,
        &seeds,
        HarnessLevel::H0,
        ScaleChoice::Fixed(3),
    )
    .unwrap();
    let summary = t.run(&mut s, &RunOptions::default(), &mut |_| {}).unwrap();
    let after = evaluate(
        &t.policy(),
        factory.as_ref(),
        &envs,
        &seeds,
        HarnessLevel::H0,
        ScaleChoice::Fixed(3),
    )
    .unwrap();
    eprintln!(
        "before {} after {} summary {summary:?}",
        before.mean, after.mean
    );
    assert!(
        after.mean >= 0.8 && after.mean > before.mean + 0.3,
        "before {} after {}",
        before.mean,
        after.mean
    );
    assert_eq!(after.splits.mt_id, Some(after.mean));
    assert_eq!(after.splits.st_id, None);
}

#[test]
fn resume_continues_the_same_run() {
    let factory = Arc::new(ToyFactory);
    let envs = ["toy/goal", "toy/goal-mirrored"];
    let dir = tmp("resume");
    let mut s = sampler(&envs, HarnessLevel::H0);
    let mut t = Trainer::new(tiny(10_000), factory.clone(), Device::Cpu).unwrap();
    t.train_update(&mut s).unwrap();
    t.train_update(&mut s).unwrap();
    t.save_checkpoint(&dir, &s).unwrap();
    let a1 = t.train_update(&mut s).unwrap();
    let a2 = t.train_update(&mut s).unwrap();

    let mut s2 = sampler(&envs, HarnessLevel::H0);
    let mut r = Trainer::resume(&dir, factory.clone(), Device::Cpu, &mut s2).unwrap();
    assert_eq!((r.updates(), r.env_steps()), (2, 2 * 128));
    let b1 = r.train_update(&mut s2).unwrap();
    let b2 = r.train_update(&mut s2).unwrap();
    for (a, b) in [(&a1, &b1), (&a2, &b2)] {
        assert_eq!(a.episodes, b.episodes);
        assert_eq!(a.success_rate, b.success_rate);
        for (x, y) in [
            (a.policy_loss, b.policy_loss),
            (a.value_loss, b.value_loss),
            (a.entropy, b.entropy),
            (a.approx_kl, b.approx_kl),
        ] {
            assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{a:?}\n{b:?}");
        }
    }
    assert_eq!(s.state(), s2.state());

    // A sampler of another configuration is refused, naming the mismatch.
    let mut other = sampler(&["toy/goal"], HarnessLevel::H0);
    let e = Trainer::resume(&dir, factory.clone(), Device::Cpu, &mut other).unwrap_err();
    assert!(e.to_string().contains("mismatch"), "{e}");
    // A corrupt state file names itself.
    std::fs::write(dir.join("state.json"), "{").unwrap();
    let e = PolicyModel::load(&dir, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(e.contains("state.json"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run started from a policy measures its KL to that policy; resumed from a checkpoint it
/// measures it to the same policy (saved with the checkpoint), so the diagnostics after the
/// resume point are the uninterrupted run's, not null.
#[test]
fn a_resumed_run_keeps_its_kl_reference() {
    let factory = Arc::new(ToyFactory);
    let envs = ["toy/goal", "toy/goal-mirrored"];
    let dir = tmp("resume-kl");
    // A start policy that is not the fresh initialisation of the config's seed.
    let mut warm = Trainer::new(tiny(10_000), factory.clone(), Device::Cpu).unwrap();
    let mut s0 = sampler(&envs, HarnessLevel::H0);
    warm.train_update(&mut s0).unwrap();
    let start = warm.policy();

    let mut s = sampler(&envs, HarnessLevel::H0);
    let mut t = Trainer::from_policy(tiny(10_000), factory.clone(), &start).unwrap();
    t.train_update(&mut s).unwrap();
    t.save_checkpoint(&dir, &s).unwrap();
    let straight: Vec<UpdateStats> = (0..3).map(|_| t.train_update(&mut s).unwrap()).collect();
    assert!(
        straight
            .iter()
            .all(|u| u.kl_to_start.is_some_and(|k| k > 0.0))
    );

    let mut s2 = sampler(&envs, HarnessLevel::H0);
    let mut r = Trainer::resume(&dir, factory.clone(), Device::Cpu, &mut s2).unwrap();
    let resumed: Vec<UpdateStats> = (0..3).map(|_| r.train_update(&mut s2).unwrap()).collect();
    for (a, b) in straight.iter().zip(&resumed) {
        assert_eq!(a.kl_to_start, b.kl_to_start, "update {}", a.update);
        assert_eq!(a.policy_loss, b.policy_loss, "update {}", a.update);
    }
    // A run that started from scratch has no reference, before or after a resume.
    let fresh = Trainer::new(tiny(10_000), factory.clone(), Device::Cpu).unwrap();
    let mut s3 = sampler(&envs, HarnessLevel::H0);
    fresh.save_checkpoint(&dir, &s3).unwrap();
    assert!(!dir.join(crate::trainer::START_FILE).exists());
    let mut again = Trainer::resume(&dir, factory.clone(), Device::Cpu, &mut s3).unwrap();
    assert_eq!(again.train_update(&mut s3).unwrap().kl_to_start, None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A KL penalty to the starting policy keeps the policy near it: from the same start, seed and
/// rollouts, a run with a large `kl_coef` ends far closer to the start than one without, and
/// logs the penalty's KL (non-negative) where the plain run logs none. A run from no policy
/// refuses a penalty, naming the field.
#[test]
fn a_kl_penalty_keeps_the_policy_near_its_start() {
    let factory = Arc::new(ToyFactory);
    let envs = ["toy/goal", "toy/goal-mirrored"];
    let mut warm = Trainer::new(tiny(10_000), factory.clone(), Device::Cpu).unwrap();
    warm.train_update(&mut sampler(&envs, HarnessLevel::H0))
        .unwrap();
    let start = warm.policy();
    let run = |kl_coef: f32| -> Vec<UpdateStats> {
        let mut cfg = tiny(10_000);
        cfg.kl_coef = kl_coef;
        cfg.lr = 3e-3;
        let mut s = sampler(&envs, HarnessLevel::H0);
        let mut t = Trainer::from_policy(cfg, factory.clone(), &start).unwrap();
        (0..8).map(|_| t.train_update(&mut s).unwrap()).collect()
    };
    let (plain, anchored) = (run(0.0), run(2.0));
    let last = |u: &[UpdateStats]| u.last().and_then(|u| u.kl_to_start).unwrap();
    assert!(plain.iter().all(|u| u.kl_loss.is_none()));
    assert!(anchored.iter().all(|u| u.kl_loss.is_some_and(|k| k >= 0.0)));
    assert!(
        last(&anchored) < 0.5 * last(&plain),
        "KL to the start after 8 updates: {} with the penalty, {} without",
        last(&anchored),
        last(&plain)
    );

    let mut cfg = tiny(10_000);
    cfg.kl_coef = 0.1;
    let e = Trainer::new(cfg, factory, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("kl_coef") && e.contains("starts from no policy"),
        "{e}"
    );
}

#[test]
fn run_writes_log_and_checkpoint_and_model_loads() {
    let factory = Arc::new(ToyFactory);
    let dir = tmp("run");
    let mut s = sampler(&["toy/goal"], HarnessLevel::H0);
    let mut t = Trainer::new(tiny(384), factory.clone(), Device::Cpu).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        checkpoint_every: 2,
        stop_at: None,
    };
    let mut seen = 0;
    let summary = t.run(&mut s, &opts, &mut |_| seen += 1).unwrap();
    assert_eq!((summary.updates, seen), (3, 3));
    let log = std::fs::read_to_string(dir.join("train_log.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 3);
    assert!(log.contains("\"schema_version\":1") && log.contains("policy_loss"));
    let m = PolicyModel::load(&dir.join("checkpoint"), Device::Cpu).unwrap();
    assert_eq!(m.num_params(), t.policy().num_params());
    let envs = [EnvId::new("toy/goal")];
    let a = evaluate(
        &m,
        factory.as_ref(),
        &envs,
        &[1, 2, 3],
        HarnessLevel::H4,
        ScaleChoice::Min,
    )
    .unwrap();
    let b = evaluate(
        &t.policy(),
        factory.as_ref(),
        &envs,
        &[1, 2, 3],
        HarnessLevel::H4,
        ScaleChoice::Min,
    )
    .unwrap();
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scalars of the run's event file, one event per update at its env steps.
fn tensorboard_updates(dir: &std::path::Path) -> Vec<(i64, Vec<(String, f32)>)> {
    let files = RunFiles::new(dir).tensorboard_events();
    assert_eq!(files.len(), 1, "{files:?}");
    let events = tensorboard::read_events(&files[0]).unwrap();
    assert_eq!(
        events[0].body,
        tensorboard::EventBody::FileVersion("brain.Event:2".into())
    );
    events[1..]
        .iter()
        .map(|e| match &e.body {
            tensorboard::EventBody::Scalars(v) => (e.step, v.clone()),
            other => panic!("step {}: {other:?}", e.step),
        })
        .collect()
}

fn scalar(values: &[(String, f32)], tag: &str) -> Option<f32> {
    values.iter().find(|(t, _)| t == tag).map(|(_, v)| *v)
}

/// Every update of a run is one TensorBoard event at its env steps, holding the numbers of its
/// training-log line under TensorBoard-style tags, the curriculum's level and scale included.
#[test]
fn run_writes_tensorboard_events_with_the_numbers_of_its_log() {
    let factory = Arc::new(ToyFactory);
    let dir = tmp("tensorboard");
    let mut s = sampler(&["toy/goal", "toy/goal-mirrored"], HarnessLevel::H2);
    let cfg = tiny(384);
    let start = PolicyModel::new(&cfg.model, 3, Device::Cpu).unwrap();
    let mut t = Trainer::from_policy(cfg, factory, &start).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        checkpoint_every: 0,
        stop_at: None,
    };
    t.run(&mut s, &opts, &mut |_| {}).unwrap();
    let log = RunFiles::new(&dir).read_log().unwrap();
    let updates = tensorboard_updates(&dir);
    assert_eq!(log.len(), 3);
    assert_eq!(updates.len(), log.len());
    for (stats, (step, values)) in log.iter().zip(&updates) {
        assert_eq!(*step as u64, stats.env_steps);
        for (tag, want) in [
            ("train/success_rate", stats.success_rate),
            ("train/mean_return", stats.mean_return),
            ("train/episodes", Some(stats.episodes as f32)),
            ("loss/policy", Some(stats.policy_loss)),
            ("loss/value", Some(stats.value_loss)),
            ("loss/entropy", Some(stats.entropy)),
            ("policy/approx_kl", Some(stats.approx_kl)),
            ("policy/kl_to_start", stats.kl_to_start),
            ("optim/lr", Some(stats.lr)),
        ] {
            assert_eq!(scalar(values, tag), want, "{tag} at {step}");
        }
        assert!(
            stats.kl_to_start.is_some(),
            "a run from a policy has a KL to it"
        );
        // Every episode of this sampler is at H2 and scale 3: the means say so.
        if stats.episodes > 0 {
            assert_eq!(scalar(values, "curriculum/mean_harness_level"), Some(2.0));
            assert_eq!(scalar(values, "curriculum/mean_scale"), Some(3.0));
            for (env, [n, wins]) in &stats.env_outcomes {
                assert_eq!(
                    scalar(values, &format!("env/{env}/harness_level")),
                    Some(2.0)
                );
                assert_eq!(scalar(values, &format!("env/{env}/scale")), Some(3.0));
                assert_eq!(
                    scalar(values, &format!("env/{env}/success_rate")),
                    Some(*wins as f32 / *n as f32)
                );
            }
        }
    }
    assert!(log.iter().any(|s| s.episodes > 0), "{log:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run killed after its checkpoint had written events past it (and half of one more) and
/// resumed from that checkpoint writes each step once: the file is cut back to the checkpoint,
/// and the steps after it are the resumed run's. A fresh run in the same directory starts a
/// new file.
#[test]
fn a_resumed_run_writes_each_tensorboard_step_once() {
    let factory = Arc::new(ToyFactory);
    let dir = tmp("tensorboard-resume");
    let saved = tmp("tensorboard-resume-ckpt");
    let envs = ["toy/goal"];
    let mut s = sampler(&envs, HarnessLevel::H0);
    let mut t = Trainer::new(tiny(512), factory.clone(), Device::Cpu).unwrap();
    let opts = |stop_at| RunOptions {
        out_dir: Some(dir.clone()),
        checkpoint_every: 0,
        stop_at: Some(stop_at),
    };
    t.run(&mut s, &opts(256), &mut |_| {}).unwrap();
    let files = RunFiles::new(&dir);
    std::fs::create_dir_all(&saved).unwrap();
    for e in std::fs::read_dir(files.checkpoint()).unwrap().flatten() {
        std::fs::copy(e.path(), saved.join(e.file_name())).unwrap();
    }
    t.run(&mut s, &opts(512), &mut |_| {}).unwrap();
    // The kill: the checkpoint at 256 steps is the last one, two events came after it, and a
    // third was cut short.
    std::fs::remove_dir_all(files.checkpoint()).unwrap();
    std::fs::rename(&saved, files.checkpoint()).unwrap();
    let events_file = files.tensorboard_events().remove(0);
    let torn = tensorboard::frame_record(
        &t.train_update(&mut s)
            .unwrap()
            .tensorboard_event(0.0)
            .encode(),
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&events_file)
        .unwrap();
    std::io::Write::write_all(&mut f, &torn[..torn.len() - 3]).unwrap();
    drop(f);

    let mut s2 = sampler(&envs, HarnessLevel::H0);
    let mut r =
        Trainer::resume(&files.checkpoint(), factory.clone(), Device::Cpu, &mut s2).unwrap();
    assert_eq!(r.env_steps(), 256);
    r.run(&mut s2, &opts(512), &mut |_| {}).unwrap();
    assert_eq!(
        files.tensorboard_events(),
        std::slice::from_ref(&events_file),
        "the file keeps its name"
    );
    let updates = tensorboard_updates(&dir);
    let steps: Vec<i64> = updates.iter().map(|u| u.0).collect();
    assert_eq!(steps, [128, 256, 384, 512]);
    // The events after the checkpoint are the resumed run's, as its log is.
    let log = files.read_log().unwrap();
    assert_eq!(log.len(), 4);
    for (stats, (_, values)) in log.iter().zip(&updates) {
        assert_eq!(values, &stats.tensorboard_scalars());
    }

    // A fresh run in the directory: a new file with its own steps only.
    let mut s3 = sampler(&envs, HarnessLevel::H0);
    let mut fresh = Trainer::new(tiny(128), factory, Device::Cpu).unwrap();
    fresh.run(&mut s3, &opts(128), &mut |_| {}).unwrap();
    let steps: Vec<i64> = tensorboard_updates(&dir).iter().map(|u| u.0).collect();
    assert_eq!(steps, [128]);
    let _ = std::fs::remove_dir_all(&dir);
}

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

#[test]
fn bad_inputs_are_errors_not_panics() {
    let factory = Arc::new(ToyFactory);
    let model = PolicyModel::new(&ModelConfig::tiny(), 0, Device::Cpu).unwrap();
    let e = evaluate(
        &model,
        factory.as_ref(),
        &[EnvId::new("nope/x")],
        &[1],
        HarnessLevel::H4,
        ScaleChoice::Min,
    )
    .unwrap_err();
    assert!(e.to_string().contains("nope/x"));
    let mut cfg = tiny(100);
    cfg.minibatch = 0;
    assert!(
        Trainer::new(cfg, factory.clone(), Device::Cpu)
            .unwrap_err()
            .to_string()
            .contains("minibatch")
    );
    assert!("tpu".parse::<Device>().is_err());
    assert_eq!("cuda:1".parse::<Device>().unwrap(), Device::Cuda(1));
    if !Device::Cuda(0).is_available() {
        let e = Trainer::new(tiny(100), factory, Device::Cuda(0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--features cuda"), "{e}");
    }
    assert_eq!("libtorch".parse::<Device>().unwrap(), Device::LibTorch);
    assert_eq!(Device::LibTorch.to_string(), "libtorch");
    if !Device::LibTorch.is_available() {
        let e = PolicyModel::new(&ModelConfig::tiny(), 0, Device::LibTorch)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--features tch") && e.contains("docs/libtorch.md"),
            "{e}"
        );
    }
}

/// LibTorch and flex train the same network from the same seed to the same place: the first
/// update's statistics agree to float tolerance, and both learn the toy grid. Runs only with
/// `--features tch` (docs/libtorch.md), never in CI.
#[cfg(feature = "tch")]
#[test]
fn libtorch_trains_like_flex() {
    let factory = Arc::new(ToyFactory);
    let run = |device| {
        let mut s = sampler(&["toy/goal"], HarnessLevel::H0);
        let mut t = Trainer::new(tiny(6_000), factory.clone(), device).unwrap();
        let mut log = Vec::new();
        t.run(&mut s, &RunOptions::default(), &mut |u| log.push(u.clone()))
            .unwrap();
        let seeds: Vec<u64> = (1000..1040).collect();
        let ids = [EnvId::new("toy/goal")];
        let eval = evaluate(
            &t.policy(),
            factory.as_ref(),
            &ids,
            &seeds,
            HarnessLevel::H0,
            ScaleChoice::Fixed(3),
        )
        .unwrap();
        (log, eval.mean)
    };
    let (flex, flex_success) = run(Device::Cpu);
    let (tch, tch_success) = run(Device::LibTorch);
    // Same initial weights and the same first rollout: the first update sees the same data.
    assert_eq!(flex[0].episodes, tch[0].episodes);
    assert_eq!(flex[0].success_rate, tch[0].success_rate);
    for (name, a, b) in [
        ("policy_loss", flex[0].policy_loss, tch[0].policy_loss),
        ("value_loss", flex[0].value_loss, tch[0].value_loss),
        ("entropy", flex[0].entropy, tch[0].entropy),
    ] {
        assert!(
            (a - b).abs() <= 1e-3 * (1.0 + a.abs()),
            "{name}: flex {a} libtorch {b}"
        );
    }
    assert!(
        flex_success >= 0.8 && tch_success >= 0.8,
        "flex {flex_success} libtorch {tch_success}"
    );
}

#[test]
fn grpo_trains_and_the_policy_plays_through_the_core_trait() {
    use envdist_core::{Env, Policy, PolicyInput, Rng, Task};
    let factory = Arc::new(ToyFactory);
    let mut cfg = tiny(512);
    cfg.advantage = AdvantageKind::Grpo;
    let mut s = sampler(&["toy/goal", "toy/goal-theme"], HarnessLevel::H0);
    let mut t = Trainer::new(cfg, factory.clone(), Device::Cpu).unwrap();
    for _ in 0..3 {
        let st = t.train_update(&mut s).unwrap();
        assert!(st.policy_loss.is_finite() && st.entropy > 0.0, "{st:?}");
    }
    let mut policy = t.policy();
    let mut env = crate::toy::GoalGrid::new("goal").unwrap();
    let task = Task {
        env: EnvId::new("toy/goal"),
        seed: 1,
        harness: HarnessLevel::H0,
        scale: 3,
    };
    let obs = env.reset(&task);
    let legal = env.legal_actions();
    let input = PolicyInput {
        task: &task,
        observation: &obs,
        legal,
        oracle: None,
    };
    let a = policy.act(&input, &mut Rng::seed_from_u64(0));
    assert!(legal.contains(a));
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

#[test]
fn blocked_products_equal_the_plain_ones_and_rows_do_not_depend_on_their_batch() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::device::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(3);
    let layer = burn::nn::Linear::<B> {
        weight: burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new(
                (0..1100 * 7).map(|_| rng.normal()).collect::<Vec<f32>>(),
                [1100, 7],
            ),
            &dev,
        )),
        bias: Some(burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new((0..7).map(|_| rng.normal()).collect::<Vec<f32>>(), [7]),
            &dev,
        ))),
    };
    let x = Tensor::<B, 2>::from_data(
        TensorData::new(
            (0..5 * 1100).map(|_| rng.normal()).collect::<Vec<f32>>(),
            [5, 1100],
        ),
        &dev,
    );
    let blocked: Vec<f32> = crate::model::linear_blocked(&layer, x.clone())
        .into_data()
        .to_vec()
        .unwrap();
    let plain: Vec<f32> = layer.forward(x).into_data().to_vec().unwrap();
    for (a, b) in blocked.iter().zip(&plain) {
        assert!((a - b).abs() < 1e-3 * (1.0 + b.abs()), "{a} vs {b}");
    }
    // The patch embedding and the convolutions run on groups of whole frames: a frame's output
    // does not depend on which (or how many) other frames share its batch.
    for encoder in [ImageEncoder::PatchMlp, ImageEncoder::Conv] {
        let cfg = ModelConfig {
            encoder,
            ..ModelConfig::cpu()
        };
        let net = crate::model::PolicyNet::<B>::init(&cfg, 1, &dev);
        let frames = |n: usize, seed: u64| {
            let mut r = envdist_core::Rng::seed_from_u64(seed);
            (0..n * cfg.num_patches() * cfg.patch_values())
                .map(|_| r.next_f32())
                .collect::<Vec<f32>>()
        };
        let image = |data: Vec<f32>, n: usize| -> Vec<f32> {
            let x = crate::model::Inputs::<B> {
                patches: Tensor::from_data(
                    TensorData::new(data, [n, cfg.num_patches(), cfg.patch_values()]),
                    &dev,
                ),
                tokens: Tensor::from_data(TensorData::new(Vec::<i32>::new(), [0]), &dev),
                token_segments: Tensor::from_data(TensorData::new(Vec::<i32>::new(), [0]), &dev),
                segment_weights: Tensor::zeros([n, crate::encode::NUM_CHANNELS, 1], &dev),
                present: Tensor::zeros([n, crate::encode::NUM_CHANNELS, 1], &dev),
                mask: Tensor::zeros([n, envdist_core::NUM_ACTIONS], &dev),
                conv: crate::model::ConvGeometry::of(&cfg),
            };
            net.trunk(x).0.into_data().to_vec().unwrap()
        };
        let many = frames(70, 5);
        let first_alone = image(many[..cfg.num_patches() * cfg.patch_values()].to_vec(), 1);
        let in_batch = image(many, 70);
        assert_eq!(
            first_alone,
            in_batch[..cfg.hidden].to_vec(),
            "{}",
            encoder.name()
        );
    }
}

/// A plain stride-2 convolution without padding, one output at a time, NHWC in and out.
fn naive_conv(
    x: &[f32],
    n: usize,
    side: usize,
    c: usize,
    k: usize,
    w: &[f32],
    d: usize,
) -> Vec<f32> {
    let out = (side - k) / 2 + 1;
    let mut y = vec![0.0f32; n * out * out * d];
    for b in 0..n {
        for oy in 0..out {
            for ox in 0..out {
                for o in 0..d {
                    let mut acc = 0.0f64;
                    for ky in 0..k {
                        for kx in 0..k {
                            for ch in 0..c {
                                let xi = ((b * side + 2 * oy + ky) * side + 2 * ox + kx) * c + ch;
                                let wi = ((ky * k + kx) * c + ch) * d + o;
                                acc += x[xi] as f64 * w[wi] as f64;
                            }
                        }
                    }
                    y[((b * out + oy) * out + ox) * d + o] = acc as f32;
                }
            }
        }
    }
    y
}

#[test]
fn gathered_im2col_is_a_convolution_its_gradient_a_scatter_and_the_host_im2col_matches_it() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::device::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(9);
    // Even and odd sides, as the encoder meets them (14 -> 6 -> 2 at 32; 7 -> 3 at 17), and
    // zero-padded maps (16 -> 8 -> 4 at 32 with 3x3 kernels and padding 1).
    for (n, side, c, k, d, pad) in [
        (3, 14, 4, 3, 5, 0),
        (2, 7, 3, 3, 2, 0),
        (2, 17, 3, 5, 4, 0),
        (2, 16, 3, 3, 4, 1),
        (2, 7, 2, 3, 3, 1),
        (1, 9, 2, 5, 2, 2),
    ] {
        let x: Vec<f32> = (0..n * side * side * c).map(|_| rng.normal()).collect();
        let w: Vec<f32> = (0..k * k * c * d).map(|_| rng.normal()).collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(x.clone(), [n, side, side, c]), &dev);
        let wt = Tensor::<B, 2>::from_data(TensorData::new(w.clone(), [k * k * c, d]), &dev);
        let got: Vec<f32> = crate::model::im2col_stride2(xt, k, pad)
            .matmul(wt)
            .into_data()
            .to_vec()
            .unwrap();
        // The padding written out on the host, then the plain convolution.
        let ps = side + 2 * pad;
        let mut padded = vec![0.0f32; n * ps * ps * c];
        for b in 0..n {
            for y in 0..side {
                for xx in 0..side {
                    let src = ((b * side + y) * side + xx) * c;
                    let dst = ((b * ps + y + pad) * ps + xx + pad) * c;
                    padded[dst..dst + c].copy_from_slice(&x[src..src + c]);
                }
            }
        }
        let want = naive_conv(&padded, n, ps, c, k, &w, d);
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (a - b).abs() < 1e-4 * (1.0 + b.abs()),
                "{a} vs {b} (side {side}, padding {pad})"
            );
        }
        // Its gradient: each input value gets the sum of the output gradients of every tap
        // that read it (taps in the padding read nothing).
        let out = (ps - k) / 2 + 1;
        let r: Vec<f32> = (0..n * out * out * k * k * c)
            .map(|_| rng.normal())
            .collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(x.clone(), [n, side, side, c]), &dev)
            .require_grad();
        let rt =
            Tensor::<B, 2>::from_data(TensorData::new(r.clone(), [n * out * out, k * k * c]), &dev);
        let grads = (crate::model::im2col_stride2(xt.clone(), k, pad) * rt)
            .sum()
            .backward();
        let got: Vec<f32> = xt.grad(&grads).unwrap().into_data().to_vec().unwrap();
        let mut want = vec![0.0f64; n * side * side * c];
        for b in 0..n {
            for oy in 0..out {
                for ox in 0..out {
                    for ky in 0..k {
                        for kx in 0..k {
                            let (y, xx) = (2 * oy + ky, 2 * ox + kx);
                            if y < pad || xx < pad || y >= side + pad || xx >= side + pad {
                                continue;
                            }
                            for ch in 0..c {
                                let row = (b * out + oy) * out + ox;
                                want[((b * side + y - pad) * side + xx - pad) * c + ch] +=
                                    r[(row * k * k + ky * k + kx) * c + ch] as f64;
                            }
                        }
                    }
                }
            }
        }
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (*a as f64 - b).abs() < 1e-5 * (1.0 + b.abs()),
                "gradient {a} vs {b} (side {side}, padding {pad})"
            );
        }
    }
    // The host's im2col of a frame (bytes) is the same first convolution, without padding and
    // with it.
    for (kernels, padding) in [([5, 3, 3], 0), ([3, 3, 3], 1), ([4, 3, 3], 2)] {
        let cfg = ModelConfig {
            encoder: ImageEncoder::Conv,
            conv_kernels: kernels,
            conv_padding: padding,
            ..ModelConfig::cpu()
        };
        let size = cfg.image_size;
        let mut img = envdist_core::Rgb8Image::new(size as u32, size as u32);
        for (i, v) in img.data.iter_mut().enumerate() {
            *v = (i * 37 % 251) as u8;
        }
        let obs = envdist_core::Observation {
            image: img.clone(),
            instruction: "x".into(),
            harness: Default::default(),
        };
        let f = crate::encode::encode(&obs, envdist_core::ActionMask::ALL, &cfg);
        let mut bufs = crate::encode::BatchBuffers::default();
        bufs.fill([&f].into_iter(), &cfg);
        let frame: Vec<f32> = img.data.iter().map(|b| *b as f32 * (1.0 / 255.0)).collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(frame, [1, size, size, 3]), &dev);
        let device_cols: Vec<f32> = crate::model::im2col_stride2(xt, kernels[0], padding)
            .into_data()
            .to_vec()
            .unwrap();
        assert_eq!(bufs.patches.len(), cfg.num_patches() * cfg.patch_values());
        assert_eq!(
            bufs.patches.len(),
            device_cols.len(),
            "{kernels:?} {padding}"
        );
        let differ = bufs
            .patches
            .iter()
            .zip(&device_cols)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differ, 0,
            "values of the host im2col that differ from the device's ({kernels:?}, padding {padding})"
        );
    }
}

#[test]
fn grouped_rows_give_the_plain_product_and_its_gradient() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::device::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(4);
    // 30 frames of 36 rows (groups of 14 frames would not divide 30: groups of 10), and
    // frames longer than GEMM_K_MAX rows (split in equal parts), and inputs wider than it.
    for (frames, per_frame, k) in [(30, 36, 20), (3, 900, 8), (4, 16, 700)] {
        let rows = frames * per_frame;
        let x: Vec<f32> = (0..rows * k).map(|_| rng.normal()).collect();
        let w: Vec<f32> = (0..k * 3).map(|_| rng.normal()).collect();
        let layer = |w: &[f32]| burn::nn::Linear::<B> {
            weight: burn::module::Param::from_tensor(
                Tensor::from_data(TensorData::new(w.to_vec(), [k, 3]), &dev).require_grad(),
            ),
            bias: None,
        };
        let xt = || Tensor::<B, 2>::from_data(TensorData::new(x.clone(), [rows, k]), &dev);
        let (grouped_layer, plain_layer) = (layer(&w), layer(&w));
        let grouped = crate::model::linear_row_groups(&grouped_layer, xt(), per_frame);
        let plain = plain_layer.forward(xt());
        let (g, p): (Vec<f32>, Vec<f32>) = (
            grouped.clone().into_data().to_vec().unwrap(),
            plain.clone().into_data().to_vec().unwrap(),
        );
        for (a, b) in g.iter().zip(&p) {
            assert!((a - b).abs() < 1e-3 * (1.0 + b.abs()), "{a} vs {b}");
        }
        let gg = grouped.powf_scalar(2.0).sum().backward();
        let gp = plain.powf_scalar(2.0).sum().backward();
        let dg: Vec<f32> = grouped_layer
            .weight
            .grad(&gg)
            .unwrap()
            .into_data()
            .to_vec()
            .unwrap();
        let dp: Vec<f32> = plain_layer
            .weight
            .grad(&gp)
            .unwrap()
            .into_data()
            .to_vec()
            .unwrap();
        for (a, b) in dg.iter().zip(&dp) {
            assert!((a - b).abs() < 1e-2 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}

/// The conv encoder trains to the same numbers on one thread and on two: its products keep
/// the `GEMM_K_MAX` invariant, and nothing in it sums in an order the thread count decides.
#[test]
fn the_conv_encoder_learns_and_gives_the_same_numbers_at_one_and_two_threads() {
    // Without padding (kernels 5, 3, 3) and with it (3, 3, 3, padding 1).
    for (kernels, padding) in [([5, 3, 3], 0), ([3, 3, 3], 1)] {
        the_conv_encoder_at(kernels, padding);
    }
}

/// Each update's policy loss, value loss, entropy, KL and gradient norm over `updates` updates
/// of `cfg` on the two toy goal envs at H0.
fn update_stats(cfg: TrainConfig, updates: usize) -> Vec<[f32; 5]> {
    let mut s = sampler(&["toy/goal", "toy/goal-mirrored"], HarnessLevel::H0);
    let mut t = Trainer::new(cfg, Arc::new(ToyFactory), Device::Cpu).unwrap();
    (0..updates)
        .map(|_| {
            let u = t.train_update(&mut s).unwrap();
            [
                u.policy_loss,
                u.value_loss,
                u.entropy,
                u.approx_kl,
                u.grad_norm,
            ]
        })
        .collect()
}

/// The bits of [`update_stats`].
fn update_bits(cfg: TrainConfig, updates: usize) -> Vec<[u32; 5]> {
    update_stats(cfg, updates)
        .into_iter()
        .map(|u| u.map(f32::to_bits))
        .collect()
}

fn the_conv_encoder_at(kernels: [usize; 3], padding: usize) {
    let run = |threads: usize| {
        at_threads(threads, || {
            let mut cfg = tiny(10_000);
            cfg.model.encoder = ImageEncoder::Conv;
            cfg.model.image_size = 24;
            cfg.model.conv_kernels = kernels;
            cfg.model.conv_padding = padding;
            update_bits(cfg, 3)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert!(one.iter().all(|u| f32::from_bits(u[1]).is_finite()));
}

/// The `cpu` preset's network trains to the same numbers on one thread and on two. burn's CPU
/// backend runs products of at least 192^3 multiply-adds on every thread (its `rayon` feature):
/// the `cpu` network's image and fusion layers at a 256-sample minibatch are above that, so
/// this test runs the threaded products. The threads split a product's output rows and
/// columns, never its contraction, so each value is the same sum in the same order; a change
/// that let the thread count decide an order (a threaded reduction, a split contraction) fails
/// here.
#[test]
fn the_cpu_network_gives_the_same_numbers_at_one_and_two_threads() {
    // At one shard (one graph per minibatch) and at two (the preset's and the records'
    // arithmetic): two shards one after another at one thread, side by side in pools of their
    // own at two threads (one thread a pool) and at four (two a pool, so a shard's products
    // are threaded too).
    for shards in [1, 2] {
        let run = |threads: usize| {
            at_threads(threads, || {
                let mut cfg = TrainConfig::preset("cpu").unwrap();
                cfg.num_envs = 16;
                cfg.total_env_steps = 10_000;
                cfg.learn_shards = shards;
                update_bits(cfg, 2)
            })
        };
        let one = run(1);
        assert_eq!(one, run(2), "{shards} shards");
        if shards == 2 {
            assert_eq!(one, run(4), "{shards} shards at four threads");
        }
        assert!(one.iter().all(|u| f32::from_bits(u[1]).is_finite()));
    }
}

/// Minibatch shards split the work, not the update: the statistics and the gradient's norm of
/// an update with 2 or 3 shards are the one-shard update's up to rounding (each shard's loss
/// is its share of the minibatch's, its gradients summed), with and without per-minibatch
/// advantages and in the critic's warm-up; the same shard count gives the same bits again.
#[test]
fn sharded_minibatches_give_the_whole_minibatchs_update() {
    let stats = |shards: usize, per_minibatch: bool, warmup: u64| {
        let mut cfg = tiny(10_000);
        cfg.learn_shards = shards;
        cfg.minibatch_advantage_norm = per_minibatch;
        cfg.value_warmup_updates = warmup;
        update_stats(cfg, 2)
    };
    // (The clip fraction is left out: a count, one row's rounding can move it by 1/64.)
    for (per_minibatch, warmup) in [(false, 0), (true, 0), (false, 1)] {
        let whole = stats(1, per_minibatch, warmup);
        for shards in [2, 3] {
            let split = stats(shards, per_minibatch, warmup);
            for (w, s) in whole.iter().flatten().zip(split.iter().flatten()) {
                assert!(
                    (w - s).abs() <= 2e-3 * w.abs().max(1e-2),
                    "{shards} shards, per-minibatch {per_minibatch}, warm-up {warmup}: \
                     {whole:?} against {split:?}"
                );
            }
            let again = stats(shards, per_minibatch, warmup);
            let bits =
                |v: &Vec<[f32; 5]>| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&split), bits(&again));
        }
    }
}

/// `minibatch_advantage_norm` standardises the advantages per minibatch (SB3's way): a real
/// change of the update (its statistics differ from the rollout-wide standardisation's), and
/// as reproducible.
#[test]
fn per_minibatch_advantage_norm_changes_the_update_and_is_reproducible() {
    let run = |per_minibatch: bool| {
        let mut cfg = tiny(10_000);
        cfg.minibatch_advantage_norm = per_minibatch;
        update_bits(cfg, 2)
    };
    let per_minibatch = run(true);
    assert_eq!(per_minibatch, run(true));
    assert_ne!(per_minibatch, run(false));
    assert!(
        per_minibatch
            .iter()
            .flatten()
            .all(|b| f32::from_bits(*b).is_finite())
    );
}
