//! `cargo xtask curriculum`: drive the HDC curriculum with a synthetic learner and look at it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use envdist_core::{EnvId, EnvSpec, ScaleRange};
use envdist_curriculum::{
    HdcConfig, HdcSampler, LearnerParams, Mode, SyntheticLearner, TraceEvent, UpdateEffect,
};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `cargo xtask curriculum`.
#[derive(Debug, clap::Args)]
pub struct CurriculumArgs {
    #[command(subcommand)]
    command: CurriculumCommand,
}

#[derive(Debug, clap::Subcommand)]
enum CurriculumCommand {
    /// Drive the sampler with a synthetic learner (success rises with practice, falls with
    /// scale and weaker harness); write trace.jsonl, state.json and curriculum.png.
    Simulate(SimulateArgs),
    /// Print the default curriculum configuration as JSON (a starting point for --config).
    Config,
}

#[derive(Debug, clap::Args)]
struct SimulateArgs {
    /// full | harness_only | scale_only | none | global | baseline_uniform | baseline_h4
    /// (overrides the mode of --config).
    #[arg(long)]
    mode: Option<Mode>,
    /// Episodes to simulate.
    #[arg(long, default_value_t = 100_000)]
    steps: u64,
    /// Synthetic environments (scale ranges from 2..=5 up to 2..=10).
    #[arg(long, default_value_t = 8)]
    envs: usize,
    /// Seed of the sampler and the learner.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output directory (default target/envdist/curriculum-<mode>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// A JSON HdcConfig file (missing fields take their defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// How many environments the plot shows.
    #[arg(long, default_value_t = 4)]
    plot_envs: usize,
}

/// Run the command.
pub fn run(args: CurriculumArgs) -> anyhow::Result<()> {
    match args.command {
        CurriculumCommand::Simulate(a) => simulate(a),
        CurriculumCommand::Config => {
            println!("{}", serde_json::to_string_pretty(&HdcConfig::default())?);
            Ok(())
        }
    }
}

/// Synthetic environments with staggered scale ranges, so windows have different lengths.
fn synthetic_specs(n: usize) -> Vec<EnvSpec> {
    envdist_curriculum::synthetic_specs("sim", &envdist_curriculum::staggered_ranges(n))
}

fn simulate(a: SimulateArgs) -> anyhow::Result<()> {
    anyhow::ensure!(a.envs > 0, "--envs: expected at least 1, found 0");
    anyhow::ensure!(a.steps > 0, "--steps: expected at least 1, found 0");
    let mut config: HdcConfig = match &a.config {
        Some(p) => envdist_core::io::read_json(p, None)?,
        None => HdcConfig::default(),
    };
    if let Some(m) = a.mode {
        config.mode = m;
    }
    let mode = config.mode;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/envdist/curriculum-{mode}")));
    let specs = synthetic_specs(a.envs);
    let mut sampler = HdcSampler::new(&specs, None, config, a.seed)?;
    let mut learner = SyntheticLearner::new(&specs, LearnerParams::default(), a.seed);

    let bar = ProgressBar::new(a.steps);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("simulate {mode}"));
    let start = Instant::now();
    let mut trace: Vec<TraceEvent> = Vec::with_capacity(a.steps as usize);
    let (mut window_ups, mut level_ups) = (0u64, 0u64);
    let mut successes = 0u64;
    for step in 0..a.steps {
        let task = sampler.sample_task();
        let outcome = learner.play(&task);
        successes += outcome.success as u64;
        match sampler.record(&outcome) {
            UpdateEffect::WindowUp => window_ups += 1,
            UpdateEffect::LevelUp | UpdateEffect::GlobalLevelUp => level_ups += 1,
            _ => {}
        }
        if let Some(e) = sampler.trace_event(step, &outcome) {
            trace.push(e);
        }
        if step % 4096 == 0 {
            bar.set_position(step);
        }
    }
    bar.finish_and_clear();
    let sim_secs = start.elapsed().as_secs_f64();

    let trace_path = out.join("trace.jsonl");
    let state_path = out.join("state.json");
    let plot_path = out.join("curriculum.png");
    let t_write = Instant::now();
    envdist_core::io::write_jsonl_atomic(&trace_path, &trace)?;
    sampler.save(&state_path)?;
    let shown: Vec<usize> = (0..a.envs.min(a.plot_envs.max(1))).collect();
    plot_trace(&plot_path, &specs, &trace, &shown, mode)?;
    let write_secs = t_write.elapsed().as_secs_f64();

    println!(
        "simulated {} episodes over {} envs in {:.2}s ({:.2} M sample+learner+update/s); mode {mode}, seed {}",
        a.steps,
        a.envs,
        sim_secs,
        a.steps as f64 / sim_secs / 1e6,
        a.seed
    );
    println!(
        "success rate {:.3}; {window_ups} window moves, {level_ups} level changes",
        successes as f64 / a.steps as f64
    );
    println!(
        "{:<8} {:>5} {:>9} {:>10} {:>9} {:>6}",
        "env", "level", "window", "episodes", "success", "ready"
    );
    for s in sampler.status() {
        println!(
            "{:<8} {:>5} {:>9} {:>10} {:>9.3} {:>6}",
            s.env.as_str(),
            s.harness.to_string(),
            format!("{}..={}", s.window.0, s.window.1),
            s.episodes,
            s.successes as f64 / s.episodes.max(1) as f64,
            s.ready
        );
    }
    println!(
        "wrote {}, {}, {} in {:.2}s",
        trace_path.display(),
        state_path.display(),
        plot_path.display(),
        write_secs
    );
    Ok(())
}

/// Two panels per shown env: its current harness level, and its scale window (bottom, top),
/// over the global step; both as staircases.
fn plot_trace(
    path: &Path,
    specs: &[EnvSpec],
    trace: &[TraceEvent],
    shown: &[usize],
    mode: Mode,
) -> anyhow::Result<()> {
    let envs: Vec<(EnvId, ScaleRange)> = shown
        .iter()
        .map(|&i| (specs[i].id.clone(), specs[i].scale))
        .collect();
    xtask::experiment::figures::curriculum_trace_grid(path, trace, &envs, mode.name())
}
