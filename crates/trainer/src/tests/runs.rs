//! Runs: learning, resuming, the KL penalty, the run's files and TensorBoard events, bad inputs.

use super::*;

#[test]
fn learns_the_toy_grid_from_hints() {
    let factory = Arc::new(ToyFactory);
    let mut s = sampler(&["toy/goal"], HarnessLevel::H0);
    let cfg = tiny(6_000);
    let mut t = Trainer::new(cfg, factory.clone(), Device::Cpu).unwrap();
    let before = goal_eval(&t.policy());
    let summary = t.run(&mut s, &RunOptions::default(), &mut |_| {}).unwrap();
    let after = goal_eval(&t.policy());
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
    assert!(!dir.join(crate::checkpoint::START_FILE).exists());
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
    let eval = |model: &PolicyModel| {
        let (seeds, h4) = ([1, 2, 3], HarnessLevel::H4);
        evaluate(model, factory.as_ref(), &envs, &seeds, h4, ScaleChoice::Min).unwrap()
    };
    assert_eq!(eval(&m), eval(&t.policy()));
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
        (log, goal_eval(&t.policy()).mean)
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
