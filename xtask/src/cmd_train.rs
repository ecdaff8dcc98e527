//! `cargo xtask train` and `cargo xtask gradients`: train a policy on a mixture of
//! environments, and extract per-environment gradients at a checkpoint.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel, TaskSampler};
use envdist_curriculum::{HdcConfig, HdcSampler};
use envdist_envs::Suite;
use envdist_trainer::{
    AdvantageKind, Baseline, Device, GradientConfig, GradientParams, ImageEncoder, Opened,
    PolicyModel, ProjectionKind, RunFiles, RunOptions, RunSpec, ScaleChoice, SingleTurn, Start,
    TrainConfig, TrainPreset, Trainer, UniformSampler,
};

/// Arguments of `cargo xtask train`.
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// Environments to train on, comma-separated (e.g. `maze/classic,collect/classic`).
    #[arg(long, value_delimiter = ',', required = true)]
    pub envs: Vec<String>,
    /// Task sampler.
    #[arg(long, value_enum, default_value = "uniform")]
    pub sampler: SamplerChoice,
    /// Harness level of the uniform sampler.
    #[arg(long, default_value = "H0")]
    pub harness: HarnessLevel,
    /// Scale: `min`, `mid`, `max`, an integer, or `uniform` (over each env's range).
    #[arg(long, default_value = "min")]
    pub scale: TrainScale,
    /// Environment steps to train for (default: the preset's budget).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Output directory (training log, TensorBoard event file, checkpoint, evaluation).
    #[arg(long, default_value = "runs/train")]
    pub out: PathBuf,
    /// `cpu` (flex), `libtorch` (needs `--features tch`) or `cuda` (`cuda:N`; needs `--features cuda`).
    #[arg(long, default_value = "cpu")]
    pub device: Device,
    /// Network and RL preset: `cpu`, `gpu` or `tiny` (default: the device's).
    #[arg(long)]
    pub preset: Option<TrainPreset>,
    /// Image encoder of the network: `patch-mlp` or `conv` (default: the preset's).
    #[arg(long)]
    pub encoder: Option<ImageEncoder>,
    /// `conv` encoder: widths of its three convolutions, comma-separated (default: the
    /// preset's, 16,32,32 for `cpu`).
    #[arg(long, value_parser = parse_widths)]
    pub conv_channels: Option<[usize; 3]>,
    /// Bootstrap the value of an episode cut by its step limit, as SB3 does (default: the
    /// preset's, which counts the cut as the failure it is).
    #[arg(long)]
    pub bootstrap_time_limits: bool,
    /// Override one field of the preset's config by its dotted path, the value as JSON
    /// (`--set lr=3e-4 --set model.patch=4 --set epochs=4`); applied after the flags above, and
    /// the result validated. Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_override)]
    pub overrides: Vec<(String, String)>,
    /// Seed of the model, the sampler and the rollouts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Advantage estimator.
    #[arg(long, value_enum, default_value = "gae")]
    pub advantage: AdvantageKind,
    /// Environments stepped together (default: the preset's).
    #[arg(long)]
    pub num_envs: Option<usize>,
    /// Canvas side the suite renders at (default: the model's input size).
    #[arg(long)]
    pub canvas: Option<u32>,
    /// Save a checkpoint every this many updates (0: only at the end).
    #[arg(long, default_value_t = 20)]
    pub checkpoint_every: u64,
    /// Continue the run checkpointed in `--out` instead of starting afresh.
    #[arg(long)]
    pub resume: bool,
    /// After training, evaluate greedily on this many fixed seeds per env at the training
    /// harness and at H4 (0: skip).
    #[arg(long, default_value_t = 50)]
    pub eval_seeds: u64,
    /// Scales to evaluate at, comma-separated (`min`, `mid`, `max`, integers; default: the
    /// training scale, or `min` when training over the whole range).
    #[arg(long, value_delimiter = ',')]
    pub eval_scale: Vec<ScaleChoice>,
}

/// Arguments of `cargo xtask gradients`.
#[derive(Debug, clap::Args)]
pub struct GradientsArgs {
    /// Checkpoint directory (`<train --out>/checkpoint`).
    #[arg(long)]
    pub checkpoint: PathBuf,
    /// Environments, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub envs: Vec<String>,
    /// Output safetensors file.
    #[arg(long)]
    pub out: PathBuf,
    /// Episodes per environment (M).
    #[arg(long, default_value_t = 512)]
    pub rollouts: usize,
    /// Projected dimension d.
    #[arg(long, default_value_t = 1024)]
    pub dim: usize,
    /// Distribution of the projection's entries.
    #[arg(long, value_enum, default_value = "rademacher")]
    pub projection: ProjectionKind,
    /// Harness level the episodes are played at.
    #[arg(long, default_value = "H4")]
    pub harness: HarnessLevel,
    /// Scale: `min`, `mid`, `max` or an integer.
    #[arg(long, default_value = "min")]
    pub scale: ScaleChoice,
    /// Seed of episodes and projection.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Discount of the returns in the policy gradient.
    #[arg(long, default_value_t = 1.0)]
    pub gamma: f32,
    /// Baseline subtracted from returns: per env `mean`, or the `value` head.
    #[arg(long, value_enum, default_value = "mean")]
    pub baseline: Baseline,
    /// Parameters differentiated: `all` or `head` (the policy head only, a cheap estimate).
    #[arg(long, value_enum, default_value = "all")]
    pub params: GradientParams,
    /// Cut every episode after this many steps (default: each env's own limit).
    #[arg(long)]
    pub max_episode_steps: Option<u32>,
    /// Single-turn envs: `exact` (the expectation over every answer) or `sampled` (one
    /// sampled answer per instance, like a multi-turn env).
    #[arg(long, value_enum, default_value = "exact")]
    pub single_turn: SingleTurn,
    /// GAE's lambda with `--baseline value` (1: return minus value).
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f32,
    /// `cpu` or `cuda`.
    #[arg(long, default_value = "cpu")]
    pub device: Device,
    /// Canvas side (default: the model's input size).
    #[arg(long)]
    pub canvas: Option<u32>,
}

/// Which task sampler `train` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SamplerChoice {
    /// Uniform over the envs at `--harness`.
    Uniform,
    /// Uniform over the envs at H4.
    H4,
    /// The full HDC curriculum with its default config, starting at H0.
    Hdc,
}

/// `--scale` of `train`: one choice, or uniform over each env's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrainScale(Option<ScaleChoice>);

impl std::str::FromStr for TrainScale {
    type Err = envdist_trainer::TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uniform" => Ok(Self(None)),
            other => Ok(Self(Some(other.parse()?))),
        }
    }
}

impl std::fmt::Display for TrainScale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("uniform"),
            Some(s) => write!(f, "{s}"),
        }
    }
}

fn env_ids(envs: &[String]) -> Vec<EnvId> {
    envs.iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(EnvId::new)
        .collect()
}

fn suite(canvas: u32) -> anyhow::Result<Arc<Suite>> {
    Ok(Arc::new(
        Suite::with_canvas(canvas).map_err(|e| anyhow::anyhow!("--canvas {canvas}: {e}"))?,
    ))
}

fn fmt_opt(x: Option<f32>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}

/// Run `train`.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let device = args.device;
    let envs = env_ids(&args.envs);
    let harness = match args.sampler {
        SamplerChoice::Uniform => args.harness,
        SamplerChoice::H4 => HarnessLevel::H4,
        // The curriculum starts at H0 and weakens per environment.
        SamplerChoice::Hdc => HarnessLevel::H0,
    };
    let scale = args.scale.0;
    let preset = args.preset.unwrap_or(match device {
        Device::Cpu | Device::LibTorch => TrainPreset::Cpu,
        Device::Cuda(_) => TrainPreset::Gpu,
    });
    let mut cfg = TrainConfig::of(preset);
    cfg.seed = args.seed;
    cfg.advantage = args.advantage;
    if let Some(e) = args.encoder {
        cfg.model.encoder = e;
    }
    if let Some(c) = &args.conv_channels {
        cfg.model.conv_channels = *c;
    }
    cfg.bootstrap_time_limits |= args.bootstrap_time_limits;
    if let Some(n) = args.num_envs {
        cfg.num_envs = n;
    }
    if let Some(s) = args.steps {
        cfg.total_env_steps = s;
    }
    for (path, value) in &args.overrides {
        // `--seed` also seeds the sampler, which the config does not hold: a seed set here
        // alone would leave the two apart.
        if path == "seed" {
            bail!("--set seed={value}: use --seed {value}, which seeds the sampler too");
        }
        cfg.set(path, value).context("--set")?;
    }
    let canvas = args.canvas.unwrap_or(cfg.model.image_size as u32);
    let suite = suite(canvas)?;
    let factory: Arc<dyn EnvFactory> = suite.clone();
    let mut sampler: Box<dyn TaskSampler> = if args.sampler == SamplerChoice::Hdc {
        let specs = suite.specs_of(&envs).context("--envs")?;
        Box::new(HdcSampler::new(
            &specs,
            None,
            HdcConfig::default(),
            args.seed,
        )?)
    } else {
        Box::new(UniformSampler::new(
            factory.as_ref(),
            &envs,
            harness,
            scale,
            args.seed,
        )?)
    };
    let files = RunFiles::new(&args.out);
    let steps = cfg.total_env_steps;
    let spec = RunSpec {
        config: cfg,
        start: Start::Fresh,
        device,
        resume: args.resume,
    };
    let (trainer, opened) = Trainer::open(&files, spec, factory.clone(), sampler.as_mut())
        .with_context(|| format!("opening the run in {}", args.out.display()))?;
    let mut trainer = trainer;
    if opened == Opened::Resumed {
        if args
            .steps
            .is_some_and(|s| s > trainer.config().total_env_steps)
        {
            bail!(
                "--steps {steps} is beyond the checkpointed run's budget {}: a resumed run keeps its learning-rate schedule",
                trainer.config().total_env_steps
            );
        }
        eprintln!(
            "resumed at update {} ({} env steps)",
            trainer.updates(),
            trainer.env_steps()
        );
    }
    let cfg = trainer.config().clone();
    eprintln!(
        "train: {} envs at {harness}, scale {}, device {device}, preset {preset}, encoder {}: {} params, {} envs x {} steps per update, budget {} env steps",
        envs.len(),
        args.scale,
        cfg.model.encoder.name(),
        trainer.policy().num_params(),
        cfg.num_envs,
        cfg.rollout_len,
        cfg.total_env_steps
    );
    let bar = crate::progress::bar(cfg.total_env_steps, "train (env steps)");
    bar.set_position(trainer.env_steps());
    let opts = RunOptions {
        out_dir: Some(args.out.clone()),
        checkpoint_every: args.checkpoint_every,
        stop_at: None,
    };
    let summary = trainer.run(sampler.as_mut(), &opts, &mut |s| {
        bar.set_position(s.env_steps);
        bar.set_message(format!(
            "succ {} ent {:.2} pg {:+.3} v {:.3} kl {:.3}",
            fmt_opt(s.success_rate),
            s.entropy,
            s.policy_loss,
            s.value_loss,
            s.approx_kl
        ));
        if s.update % 10 == 0 {
            let line = format!(
                "update {:>5} steps {:>8} success {} entropy {:.3} policy {:+.4} value {:.4} kl {:.4} {:.0} steps/s",
                s.update,
                s.env_steps,
                fmt_opt(s.success_rate),
                s.entropy,
                s.policy_loss,
                s.value_loss,
                s.approx_kl,
                s.env_steps_per_second
            );
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
        }
    })?;
    bar.finish_and_clear();
    println!(
        "trained {} updates, {} env steps in {:.1} s: {:.0} env steps/s including learning; recent sampled success {}",
        summary.updates,
        summary.env_steps,
        summary.seconds,
        summary.env_steps_per_second,
        fmt_opt(summary.recent_success_rate)
    );
    println!(
        "  of which rollouts (batched inference + env stepping) {:.0} env steps/s, learning (forward+backward+Adam, {} epochs) {:.0} samples/s",
        summary.rollout_steps_per_second, cfg.epochs, summary.learn_samples_per_second
    );
    if args.eval_seeds > 0 {
        let seeds: Vec<u64> = (0..args.eval_seeds).map(|i| 1_000_000 + i).collect();
        let policy = trainer.policy();
        let eval_scales: Vec<(String, ScaleChoice)> = if args.eval_scale.is_empty() {
            let s = scale.unwrap_or(ScaleChoice::Min);
            vec![(s.to_string(), s)]
        } else {
            args.eval_scale
                .iter()
                .map(|s| (s.to_string(), *s))
                .collect()
        };
        let mut levels = vec![harness];
        if harness != HarnessLevel::H4 {
            levels.push(HarnessLevel::H4);
        }
        let mut reports = Vec::new();
        for (scale_name, eval_scale) in &eval_scales {
            for &level in &levels {
                let r = envdist_trainer::evaluate(
                    &policy,
                    factory.as_ref(),
                    &envs,
                    &seeds,
                    level,
                    *eval_scale,
                )?;
                for s in &r.per_env {
                    println!(
                        "eval {level} scale {scale_name} {:<28} greedy success {:.2} (mean steps {:.1})",
                        s.env.as_str(),
                        s.success,
                        s.mean_steps
                    );
                }
                println!(
                    "eval {level} scale {scale_name} mean greedy success {:.3}",
                    r.mean
                );
                reports.push(r);
            }
        }
        envdist_core::io::write_json_atomic(args.out.join("eval.json"), &reports)?;
    }
    let name = |p: PathBuf| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let events = files
        .tensorboard_events()
        .pop()
        .map_or_else(String::new, |p| format!(", {}", name(p)));
    println!(
        "wrote {} ({}{events}, {}/{}) in {:.1} s",
        args.out.display(),
        name(files.train_log()),
        name(files.checkpoint()),
        if args.eval_seeds > 0 {
            ", eval.json"
        } else {
            ""
        },
        t0.elapsed().as_secs_f32()
    );
    Ok(())
}

/// Run `gradients`.
pub fn run_gradients(args: GradientsArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let device = args.device;
    let envs = env_ids(&args.envs);
    let model = PolicyModel::load(&args.checkpoint, device)?;
    let canvas = args.canvas.unwrap_or(model.config().image_size as u32);
    let suite = suite(canvas)?;
    let cfg = GradientConfig {
        rollouts_per_env: args.rollouts,
        harness: args.harness,
        scale: args.scale,
        dim: args.dim,
        projection: args.projection,
        seed: args.seed,
        gamma: args.gamma,
        baseline: args.baseline,
        params: args.params,
        max_episode_steps: args.max_episode_steps,
        single_turn: args.single_turn,
        lambda: args.lambda,
    };
    eprintln!(
        "gradients: {} envs x {} episodes at {}, {} params -> d = {}",
        envs.len(),
        cfg.rollouts_per_env,
        cfg.harness,
        model.num_params(),
        cfg.dim
    );
    let set = envdist_trainer::per_env_gradients(&model, suite.as_ref(), &envs, &cfg)?;
    set.write(&args.out)?;
    // The pairs a reader wants first: conflicting twins and same-family variants.
    let twins = suite.conflict_pairs(&set.env_ids);
    let family = |id: &EnvId| suite.spec(id).map(|s| s.family.clone());
    for i in 0..set.len() {
        for j in i + 1..set.len() {
            let (a, b) = (&set.env_ids[i], &set.env_ids[j]);
            let twin = twins
                .iter()
                .any(|(x, y)| (x == a && y == b) || (x == b && y == a));
            if twin || family(a) == family(b) || set.len() <= 6 {
                println!(
                    "cosine {:<24} {:<24} {:+.3}{}",
                    a.as_str(),
                    b.as_str(),
                    set.cosine(i, j),
                    if twin { "  (conflict twins)" } else { "" }
                );
            }
        }
    }
    println!(
        "wrote {} ({} x {}) in {:.1} s",
        args.out.display(),
        set.len(),
        set.dim,
        t0.elapsed().as_secs_f32()
    );
    Ok(())
}

/// `--conv-channels`: three positive widths, comma-separated.
pub(crate) fn parse_widths(s: &str) -> Result<[usize; 3], String> {
    let widths: Vec<usize> = s
        .split(',')
        .map(|w| w.trim().parse::<usize>().ok().filter(|w| *w > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("expected three positive widths like 16,32,32, found {s:?}"))?;
    widths
        .try_into()
        .map_err(|_| format!("expected three positive widths like 16,32,32, found {s:?}"))
}

/// `--set PATH=VALUE`: one override of the trainer config ([`TrainConfig::set`]).
pub(crate) fn parse_override(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((path, value)) if !path.trim().is_empty() && !value.trim().is_empty() => {
            Ok((path.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "expected PATH=VALUE, a dotted field of the trainer config and its value (e.g. lr=3e-4, model.patch=4), found {s:?}"
        )),
    }
}
