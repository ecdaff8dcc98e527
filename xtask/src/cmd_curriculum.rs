//! `cargo xtask curriculum`: drive the HDC curriculum or one of its rivals (pass-rate
//! filtering, learnability, learning progress, SEC, the RLVE ladder, robust PLR) with a
//! synthetic learner and look at it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use envdist_core::{EnvId, EnvSpec, ScaleRange};
use envdist_curriculum::{
    CurriculumSampler, LearnerParams, SamplerConfig, SimulateOptions, SimulationFiles,
    SyntheticLearner,
};
use envdist_study::tools::curriculum_plots::{
    RIVAL_TRACE_SCHEMA_VERSION, RivalTraceLine, curriculum_trace_grid, rival_trace_grid,
};

use crate::progress::bar;

/// Arguments of `cargo xtask curriculum`.
#[derive(Debug, clap::Args)]
pub struct CurriculumArgs {
    #[command(subcommand)]
    command: CurriculumCommand,
}

#[derive(Debug, clap::Subcommand)]
enum CurriculumCommand {
    /// Drive the sampler with a synthetic learner (success rises with practice, falls with
    /// scale and weaker harness); write the trace, the sampler's state and a plot (`SimulationFiles`).
    Simulate(SimulateArgs),
    /// Print a default configuration as JSON (a starting point for --config).
    Config {
        /// An HDC mode or a rival (see `simulate --mode`); default HDC.
        #[arg(long)]
        mode: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
struct SimulateArgs {
    /// An HDC mode: full | harness_only | scale_only | none | global | baseline_uniform |
    /// baseline_h4 (overrides the mode of --config); or a rival sampler: pass_rate |
    /// learnability | learning_progress | sec | ladder | plr.
    #[arg(long)]
    mode: Option<String>,
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
    /// A JSON config file: an HdcConfig, a rival's config (with --mode naming the rival),
    /// or a tagged SamplerConfig (`{"kind": "sec", ...}`); missing fields take defaults.
    #[arg(long)]
    config: Option<PathBuf>,
    /// How many environments the plot shows.
    #[arg(long, default_value_t = 4)]
    plot_envs: usize,
}

/// Run the command.
pub fn run(args: CurriculumArgs) -> anyhow::Result<()> {
    match args.command {
        CurriculumCommand::Simulate(a) => {
            let config = choose(a.mode.as_deref(), a.config.as_deref())?;
            simulate(a, config)
        }
        CurriculumCommand::Config { mode } => {
            // HDC's file is its own config (what `--config` reads without `--mode`).
            let text = match choose(mode.as_deref(), None)? {
                SamplerConfig::Hdc(c) => serde_json::to_string_pretty(&c)?,
                c => serde_json::to_string_pretty(&c)?,
            };
            println!("{text}");
            Ok(())
        }
    }
}

/// Resolve `--mode` and `--config`: an HDC mode name (or none) reads the file as an
/// HdcConfig; a rival name reads the file as that rival's config (or a tagged one).
fn choose(mode: Option<&str>, config: Option<&Path>) -> anyhow::Result<SamplerConfig> {
    let file: Option<serde_json::Value> = match config {
        Some(p) => Some(envdist_core::io::read_json(p, None)?),
        None => None,
    };
    // The file's errors name it (the resolver sees only its JSON).
    SamplerConfig::resolve(mode, file).with_context(|| match config {
        Some(p) => format!("{} (with --mode)", p.display()),
        None => "--mode".into(),
    })
}

/// Synthetic environments with staggered scale ranges, so windows have different lengths.
fn synthetic_specs(n: usize) -> Vec<EnvSpec> {
    envdist_curriculum::synthetic_specs("sim", &envdist_curriculum::staggered_ranges(n))
}

/// Drive the sampler with the synthetic learner, then write the trace, the state and the
/// plot and print a summary. HDC's trace is one `TraceEvent` per episode (its staircase);
/// a rival's is about 200 snapshots of every environment, beside the learner's success at H4.
fn simulate(a: SimulateArgs, config: SamplerConfig) -> anyhow::Result<()> {
    anyhow::ensure!(a.envs > 0, "--envs: expected at least 1, found 0");
    anyhow::ensure!(a.steps > 0, "--steps: expected at least 1, found 0");
    // HDC runs are named by their mode, the rivals by their kind.
    let (name, hdc) = match &config {
        SamplerConfig::Hdc(c) => (c.mode.name(), true),
        other => (other.kind(), false),
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/envdist/curriculum-{name}")));
    let specs = synthetic_specs(a.envs);
    let mut sampler = config.build(&specs, a.seed)?;
    let mut learner = SyntheticLearner::new(&specs, LearnerParams::default(), a.seed);

    let bar = bar(a.steps, &format!("simulate {name} (episodes)"));
    // About 200 snapshots: enough to see each sampler move, few enough for a small figure.
    let every = (a.steps / 200).max(1);
    let mut snapshots: Vec<RivalTraceLine> = Vec::new();
    let options = SimulateOptions {
        steps: a.steps,
        seed: a.seed,
        trace: hdc,
    };
    let start = Instant::now();
    let sim = envdist_curriculum::simulate(
        sampler.as_mut(),
        &mut learner,
        options,
        &mut |done, s, l| {
            if !hdc && (done % every == 0 || done == a.steps) {
                for (snap, spec) in s.snapshot().into_iter().zip(&specs) {
                    snapshots.push(RivalTraceLine {
                        schema_version: RIVAL_TRACE_SCHEMA_VERSION,
                        step: done,
                        learner_h4: l.h4_success(spec),
                        snapshot: snap,
                    });
                }
            }
            if done % 4096 == 1 {
                bar.set_position(done - 1);
            }
        },
    )?;
    bar.finish_and_clear();
    let sim_secs = start.elapsed().as_secs_f64();

    let files = SimulationFiles::new(&out);
    let (trace_path, state_path, plot_path) = (files.trace(), files.state(), files.plot());
    let t_write = Instant::now();
    // The first `--plot-envs` environments, each with its scale range.
    let shown: Vec<(EnvId, ScaleRange)> = specs
        .iter()
        .take(a.plot_envs.max(1))
        .map(|s| (s.id.clone(), s.scale))
        .collect();
    if hdc {
        envdist_core::io::write_jsonl_atomic(&trace_path, &sim.trace)?;
    } else {
        envdist_core::io::write_jsonl_atomic(&trace_path, &snapshots)?;
    }
    sampler.save_state_file(&state_path)?;
    if hdc {
        curriculum_trace_grid(&plot_path, &sim.trace, &shown, name)?;
    } else {
        rival_trace_grid(&plot_path, &snapshots, &shown, specs.len(), name)?;
    }
    let write_secs = t_write.elapsed().as_secs_f64();

    println!(
        "simulated {} episodes over {} envs in {:.2}s ({:.2} M sample+learner+update/s); {} {name}, seed {}",
        a.steps,
        a.envs,
        sim_secs,
        a.steps as f64 / sim_secs / 1e6,
        if hdc { "mode" } else { "sampler" },
        a.seed
    );
    let moves = if hdc {
        format!(
            "{} window moves, {} level changes",
            sim.window_moves, sim.level_moves
        )
    } else {
        format!("{} episodes trained on", sim.trained)
    };
    println!(
        "success rate {:.3}; {moves}; learner at H4: {:.3}",
        sim.successes as f64 / a.steps as f64,
        learner.mean_h4_success(&specs)
    );
    match sampler.hdc() {
        Some(h) => print_status(h),
        None => print_snapshots(sampler.as_ref(), &learner, &specs),
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

/// HDC's stage status per environment.
fn print_status(h: &envdist_curriculum::HdcSampler) {
    println!(
        "{:<8} {:>5} {:>9} {:>10} {:>9} {:>6}",
        "env", "level", "window", "episodes", "success", "ready"
    );
    for s in h.status() {
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
}

/// A rival's snapshot per environment, beside the learner's success at H4.
fn print_snapshots(s: &dyn CurriculumSampler, learner: &SyntheticLearner, specs: &[EnvSpec]) {
    println!(
        "{:<8} {:>7} {:>7} {:>7} {:>5} {:>9} {:>10} {:>9} {:>8}",
        "env", "P(env)", "score", "success", "level", "scales", "episodes", "success", "H4 now"
    );
    for (e, spec) in s.snapshot().iter().zip(specs) {
        println!(
            "{:<8} {:>7.3} {:>7.3} {:>7.3} {:>5} {:>9} {:>10} {:>9.3} {:>8.3}",
            e.env.as_str(),
            e.probability,
            e.score,
            e.success,
            e.harness.to_string(),
            format!("{}..={}", e.scale_lo, e.scale_hi),
            e.episodes,
            e.successes as f64 / e.episodes.max(1) as f64,
            learner.h4_success(spec)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_curriculum::{HdcConfig, Mode};

    fn args(mode: &str, out: &Path) -> SimulateArgs {
        SimulateArgs {
            mode: Some(mode.into()),
            steps: 3000,
            envs: 2,
            seed: 1,
            out: Some(out.to_path_buf()),
            config: None,
            plot_envs: 2,
        }
    }

    #[test]
    fn modes_and_files_choose_the_sampler() {
        let d = std::env::temp_dir().join(format!("envdist-cmd-curriculum-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(
            choose(None, None).unwrap(),
            SamplerConfig::Hdc(HdcConfig::default())
        );
        assert!(
            matches!(choose(Some("global"), None).unwrap(), SamplerConfig::Hdc(c) if c.mode == Mode::Global)
        );
        assert!(matches!(
            choose(Some("hdc"), None).unwrap(),
            SamplerConfig::Hdc(_)
        ));
        for kind in &SamplerConfig::KINDS[1..] {
            assert_eq!(
                choose(Some(kind), None).unwrap(),
                SamplerConfig::default_for(kind).unwrap()
            );
        }
        // A rival's own config with --mode, or a tagged one alone.
        let plain = d.join("sec.json");
        std::fs::write(&plain, r#"{"temperature": 0.2}"#).unwrap();
        let SamplerConfig::Sec(c) = choose(Some("sec"), Some(&plain)).unwrap() else {
            panic!("expected SEC");
        };
        assert_eq!(c.temperature, 0.2);
        let tagged = d.join("tagged.json");
        std::fs::write(&tagged, r#"{"kind": "ladder", "window": 2}"#).unwrap();
        assert!(matches!(
            choose(None, Some(&tagged)).unwrap(),
            SamplerConfig::Ladder(c) if c.window == 2
        ));
        // The file's name is the outer context; `{:#}` shows the cause beneath it.
        let e = format!("{:#}", choose(Some("sec"), Some(&tagged)).err().unwrap());
        assert!(e.contains("tagged.json"), "{e}");
        assert!(e.contains("ladder") && e.contains("sec"), "{e}");
        let e = format!("{:#}", choose(Some("bandit"), None).err().unwrap());
        assert!(e.contains("harness_only") && e.contains("plr"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn every_rival_simulates_and_its_state_resumes() {
        for kind in &SamplerConfig::KINDS[1..] {
            let d = std::env::temp_dir().join(format!(
                "envdist-cmd-curriculum-{kind}-{}",
                std::process::id()
            ));
            let config = choose(Some(kind), None).unwrap();
            simulate(args(kind, &d), config.clone()).unwrap();
            let files = SimulationFiles::new(&d);
            let png = std::fs::read(files.plot()).unwrap();
            assert!(png.starts_with(b"\x89PNG"), "{kind}");
            let lines = std::fs::read_to_string(files.trace()).unwrap();
            // 201 snapshots (step 0, then every 15 of 3000) x 2 environments.
            assert_eq!(lines.lines().count(), 201 * 2, "{kind}");
            let mut s = config.build(&synthetic_specs(2), 99).unwrap();
            s.load_state_file(&files.state()).unwrap();
            assert_eq!(s.samples(), 3000, "{kind}");
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}
