//! `cargo xtask envs`: list the suite, render one solver episode, read and play one reply,
//! benchmark stepping (the work is `envdist_envs::inspect`; this is its command line and its
//! tables).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, anyhow};
use clap::{Args, Subcommand};
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel, Split, Task};
use envdist_envs::inspect::bench::{self, BenchOptions};
use envdist_envs::inspect::{InspectError, answer_task, render_episode, solver_success};
use envdist_envs::{Suite, SuiteConfig};
use serde::Serialize;

use crate::progress::bar_unless;

/// Arguments of `cargo xtask envs`.
#[derive(Debug, Args)]
pub struct EnvsArgs {
    #[command(subcommand)]
    command: EnvsCommand,
    /// Add the compositional sub-pool (operations x looks, docs/experiments/BETS.md) to the
    /// suite.
    #[arg(long, global = true)]
    compositional: bool,
}

/// The suite the command reads: the default one at `canvas` (64 px when `None`), with the
/// compositional sub-pool when asked.
fn suite_of(canvas: Option<u32>, compositional: bool) -> anyhow::Result<Suite> {
    Ok(Suite::new(SuiteConfig {
        compositional,
        ..canvas.map_or_else(SuiteConfig::default, SuiteConfig::with_canvas)
    })?)
}

/// The episode a command plays: `--env`, `--seed`, `--scale`, `--harness`.
#[derive(Debug, Args)]
struct TaskArgs {
    /// Environment id, `family/variant`.
    #[arg(long)]
    env: String,
    /// Seed of the episode.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// State scale (must lie in the env's declared range; default its smallest).
    #[arg(long)]
    scale: Option<u32>,
    /// Harness level H0..H4 (a reply's words read the same at every level).
    #[arg(long, default_value = "H0")]
    harness: HarnessLevel,
}

#[derive(Debug, Subcommand)]
enum EnvsCommand {
    /// One record per environment (pool, held-out OOD and confirmatory).
    List {
        /// Print a JSON array of objects instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Render one solver episode: PNG frames plus its harness text.
    Render {
        #[command(flatten)]
        task: TaskArgs,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Canvas side in pixels (16..=128).
        #[arg(long, default_value_t = 64)]
        canvas: u32,
    },
    /// Read a reply the way the env reads it (a single-turn env's answer in words: `3`, `yes`,
    /// `above`, `the green one`; or an action name) and play it as the episode's first action.
    Answer {
        #[command(flatten)]
        task: TaskArgs,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// The reply, as a VLM would write it (`"<answer>three</answer>"`).
        reply: String,
    },
    /// Solver success rate of every family (classic variant) at its smallest and largest scale.
    Solvers {
        /// Seeds per family and scale.
        #[arg(long, default_value_t = 100)]
        seeds: u64,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Steps per second: one thread with 64x64 rendering, and the vectorised stepper.
    Bench {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Steps per measurement.
        #[arg(long, default_value_t = 200_000)]
        steps: u64,
        /// Canvas side in pixels.
        #[arg(long, default_value_t = 64)]
        canvas: u32,
        /// Also print single-thread steps/s of each family.
        #[arg(long)]
        per_family: bool,
        /// Harness level of the single-thread run (H0 builds every text channel each step).
        #[arg(long, default_value = "H4")]
        harness: HarnessLevel,
    },
}

/// Run the command.
pub fn run(args: EnvsArgs) -> anyhow::Result<()> {
    let c = args.compositional;
    match args.command {
        EnvsCommand::List { json } => list(&suite_of(None, c)?, json),
        EnvsCommand::Render { task, out, canvas } => {
            render(&suite_of(Some(canvas), c)?, &task, &out)
        }
        EnvsCommand::Answer { task, json, reply } => {
            answer(&suite_of(None, c)?, &task, json, &reply)
        }
        EnvsCommand::Solvers { seeds, json } => solvers(&suite_of(None, c)?, seeds, json),
        EnvsCommand::Bench {
            json,
            steps,
            canvas,
            per_family,
            harness,
        } => bench(json, steps, canvas, per_family, harness),
    }
}

#[derive(Serialize)]
struct ListRecord<'a> {
    id: &'a str,
    family: &'a str,
    variant: &'a str,
    turn: String,
    scale_min: u32,
    scale_max: u32,
    abilities: &'a [String],
    split: &'static str,
    conflict_twin: Option<&'a str>,
    max_steps: u32,
    instruction: &'a str,
}

fn list(suite: &Suite, json: bool) -> anyhow::Result<()> {
    let specs = suite.specs();
    let records: Vec<ListRecord<'_>> = specs
        .iter()
        .map(|s| ListRecord {
            id: s.id.as_str(),
            family: &s.family,
            variant: &s.variant,
            turn: s.turn.to_string(),
            scale_min: s.scale.min,
            scale_max: s.scale.max,
            abilities: &s.abilities,
            split: s.split.name(),
            conflict_twin: s.conflict_twin.as_ref().map(|t| t.as_str()),
            max_steps: s.max_steps,
            instruction: &s.instruction,
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&records)?);
        return Ok(());
    }
    println!(
        "{:<34} {:<4} {:<7} {:>7} {:<24} abilities",
        "id", "turn", "split", "scale", "conflict twin"
    );
    for r in &records {
        println!(
            "{:<34} {:<4} {:<7} {:>3}..{:<3} {:<24} {}",
            r.id,
            r.turn,
            r.split,
            r.scale_min,
            r.scale_max,
            r.conflict_twin.unwrap_or("-"),
            r.abilities.join(",")
        );
    }
    let count = |split: Split| records.iter().filter(|r| r.split == split.name()).count();
    let families: std::collections::BTreeSet<&str> = records.iter().map(|r| r.family).collect();
    let pairs = records.iter().filter(|r| r.conflict_twin.is_some()).count() / 2;
    println!(
        "{} pool + {} held-out (OOD) + {} confirmatory environments, {} families, {} conflict pairs, {} abilities",
        count(Split::Pool),
        count(Split::Ood),
        count(Split::Confirm),
        families.len(),
        pairs,
        suite.abilities().len()
    );
    Ok(())
}

/// An inspection error as a command-line error: a refused value is named by its flag.
fn flag_error(e: InspectError) -> anyhow::Error {
    match e {
        InspectError::Invalid(v) => {
            anyhow!("--{}: expected {}, found {}", v.field, v.expected, v.found)
        }
        other => other.into(),
    }
}

fn solvers(suite: &Suite, seeds: u64, json: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let families = suite.families().len() as u64;
    let progress = bar_unless(json, families, "solvers (families)");
    let records = solver_success(suite, seeds, &mut |_| progress.inc(1)).map_err(flag_error)?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&records)?);
        return Ok(());
    }
    println!(
        "{:<20} {:<4} {:<7} {:>10} {:>9} {:>10} {:>9}",
        "family", "turn", "split", "min scale", "steps", "max scale", "steps"
    );
    for r in &records {
        println!(
            "{:<20} {:<4} {:<7} {:>3}: {:>4.0}% {:>9.1} {:>3}: {:>4.0}% {:>9.1}",
            r.family,
            r.turn.to_string(),
            r.split.name(),
            r.scale_min,
            100.0 * r.success_at_min,
            r.mean_steps_at_min,
            r.scale_max,
            100.0 * r.success_at_max,
            r.mean_steps_at_max
        );
    }
    println!(
        "{} families, {seeds} seeds each at both ends of the scale range ({:.1}s)",
        records.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The task of `--env`, `--seed`, `--scale` (default the env's smallest) and `--harness`.
fn task_of(suite: &Suite, args: &TaskArgs) -> anyhow::Result<Task> {
    let env = EnvId::new(&args.env);
    let spec = suite.spec(&env).with_context(|| {
        format!(
            "--env: unknown environment {:?}; see `cargo xtask envs list`",
            args.env
        )
    })?;
    Ok(Task {
        scale: args.scale.unwrap_or(spec.scale.min),
        env,
        seed: args.seed,
        harness: args.harness,
    })
}

fn render(suite: &Suite, args: &TaskArgs, out: &std::path::Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let task = task_of(suite, args)?;
    let id = &args.env;
    let r = render_episode(suite, &task, out).map_err(flag_error)?;
    println!(
        "{id}: {} steps, {}, {} frames in {} ({:.2}s)",
        r.steps,
        if r.solved { "solved" } else { "not solved" },
        r.frames,
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn answer(suite: &Suite, args: &TaskArgs, json: bool, reply: &str) -> anyhow::Result<()> {
    let task = task_of(suite, args)?;
    let r = answer_task(suite, &task, reply).map_err(flag_error)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("{}: {}", r.task, r.instruction);
    for a in &r.answers {
        println!("  {:<10} {}", a.action.name(), a.words.join(" / "));
    }
    let meaning = if r.meaning.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.meaning.join(" / "))
    };
    println!(
        "{reply:?} reads as {}{meaning}: {}{}, reward {} (the solver plays {})",
        r.action,
        if r.success { "solved" } else { "not solved" },
        if r.legal {
            ""
        } else {
            " (not legal here: a no-op)"
        },
        r.reward,
        r.solver.map_or("nothing".to_string(), |a| a.name()),
    );
    Ok(())
}

fn bench(
    json: bool,
    steps: u64,
    canvas: u32,
    per_family: bool,
    harness: HarnessLevel,
) -> anyhow::Result<()> {
    let suite = Suite::with_canvas(canvas)?;
    let progress = bar_unless(json, steps, "single thread (steps)");
    let options = BenchOptions { steps, harness };
    let r = bench::run(&suite, &options, &mut |n| progress.set_position(n)).map_err(flag_error)?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    if per_family {
        for f in &r.per_family {
            println!("  {:<20} {:>10.0} steps/s", f.family, f.steps_per_s);
        }
    }
    println!(
        "{} families (classic variants, mid scale, {harness}, random legal actions, auto-reset), canvas {canvas}:\n  single thread, Env trait (owned observation with text): {:.0} steps/s\n  vectorised (VecEnv, batch {}, frames only, parallel auto-reset):",
        r.envs, r.single_thread_steps_per_s, r.vectorized_batch,
    );
    for s in &r.vectorized_scaling {
        println!(
            "    {:>2} threads: {:>10.0} steps/s  ({:.2} x threads x the 1-thread rate)",
            s.threads, s.steps_per_s, s.efficiency
        );
    }
    Ok(())
}
