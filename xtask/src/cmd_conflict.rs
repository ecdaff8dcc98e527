//! `cargo xtask conflict-estimates`: cheaper estimates of the per-environment gradients behind
//! AES's conflict term against the study's full estimate (the study is
//! `envdist_study::conflict`; its docs say what each estimate and statistic is).
//!
//! ```text
//! cargo xtask conflict-estimates --checkpoint runs/experiment-cpu/base/checkpoint \
//!     --profiles runs/experiment-cpu/profiles/profiles.json --out conflict-estimates.json
//! cargo xtask conflict-estimates ... --sample 50 --estimates head,ep32,head+ep32
//! ```

use std::path::PathBuf;
use std::time::Instant;

use envdist_study::presets::{study_gradients, study_selection};
use envdist_study::tools::conflict::{
    ConflictStudy, DEFAULT_ESTIMATES, Estimate, run as measure, table,
};
use envdist_study::{ExperimentConfig, Preset};
use envdist_trainer::Device;

use crate::progress::Terminal;

/// Arguments of `cargo xtask conflict-estimates`.
#[derive(Debug, clap::Args)]
pub struct ConflictArgs {
    /// Checkpoint of the model whose gradients are estimated (a study's
    /// `base/checkpoint`: the base model).
    #[arg(long)]
    checkpoint: PathBuf,
    /// Profiles JSON (core's ProfileSet) the AES selections are made on.
    #[arg(long)]
    profiles: PathBuf,
    /// Environments: `all` (every environment of the profiles: the study's pool) or
    /// comma-separated ids (each needs a profile).
    #[arg(long, value_delimiter = ',', default_value = "all")]
    envs: Vec<String>,
    /// Keep only N of those environments, evenly spaced in their order (a quicker subset).
    #[arg(long)]
    sample: Option<usize>,
    /// Estimates to measure, comma-separated; each is reference changes joined by `+`:
    /// `head`, `all`, `ep<N>`, `d<N>`, `t<N>`, `exact`, `sampled`, `mean`, `value`, `lam<N>`,
    /// `seed<N>` (e.g. `head+ep32`), or `noise` alone.
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_ESTIMATES)]
    estimates: Vec<Estimate>,
    /// Episodes per environment of the reference (the study's `gradients.rollouts_per_env`).
    #[arg(long, default_value_t = study_gradients().rollouts_per_env)]
    episodes: usize,
    /// Projection dimension of the reference (the study's `gradients.dim`).
    #[arg(long, default_value_t = study_gradients().dim)]
    dim: usize,
    /// The study's master seed (default: the `cpu` preset's); the gradient seed derives from
    /// it as in the gradients stage.
    #[arg(long, default_value_t = ExperimentConfig::preset(Preset::Cpu).seed)]
    seed: u64,
    /// AES budget (the study's `k`).
    #[arg(long, default_value_t = ExperimentConfig::preset(Preset::Cpu).selection.k)]
    k: usize,
    /// Fraction of all pairs counted as the most conflicting (for the recall).
    #[arg(long, default_value_t = 0.05)]
    conflict_fraction: f32,
    /// An estimate is called stable when its AES overlap is at least this...
    #[arg(long, default_value_t = 0.9)]
    min_overlap: f32,
    /// ...and its recall of the most conflicting pairs at least this.
    #[arg(long, default_value_t = 0.8)]
    min_recall: f32,
    /// The estimate every row is also compared with, when measured: an independent repeat of
    /// the reference.
    #[arg(long, default_value = "seed1")]
    replicate: String,
    /// Keep zero-gradient environments in the AES selections (seen as conflict-free, the
    /// paper's literal objective) instead of leaving them out as unknown (the study's
    /// `selection.exclude_zero_gradient`).
    #[arg(long)]
    keep_zero_gradient: bool,
    /// `cpu` (flex), `libtorch` (needs `--features tch`) or `cuda` (`cuda:N`; needs `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: Device,
    /// Write the measurements as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write every gradient set (reference included) as `DIR/<name>.safetensors`.
    #[arg(long, value_name = "DIR")]
    save_sets: Option<PathBuf>,
    /// Also rerun every estimate at gradient seed + 1 and compare it with its own rerun (AES
    /// picks a rerun of the gradients stage keeps; doubles the time of estimates whose rerun
    /// is not already among them).
    #[arg(long)]
    own_replicates: bool,
}

/// Run `conflict-estimates`.
pub fn run(args: ConflictArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let study = ConflictStudy {
        checkpoint: args.checkpoint,
        profiles: args.profiles,
        envs: args.envs,
        sample: args.sample,
        estimates: args.estimates,
        reference: envdist_trainer::GradientConfig {
            rollouts_per_env: args.episodes,
            dim: args.dim,
            ..study_gradients()
        },
        seed: args.seed,
        selection: envdist_selection::SelectConfig {
            exclude_zero_gradient: !args.keep_zero_gradient,
            ..study_selection(args.k, args.seed)
        },
        conflict_fraction: args.conflict_fraction,
        min_overlap: args.min_overlap,
        min_recall: args.min_recall,
        replicate: args.replicate,
        device: args.device,
        save_sets: args.save_sets,
        own_replicates: args.own_replicates,
    };
    let report = measure(&study, &Terminal)?;
    print!("{}", table(&report));
    if let Some(out) = &args.out {
        envdist_core::io::write_json_atomic(out, &report)?;
        eprintln!("wrote {}", out.display());
    }
    eprintln!("done in {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
