//! `cargo xtask envs`: list the suite, render one solver episode, benchmark stepping.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, Env, EnvId, HarnessLevel, Rng, Split, Task};
use envdist_envs::{Suite, VecEnv};
use serde::Serialize;

/// Arguments of `cargo xtask envs`.
#[derive(Debug, Args)]
pub struct EnvsArgs {
    #[command(subcommand)]
    command: EnvsCommand,
}

#[derive(Debug, Subcommand)]
enum EnvsCommand {
    /// One record per environment (pool and held-out).
    List {
        /// Print a JSON array of objects instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Render one solver episode: PNG frames plus its harness text.
    Render {
        /// Environment id, `family/variant`.
        #[arg(long)]
        env: String,
        /// Seed of the episode.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// State scale (must lie in the env's declared range).
        #[arg(long)]
        scale: Option<u32>,
        /// Harness level H0..H4.
        #[arg(long, default_value = "H0")]
        harness: HarnessLevel,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Canvas side in pixels (16..=128).
        #[arg(long, default_value_t = 64)]
        canvas: u32,
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
    match args.command {
        EnvsCommand::List { json } => list(json),
        EnvsCommand::Render {
            env,
            seed,
            scale,
            harness,
            out,
            canvas,
        } => render(&env, seed, scale, harness, &out, canvas),
        EnvsCommand::Solvers { seeds, json } => solvers(seeds, json),
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

fn list(json: bool) -> anyhow::Result<()> {
    let suite = Suite::default();
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
            split: match s.split {
                Split::Pool => "pool",
                Split::Ood => "ood",
            },
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
        "{:<34} {:<4} {:<5} {:>7} {:<24} abilities",
        "id", "turn", "split", "scale", "conflict twin"
    );
    for r in &records {
        println!(
            "{:<34} {:<4} {:<5} {:>3}..{:<3} {:<24} {}",
            r.id,
            r.turn,
            r.split,
            r.scale_min,
            r.scale_max,
            r.conflict_twin.unwrap_or("-"),
            r.abilities.join(",")
        );
    }
    let pool = records.iter().filter(|r| r.split == "pool").count();
    let families: std::collections::BTreeSet<&str> = records.iter().map(|r| r.family).collect();
    let pairs = records.iter().filter(|r| r.conflict_twin.is_some()).count() / 2;
    println!(
        "{pool} pool + {} held-out environments, {} families, {} conflict pairs, {} abilities",
        records.len() - pool,
        families.len(),
        pairs,
        suite.abilities().len()
    );
    Ok(())
}

#[derive(Serialize)]
struct SolverRecord {
    family: String,
    turn: String,
    split: &'static str,
    scale_min: u32,
    success_at_min: f32,
    mean_steps_at_min: f32,
    scale_max: u32,
    success_at_max: f32,
    mean_steps_at_max: f32,
}

/// Play the solver on `seeds` seeds at `scale`; success rate and mean episode length.
fn solver_rate(env: &mut dyn Env, id: &EnvId, scale: u32, seeds: u64) -> (f32, f32) {
    let mut wins = 0;
    let mut steps = 0u64;
    for seed in 0..seeds {
        env.reset(&Task {
            env: id.clone(),
            seed,
            harness: HarnessLevel::H4,
            scale,
        });
        while let Some(a) = env.oracle_action() {
            let s = env.step(a);
            steps += 1;
            if s.done || s.truncated {
                wins += s.success as u64;
                break;
            }
        }
    }
    (wins as f32 / seeds as f32, steps as f32 / seeds as f32)
}

fn solvers(seeds: u64, json: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let suite = Suite::default();
    let specs: Vec<_> = suite
        .specs()
        .into_iter()
        .filter(|s| s.variant == "classic")
        .collect();
    let progress = (!json).then(|| indicatif::ProgressBar::new(specs.len() as u64));
    let mut records = Vec::new();
    for spec in &specs {
        let mut env = suite.make(&spec.id)?;
        let (a, sa) = solver_rate(env.as_mut(), &spec.id, spec.scale.min, seeds);
        let (b, sb) = solver_rate(env.as_mut(), &spec.id, spec.scale.max, seeds);
        records.push(SolverRecord {
            family: spec.family.clone(),
            turn: spec.turn.to_string(),
            split: if spec.split == Split::Pool {
                "pool"
            } else {
                "ood"
            },
            scale_min: spec.scale.min,
            success_at_min: a,
            mean_steps_at_min: sa,
            scale_max: spec.scale.max,
            success_at_max: b,
            mean_steps_at_max: sb,
        });
        if let Some(p) = &progress {
            p.inc(1);
        }
    }
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&records)?);
        return Ok(());
    }
    println!(
        "{:<20} {:<4} {:<5} {:>10} {:>9} {:>10} {:>9}",
        "family", "turn", "split", "min scale", "steps", "max scale", "steps"
    );
    for r in &records {
        println!(
            "{:<20} {:<4} {:<5} {:>3}: {:>4.0}% {:>9.1} {:>3}: {:>4.0}% {:>9.1}",
            r.family,
            r.turn,
            r.split,
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

#[derive(Serialize)]
struct RenderStep {
    step: u32,
    action: Option<ActionId>,
    reward: f32,
    done: bool,
    truncated: bool,
    success: bool,
    abilities: Vec<&'static str>,
    legal: Vec<String>,
    frame: String,
    harness: envdist_core::HarnessText,
}

#[derive(Serialize)]
struct RenderFile<'a> {
    schema_version: u32,
    task: &'a Task,
    instruction: &'a str,
    steps: Vec<RenderStep>,
}

fn render(
    id: &str,
    seed: u64,
    scale: Option<u32>,
    harness: HarnessLevel,
    out: &std::path::Path,
    canvas: u32,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let suite = Suite::with_canvas(canvas)?;
    let env_id = EnvId::new(id);
    let spec = suite
        .spec(&env_id)
        .with_context(|| format!("--env: unknown environment {id:?}; see `cargo xtask envs list`"))?
        .clone();
    let scale = scale.unwrap_or(spec.scale.min);
    if !spec.scale.contains(scale) {
        bail!(
            "--scale: expected {}..={} for {id}, found {scale}",
            spec.scale.min,
            spec.scale.max
        );
    }
    let task = Task {
        env: env_id.clone(),
        seed,
        harness,
        scale,
    };
    let mut env = suite.make(&env_id)?;
    let mut obs = env.reset(&task);
    let mut steps = Vec::new();
    let mut legal = env.legal_actions();
    let mut record = |n: u32,
                      action: Option<ActionId>,
                      s: Option<&envdist_core::Step>,
                      obs: &envdist_core::Observation,
                      legal: envdist_core::ActionMask|
     -> anyhow::Result<()> {
        let frame = format!("frame_{n:03}.png");
        envdist_envs::save_png(&obs.image, out.join(&frame))?;
        steps.push(RenderStep {
            step: n,
            action,
            reward: s.map_or(0.0, |s| s.reward),
            done: s.is_some_and(|s| s.done),
            truncated: s.is_some_and(|s| s.truncated),
            success: s.is_some_and(|s| s.success),
            abilities: s.map(|s| s.abilities.clone()).unwrap_or_default(),
            legal: legal.iter().map(|a| a.name()).collect(),
            frame,
            harness: obs.harness.clone(),
        });
        Ok(())
    };
    let mut frames = vec![obs.image.clone()];
    record(0, None, None, &obs, legal)?;
    let mut n = 0;
    let mut success = false;
    while let Some(a) = env.oracle_action() {
        n += 1;
        let s = env.step(a);
        obs = s.observation.clone();
        frames.push(obs.image.clone());
        legal = s.legal;
        record(n, Some(a), Some(&s), &obs, legal)?;
        if s.done || s.truncated {
            success = s.success;
            break;
        }
    }
    let file = RenderFile {
        schema_version: 1,
        task: &task,
        instruction: &spec.instruction,
        steps,
    };
    envdist_core::io::write_json_atomic(out.join("episode.json"), &file)?;
    save_contact_sheet(&frames, &out.join("contact.png"))?;
    let mut md = format!(
        "# {id} seed {seed} scale {scale} {harness}\n\ninstruction: {}\n\n",
        spec.instruction
    );
    for s in &file.steps {
        md.push_str(&format!(
            "## step {} action {} -> reward {} ({})\n",
            s.step,
            s.action.map_or("-".into(), |a| a.name()),
            s.reward,
            s.frame
        ));
        for (name, text) in [
            ("observation", &s.harness.observation),
            ("state", &s.harness.state),
            ("hints", &s.harness.hints),
            ("rules", &s.harness.rules),
        ] {
            if let Some(t) = text {
                md.push_str(&format!("{name}:\n```\n{t}\n```\n"));
            }
        }
        if !s.abilities.is_empty() {
            md.push_str(&format!("abilities: {}\n", s.abilities.join(", ")));
        }
        md.push('\n');
    }
    envdist_core::io::write_atomic(out.join("episode.md"), md.as_bytes())?;
    println!(
        "{id}: {} steps, {}, {} frames in {} ({:.2}s)",
        n,
        if success { "solved" } else { "not solved" },
        n + 1,
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Up to 12 frames side by side, scaled up to at least 128 pixels tall, separated by a
/// white line: one picture to look at a whole episode.
fn save_contact_sheet(
    frames: &[envdist_core::Rgb8Image],
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let frames: Vec<&envdist_core::Rgb8Image> = frames.iter().take(12).collect();
    let Some(first) = frames.first() else {
        return Ok(());
    };
    let zoom = 128u32.div_ceil(first.height).max(1);
    let (fw, fh) = (first.width * zoom, first.height * zoom);
    let mut sheet = envdist_core::Rgb8Image::new((fw + 2) * frames.len() as u32, fh);
    sheet.fill([255, 255, 255]);
    for (k, f) in frames.iter().enumerate() {
        let x0 = k as u32 * (fw + 2);
        for y in 0..fh {
            for x in 0..fw {
                sheet.put((x0 + x) as i32, y as i32, f.get(x / zoom, y / zoom));
            }
        }
    }
    envdist_envs::save_png(&sheet, path)?;
    Ok(())
}

#[derive(Serialize)]
struct BenchResult {
    single_thread_steps_per_s: f64,
    vectorized_steps_per_s: f64,
    threads: usize,
    canvas: u32,
    harness: HarnessLevel,
    envs: usize,
    vectorized_batch: usize,
    /// The vectorised rate at each thread count; `efficiency` is the rate divided by
    /// `threads x` the 1-thread rate.
    vectorized_scaling: Vec<ThreadScaling>,
}

#[derive(Serialize)]
struct ThreadScaling {
    threads: usize,
    steps_per_s: f64,
    efficiency: f64,
}

/// Steps/s of a [`VecEnv`] of `batch` environments over `mix`, random legal actions, ended
/// episodes reset in parallel, on the current rayon pool.
fn vectorized_rate(
    suite: &Suite,
    mix: &[envdist_core::EnvSpec],
    batch: usize,
    steps: u64,
    task_for: &(dyn Fn(usize, u64) -> Task + Sync),
) -> anyhow::Result<f64> {
    let mut rng = Rng::seed_from_u64(11);
    let vec_envs = (0..batch)
        .map(|i| suite.make_env(&mix[i % mix.len()].id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut venv = VecEnv::new(vec_envs)?;
    let tasks: Vec<Task> = (0..batch).map(|i| task_for(i, i as u64)).collect();
    venv.reset_all(&tasks)?;
    let mut legal: Vec<envdist_core::ActionMask> = (0..batch)
        .map(|i| venv.env_mut(i).legal_actions())
        .collect();
    let rounds = (steps / batch as u64).max(1);
    let mut actions = vec![ActionId::WAIT; batch];
    let mut resets: Vec<(usize, Task)> = Vec::new();
    let start = Instant::now();
    for r in 0..rounds {
        for (a, l) in actions.iter_mut().zip(&legal) {
            *a = random_legal(*l, &mut rng);
        }
        let infos = venv.step(&actions)?;
        resets.clear();
        for (i, (l, s)) in legal.iter_mut().zip(infos).enumerate() {
            *l = s.legal;
            if s.done || s.truncated {
                resets.push((i, task_for(i, r * batch as u64 + i as u64 + 1_000_000)));
            }
        }
        venv.reset_many(&resets)?;
        for (i, _) in &resets {
            legal[*i] = venv.env_mut(*i).legal_actions();
        }
    }
    Ok((rounds * batch as u64) as f64 / start.elapsed().as_secs_f64())
}

/// The fixed mix: the classic variant of every pool family.
fn bench_mix(suite: &Suite) -> Vec<envdist_core::EnvSpec> {
    suite
        .pool_specs()
        .into_iter()
        .filter(|s| s.variant == "classic")
        .collect()
}

fn random_legal(legal: envdist_core::ActionMask, rng: &mut Rng) -> ActionId {
    let n = legal.count();
    if n == 0 {
        return ActionId::WAIT;
    }
    legal.iter().nth(rng.index(n)).unwrap_or(ActionId::WAIT)
}

fn bench(
    json: bool,
    steps: u64,
    canvas: u32,
    per_family: bool,
    harness: HarnessLevel,
) -> anyhow::Result<()> {
    let suite = Suite::with_canvas(canvas)?;
    let mix = bench_mix(&suite);
    let mut rng = Rng::seed_from_u64(7);
    let task_for = |i: usize, ep: u64| {
        let s = &mix[i % mix.len()];
        Task {
            env: s.id.clone(),
            seed: ep,
            harness,
            scale: s.scale.mid(),
        }
    };

    // Single thread, through the public Env trait: random legal actions, auto-reset, each
    // step returns an owned 64x64 observation (as a gym step does).
    let mut envs: Vec<Box<dyn Env>> = mix
        .iter()
        .map(|s| suite.make(&s.id))
        .collect::<Result<_, _>>()?;
    let progress = (!json).then(|| indicatif::ProgressBar::new(steps));
    let per_env = (steps / envs.len() as u64).max(1);
    let mut episode = 0u64;
    let start = Instant::now();
    let mut total = 0u64;
    let mut family_rates = Vec::new();
    for (i, env) in envs.iter_mut().enumerate() {
        let family_start = Instant::now();
        let mut obs_legal = {
            episode += 1;
            env.reset(&task_for(i, episode));
            env.legal_actions()
        };
        for _ in 0..per_env {
            let s = env.step(random_legal(obs_legal, &mut rng));
            obs_legal = s.legal;
            if s.done || s.truncated {
                episode += 1;
                env.reset(&task_for(i, episode));
                obs_legal = env.legal_actions();
            }
        }
        total += per_env;
        family_rates.push((
            mix[i].family.clone(),
            per_env as f64 / family_start.elapsed().as_secs_f64(),
        ));
        if let Some(p) = &progress {
            p.set_position(total);
        }
    }
    let single = total as f64 / start.elapsed().as_secs_f64();
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    if per_family && !json {
        for (f, r) in &family_rates {
            println!("  {f:<20} {r:>10.0} steps/s");
        }
    }

    // Vectorised: one batch stepped by 1, 2, 4, ... threads up to all cores, frames into one
    // reused buffer, ended episodes reset in parallel. The same batch and the same work at
    // every thread count, so the 1-thread figure is the baseline of the scaling.
    let threads = rayon::current_num_threads();
    let batch = 64 * threads;
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|t| *t < threads)
        .collect();
    counts.push(threads);
    let mut scaling = Vec::new();
    for &t in &counts {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
        let rate = pool.install(|| vectorized_rate(&suite, &mix, batch, steps, &task_for))?;
        scaling.push(ThreadScaling {
            threads: t,
            steps_per_s: rate.round(),
            efficiency: 0.0,
        });
    }
    let one = scaling[0].steps_per_s.max(1.0);
    for s in &mut scaling {
        s.efficiency = (s.steps_per_s / (one * s.threads as f64) * 100.0).round() / 100.0;
    }
    let vectorized = scaling.last().map_or(0.0, |s| s.steps_per_s);
    let result = BenchResult {
        single_thread_steps_per_s: single.round(),
        vectorized_steps_per_s: vectorized,
        threads,
        canvas,
        harness,
        envs: mix.len(),
        vectorized_batch: batch,
        vectorized_scaling: scaling,
    };
    if json {
        println!("{}", serde_json::to_string(&result)?);
    } else {
        println!(
            "{} families (classic variants, mid scale, {harness}, random legal actions, auto-reset), canvas {canvas}:\n  single thread, Env trait (owned observation with text): {:.0} steps/s\n  vectorised (VecEnv, batch {batch}, frames only, parallel auto-reset):",
            mix.len(),
            single,
        );
        for s in &result.vectorized_scaling {
            println!(
                "    {:>2} threads: {:>10.0} steps/s  ({:.2} x threads x the 1-thread rate)",
                s.threads, s.steps_per_s, s.efficiency
            );
        }
    }
    Ok(())
}
