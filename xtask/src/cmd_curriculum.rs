//! `cargo xtask curriculum`: drive the HDC curriculum or one of its rivals (pass-rate
//! filtering, learnability, learning progress, SEC, the RLVE ladder, robust PLR) with a
//! synthetic learner and look at it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use envdist_core::{EnvId, EnvSpec, HarnessLevel, Rng, ScaleRange, Task};
use envdist_curriculum::{
    CurriculumSampler, EnvSnapshot, HdcConfig, HdcSampler, LearnerParams, Mode, SamplerConfig,
    SyntheticLearner, TraceEvent, UpdateEffect,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use xtask::plot::{Legend, LineChart, Series, line_chart_grid};

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
        CurriculumCommand::Simulate(a) => match choose(a.mode.as_deref(), a.config.as_deref())? {
            Choice::Hdc(config) => simulate(a, config),
            Choice::Rival(config) => simulate_rival(a, config),
        },
        CurriculumCommand::Config { mode } => {
            let text = match choose(mode.as_deref(), None)? {
                Choice::Hdc(c) => serde_json::to_string_pretty(&c)?,
                Choice::Rival(c) => serde_json::to_string_pretty(&c)?,
            };
            println!("{text}");
            Ok(())
        }
    }
}

/// HDC (with its own config type and trace) or a rival (through the registry).
enum Choice {
    Hdc(HdcConfig),
    Rival(SamplerConfig),
}

/// Resolve `--mode` and `--config`: an HDC mode name (or none) keeps the HDC path and its
/// HdcConfig file; a rival name reads the file as that rival's config (or a tagged one).
fn choose(mode: Option<&str>, config: Option<&Path>) -> anyhow::Result<Choice> {
    let file: Option<serde_json::Value> = match config {
        Some(p) => Some(envdist_core::io::read_json(p, None)?),
        None => None,
    };
    // What the file holds is checked below: its errors name it.
    let in_file = || config.map_or_else(String::new, |p| p.display().to_string());
    let tagged = file
        .as_ref()
        .and_then(|v| v.get("kind"))
        .and_then(|k| k.as_str())
        .map(str::to_owned);
    let hdc_mode = match mode {
        None => None,
        Some(m) => match m.parse::<Mode>() {
            Ok(mode) => Some(mode),
            Err(_) => {
                let kind = SamplerConfig::default_for(m)
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "--mode {m:?}: expected an HDC mode ({}) or a sampler ({})",
                            Mode::ALL.map(Mode::name).join(", "),
                            SamplerConfig::KINDS.join(", ")
                        )
                    })?
                    .kind();
                let config = match file {
                    None => SamplerConfig::default_for(kind)?,
                    Some(mut v) => {
                        if let Some(t) = &tagged {
                            anyhow::ensure!(
                                t == kind,
                                "--config says kind {t:?} but --mode asks for {kind:?}"
                            );
                        } else if let serde_json::Value::Object(map) = &mut v {
                            map.insert("kind".into(), kind.into());
                        }
                        SamplerConfig::from_json(&v).with_context(in_file)?
                    }
                };
                return Ok(match config {
                    SamplerConfig::Hdc(c) => Choice::Hdc(c),
                    other => Choice::Rival(other),
                });
            }
        },
    };
    let mut config = match (file, tagged) {
        (Some(v), Some(_)) => match SamplerConfig::from_json(&v).with_context(in_file)? {
            SamplerConfig::Hdc(c) => c,
            other if hdc_mode.is_none() => return Ok(Choice::Rival(other)),
            other => anyhow::bail!(
                "--config holds a {} configuration but --mode asks for HDC mode {}",
                other.kind(),
                hdc_mode.map_or("?", Mode::name)
            ),
        },
        (Some(v), None) => serde_json::from_value(v).with_context(in_file)?,
        (None, _) => HdcConfig::default(),
    };
    if let Some(m) = hdc_mode {
        config.mode = m;
    }
    Ok(Choice::Hdc(config))
}

/// Synthetic environments with staggered scale ranges, so windows have different lengths.
fn synthetic_specs(n: usize) -> Vec<EnvSpec> {
    envdist_curriculum::synthetic_specs("sim", &envdist_curriculum::staggered_ranges(n))
}

fn simulate(a: SimulateArgs, config: HdcConfig) -> anyhow::Result<()> {
    anyhow::ensure!(a.envs > 0, "--envs: expected at least 1, found 0");
    anyhow::ensure!(a.steps > 0, "--steps: expected at least 1, found 0");
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
        "success rate {:.3}; {window_ups} window moves, {level_ups} level changes; learner at H4: {:.3}",
        successes as f64 / a.steps as f64,
        mean_h4(&learner, &specs)
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

/// The learner's success probability at H4 (the evaluation condition), averaged over the
/// environment's scales: how good it is, whatever the sampler trained it on.
fn h4_success(learner: &SyntheticLearner, spec: &EnvSpec) -> f64 {
    let r = spec.scale;
    let n = (r.max - r.min) as u64 + 1;
    (r.min..=r.max)
        .map(|scale| {
            learner.success_probability(&Task {
                env: spec.id.clone(),
                seed: 0,
                harness: HarnessLevel::H4,
                scale,
            }) as f64
        })
        .sum::<f64>()
        / n as f64
}

/// [`h4_success`] averaged over every environment.
fn mean_h4(learner: &SyntheticLearner, specs: &[EnvSpec]) -> f64 {
    specs.iter().map(|s| h4_success(learner, s)).sum::<f64>() / specs.len() as f64
}

/// Schema version of a rival's trace lines.
const RIVAL_TRACE_SCHEMA_VERSION: u32 = 1;

/// One line of a rival's trace: an environment's snapshot at a step, and the learner's
/// success at H4 there.
#[derive(Debug, Clone, Serialize)]
struct RivalTraceLine {
    schema_version: u32,
    step: u64,
    #[serde(flatten)]
    snapshot: EnvSnapshot,
    learner_h4: f64,
}

fn simulate_rival(a: SimulateArgs, config: SamplerConfig) -> anyhow::Result<()> {
    anyhow::ensure!(a.envs > 0, "--envs: expected at least 1, found 0");
    anyhow::ensure!(a.steps > 0, "--steps: expected at least 1, found 0");
    let kind = config.kind();
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/envdist/curriculum-{kind}")));
    let specs = synthetic_specs(a.envs);
    let mut sampler = config.build(&specs, a.seed)?;
    let mut learner = SyntheticLearner::new(&specs, LearnerParams::default(), a.seed);
    // Episodes a trainer would not learn from (robust PLR's new levels) are played without
    // practice: their success is drawn here from the learner's probability.
    let mut eval_rng = Rng::derive(a.seed, 3);

    let bar = ProgressBar::new(a.steps);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("simulate {kind}"));
    let start = Instant::now();
    // About 200 snapshots: enough to see each sampler move, few enough for a small figure.
    let every = (a.steps / 200).max(1);
    let mut trace: Vec<RivalTraceLine> = Vec::new();
    let (mut successes, mut trained) = (0u64, 0u64);
    let record = |trace: &mut Vec<RivalTraceLine>,
                  step: u64,
                  s: &dyn CurriculumSampler,
                  l: &SyntheticLearner| {
        for (snap, spec) in s.snapshot().into_iter().zip(&specs) {
            trace.push(RivalTraceLine {
                schema_version: RIVAL_TRACE_SCHEMA_VERSION,
                step,
                learner_h4: h4_success(l, spec),
                snapshot: snap,
            });
        }
    };
    record(&mut trace, 0, sampler.as_ref(), &learner);
    for step in 0..a.steps {
        let task = sampler.sample();
        let outcome = if sampler.trains_on(&task) {
            trained += 1;
            learner.play(&task)
        } else {
            let success = eval_rng.chance(learner.success_probability(&task));
            envdist_core::EpisodeOutcome {
                task,
                success,
                episode_return: success as u32 as f32,
                steps: 1,
            }
        };
        successes += outcome.success as u64;
        sampler.update(&outcome);
        if (step + 1) % every == 0 || step + 1 == a.steps {
            record(&mut trace, step + 1, sampler.as_ref(), &learner);
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
    sampler.save_state_file(&state_path)?;
    let shown: Vec<usize> = (0..a.envs.min(a.plot_envs.max(1))).collect();
    plot_rival_trace(&plot_path, &specs, &trace, &shown, kind)?;
    let write_secs = t_write.elapsed().as_secs_f64();

    println!(
        "simulated {} episodes over {} envs in {:.2}s ({:.2} M sample+learner+update/s); sampler {kind}, seed {}",
        a.steps,
        a.envs,
        sim_secs,
        a.steps as f64 / sim_secs / 1e6,
        a.seed
    );
    println!(
        "success rate {:.3}; {trained} episodes trained on; learner at H4: {:.3}",
        successes as f64 / a.steps as f64,
        mean_h4(&learner, &specs)
    );
    println!(
        "{:<8} {:>7} {:>7} {:>7} {:>5} {:>9} {:>10} {:>9} {:>8}",
        "env", "P(env)", "score", "success", "level", "scales", "episodes", "success", "H4 now"
    );
    for (s, spec) in sampler.snapshot().iter().zip(&specs) {
        println!(
            "{:<8} {:>7.3} {:>7.3} {:>7.3} {:>5} {:>9} {:>10} {:>9.3} {:>8.3}",
            s.env.as_str(),
            s.probability,
            s.score,
            s.success,
            s.harness.to_string(),
            format!("{}..={}", s.scale_lo, s.scale_hi),
            s.episodes,
            s.successes as f64 / s.episodes.max(1) as f64,
            h4_success(&learner, spec)
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

/// Per shown env, one column of panels over the global step: (1) its draw probability
/// relative to uniform, (2) the sampler's score and success estimate beside the learner's
/// true success at H4, (3) the scales its next task can take (lowest, expected, highest),
/// and (4) the expected harness level when the sampler moves it.
fn plot_rival_trace(
    path: &Path,
    specs: &[EnvSpec],
    trace: &[RivalTraceLine],
    shown: &[usize],
    kind: &str,
) -> anyhow::Result<()> {
    let n = specs.len() as f64;
    let harness_moves = trace
        .iter()
        .any(|l| (l.snapshot.mean_harness - 4.0).abs() > 1e-9);
    let mut rows: Vec<Vec<LineChart>> = vec![Vec::new(); if harness_moves { 4 } else { 3 }];
    for &i in shown {
        let (id, range): (&EnvId, ScaleRange) = (&specs[i].id, specs[i].scale);
        let lines: Vec<&RivalTraceLine> = trace.iter().filter(|l| &l.snapshot.env == id).collect();
        let x: Vec<f32> = lines.iter().map(|l| l.step as f32).collect();
        let col = |f: &dyn Fn(&RivalTraceLine) -> f64| -> Vec<f32> {
            lines.iter().map(|l| f(l) as f32).collect()
        };
        rows[0].push(LineChart {
            title: format!("{id} ({kind}): draw probability"),
            x_label: "episode (all envs)".into(),
            y_label: "P(env) x envs (1 = uniform)".into(),
            series: vec![Series::line(
                "P(env) x envs",
                x.clone(),
                col(&|l| l.snapshot.probability * n),
            )],
            y_range: None,
            legend: Legend::UpperRight,
        });
        rows[1].push(LineChart {
            title: format!("{id}: score and success"),
            x_label: "episode (all envs)".into(),
            y_label: "value".into(),
            series: vec![
                Series::line("sampler score", x.clone(), col(&|l| l.snapshot.score)),
                Series::line(
                    "sampler success est.",
                    x.clone(),
                    col(&|l| l.snapshot.success),
                ),
                Series::line(
                    "learner P(success) at H4",
                    x.clone(),
                    col(&|l| l.learner_h4),
                ),
            ],
            y_range: None,
            legend: Legend::LowerRight,
        });
        rows[2].push(LineChart {
            title: format!("{id}: scales drawn in {}..={}", range.min, range.max),
            x_label: "episode (all envs)".into(),
            y_label: "scale".into(),
            series: vec![
                Series::steps("highest", x.clone(), col(&|l| l.snapshot.scale_hi as f64)),
                Series::line("expected", x.clone(), col(&|l| l.snapshot.mean_scale)),
                Series::steps("lowest", x.clone(), col(&|l| l.snapshot.scale_lo as f64)),
            ],
            y_range: Some((range.min as f32 - 0.5, range.max as f32 + 0.5)),
            legend: Legend::LowerRight,
        });
        if harness_moves {
            rows[3].push(LineChart {
                title: format!("{id}: harness level drawn"),
                x_label: "episode (all envs)".into(),
                y_label: "level (0 = H0 .. 4 = H4)".into(),
                series: vec![Series::line(
                    "expected level",
                    x.clone(),
                    col(&|l| l.snapshot.mean_harness),
                )],
                y_range: Some((-0.2, 4.2)),
                legend: Legend::LowerRight,
            });
        }
    }
    let charts: Vec<LineChart> = rows.into_iter().flatten().collect();
    line_chart_grid(path, &charts, shown.len(), (520, 340))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(choose(None, None).unwrap(), Choice::Hdc(c) if c == HdcConfig::default()));
        assert!(
            matches!(choose(Some("global"), None).unwrap(), Choice::Hdc(c) if c.mode == Mode::Global)
        );
        assert!(matches!(choose(Some("hdc"), None).unwrap(), Choice::Hdc(_)));
        for kind in &SamplerConfig::KINDS[1..] {
            match choose(Some(kind), None).unwrap() {
                Choice::Rival(c) => assert_eq!(c, SamplerConfig::default_for(kind).unwrap()),
                Choice::Hdc(_) => panic!("{kind} chose HDC"),
            }
        }
        // A rival's own config with --mode, or a tagged one alone.
        let plain = d.join("sec.json");
        std::fs::write(&plain, r#"{"temperature": 0.2}"#).unwrap();
        let Choice::Rival(SamplerConfig::Sec(c)) = choose(Some("sec"), Some(&plain)).unwrap()
        else {
            panic!("expected SEC");
        };
        assert_eq!(c.temperature, 0.2);
        let tagged = d.join("tagged.json");
        std::fs::write(&tagged, r#"{"kind": "ladder", "window": 2}"#).unwrap();
        assert!(matches!(
            choose(None, Some(&tagged)).unwrap(),
            Choice::Rival(SamplerConfig::Ladder(c)) if c.window == 2
        ));
        let e = choose(Some("sec"), Some(&tagged))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("ladder") && e.contains("sec"), "{e}");
        let e = choose(Some("bandit"), None).err().unwrap().to_string();
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
            let Choice::Rival(config) = choose(Some(kind), None).unwrap() else {
                panic!("{kind}");
            };
            simulate_rival(args(kind, &d), config.clone()).unwrap();
            let png = std::fs::read(d.join("curriculum.png")).unwrap();
            assert!(png.starts_with(b"\x89PNG"), "{kind}");
            let lines = std::fs::read_to_string(d.join("trace.jsonl")).unwrap();
            // 201 snapshots (step 0, then every 15 of 3000) x 2 environments.
            assert_eq!(lines.lines().count(), 201 * 2, "{kind}");
            let mut s = config.build(&synthetic_specs(2), 99).unwrap();
            s.load_state_file(&d.join("state.json")).unwrap();
            assert_eq!(s.samples(), 3000, "{kind}");
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}
