//! `cargo xtask bench-train`: training throughput of a preset on a fixed six-env mixture,
//! split into rollout and learning, as one line of JSON or a small table.

use std::sync::Arc;

use anyhow::Context;
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel};
use envdist_envs::Suite;
use envdist_trainer::{
    Device, ScaleChoice, TrainConfig, TrainPreset, UniformSampler, measure_throughput,
};
use serde::Serialize;

pub use envdist_envs::BENCH_ENVS;

/// Arguments of `cargo xtask bench-train`.
#[derive(Debug, clap::Args)]
pub struct BenchTrainArgs {
    /// Network and RL preset: `cpu`, `gpu` or `tiny` (default: `cpu` on the CPU, `gpu` on CUDA).
    #[arg(long)]
    pub preset: Option<TrainPreset>,
    /// `cpu` (flex), `libtorch` (the CPU through LibTorch; needs `--features tch`) or `cuda`
    /// (`cuda:N`; needs `--features cuda`).
    #[arg(long, default_value = "cpu")]
    pub device: Device,
    /// Passes over each rollout (default: the preset's).
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Samples per gradient step (default: the preset's).
    #[arg(long)]
    pub minibatch: Option<usize>,
    /// Updates timed.
    #[arg(long, default_value_t = 4)]
    pub updates: u32,
    /// Updates run first and not timed (allocation, kernel autotuning).
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Threads of the rayon pool (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Environments stepped together (default: the preset's).
    #[arg(long)]
    pub num_envs: Option<usize>,
    /// Harness level of the tasks (H0 encodes every text channel).
    #[arg(long, default_value = "H0")]
    pub harness: HarnessLevel,
    /// Image encoder of the network: `patch-mlp` or `conv` (default: the preset's).
    #[arg(long)]
    pub encoder: Option<envdist_trainer::ImageEncoder>,
    /// `conv` encoder: widths of its three convolutions, comma-separated (default: the
    /// preset's, 16,32,32 for `cpu`).
    #[arg(long, value_parser = crate::cmd_train::parse_widths)]
    pub conv_channels: Option<[usize; 3]>,
    /// Override one field of the preset's config by its dotted path, the value as JSON
    /// (`--set model.patch=4`; as `xtask train --set`). Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = crate::cmd_train::parse_override)]
    pub overrides: Vec<(String, String)>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Record<'a> {
    preset: TrainPreset,
    encoder: &'static str,
    harness: HarnessLevel,
    envs: &'a [&'a str],
    #[serde(flatten)]
    throughput: &'a envdist_trainer::Throughput,
    predicted_env_steps_per_s: f64,
}

/// Run `bench-train`.
pub fn run(args: BenchTrainArgs) -> anyhow::Result<()> {
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("--threads: the thread pool was already started")?;
    }
    let device = args.device;
    let preset = args.preset.unwrap_or(match device {
        Device::Cpu | Device::LibTorch => TrainPreset::Cpu,
        Device::Cuda(_) => TrainPreset::Gpu,
    });
    let mut cfg = TrainConfig::of(preset);
    if let Some(e) = args.encoder {
        cfg.model.encoder = e;
    }
    if let Some(c) = &args.conv_channels {
        cfg.model.conv_channels = *c;
    }
    if let Some(n) = args.num_envs {
        cfg.num_envs = n;
    }
    if let Some(n) = args.epochs {
        cfg.epochs = n;
    }
    if let Some(n) = args.minibatch {
        cfg.minibatch = n;
    }
    for (path, value) in &args.overrides {
        cfg.set(path, value).context("--set")?;
    }
    let suite = Arc::new(Suite::with_canvas(cfg.model.image_size as u32)?);
    let factory: Arc<dyn EnvFactory> = suite;
    let envs: Vec<EnvId> = BENCH_ENVS.iter().map(|e| EnvId::new(*e)).collect();
    let mut sampler = UniformSampler::new(
        factory.as_ref(),
        &envs,
        args.harness,
        Some(ScaleChoice::Min),
        0,
    )?;
    if !args.json {
        eprintln!(
            "bench-train: preset {preset}, device {device}, {} envs x {} steps per update, {} warm-up + {} timed updates ...",
            cfg.num_envs, cfg.rollout_len, args.warmup, args.updates
        );
    }
    let cfg_encoder = cfg.model.encoder.name();
    let t = measure_throughput(
        cfg,
        factory,
        device,
        &mut sampler,
        args.warmup,
        args.updates,
    )?;
    let record = Record {
        preset,
        encoder: cfg_encoder,
        harness: args.harness,
        envs: &BENCH_ENVS,
        throughput: &t,
        predicted_env_steps_per_s: t.predicted_env_steps_per_s(),
    };
    if args.json {
        println!("{}", serde_json::to_string(&record)?);
    } else {
        println!(
            "preset {preset} on {} ({} threads), {} params, batch {} ({} envs), minibatch {}{}, {} epochs:",
            t.device,
            t.threads,
            t.params,
            t.batch,
            t.num_envs,
            t.minibatch,
            if t.learn_shards > 1 {
                format!(" in {} shards", t.learn_shards)
            } else {
                String::new()
            },
            t.epochs
        );
        println!(
            "  end to end   {:>10.0} env steps/s (rollout and learning alone predict {:.0})",
            t.env_steps_per_s,
            t.predicted_env_steps_per_s()
        );
        println!("  rollouts     {:>10.0} env steps/s", t.rollout_steps_per_s);
        println!("  learning     {:>10.0} samples/s", t.learn_samples_per_s);
        println!(
            "  other        {:>10.3} s per update",
            t.other_seconds_per_update
        );
    }
    Ok(())
}
