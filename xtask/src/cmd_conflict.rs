//! `cargo xtask conflict-estimates`: cheaper estimates of the per-environment gradients behind
//! AES's conflict term, measured against the full estimate the study's gradients stage
//! computes (at H4, as for selection), on the same model, profiles and environments, in one
//! process.
//!
//! ```text
//! cargo xtask conflict-estimates --checkpoint runs/experiment-cpu/base/checkpoint \
//!     --profiles runs/experiment-cpu/profiles/profiles.json --out conflict-estimates.json
//! cargo xtask conflict-estimates ... --sample 50 --estimates head,ep32,head+ep32
//! ```
//!
//! An estimate is the reference config with changes joined by `+`: `head` (policy-head
//! gradients only), `ep<N>` (N episodes per env), `d<N>` (projection dimension N), `t<N>`
//! (episodes cut after N steps), `seed<N>` (gradient seed + N: other episodes and another
//! projection; `seed1` alone is an independent repeat of the reference), and `noise` (random
//! Gaussian rows: the floor of every statistic). For each: wall seconds and their ratio to the reference's,
//! the work done, the rank agreement of all pairwise cosines with the reference's (Spearman,
//! Kendall), the recall of the reference's most negative pairs, and the overlap of the AES
//! selection it leads to with the reference's (same profiles, the study's AES: full coverage,
//! zero-gradient environments excluded). The
//! reference is itself an estimate from sampled episodes: when the `--replicate` estimate
//! (`seed1`: the reference's config on other episodes) is measured, every row is also compared
//! with it. Agreement with the reference rewards sharing its episodes, noise included;
//! agreement with an independent replicate counts only reproducible signal, and the
//! reference's own agreement with it is the ceiling. The statistics live in core
//! (`GradientSet::cosine_agreement`) and selection (`Selection::overlap`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::{CosineAgreement, EnvId, GradientSet, HarnessLevel, ProfileSet, Rng};
use envdist_envs::Suite;
use envdist_selection::Selection;
use envdist_trainer::{
    Device, GradientConfig, GradientCost, GradientParams, PolicyModel, per_env_gradients_report,
};
use serde::Serialize;
use xtask::experiment::config::{ExperimentConfig, GradientsConfig, Preset, ZeroGradient};
use xtask::experiment::stages::bar;
use xtask::experiment::stages::gradients::GradientsKey;
use xtask::experiment::stages::selections::{SelectionsKey, study_aes};

/// Schema version of the JSON this command writes.
pub const CONFLICT_ESTIMATES_SCHEMA_VERSION: u32 = 1;

/// The estimates measured when `--estimates` is not given (those of
/// docs/conflict-estimates.md: about 4 minutes on 2 loaded cores at the study's size).
const DEFAULT_ESTIMATES: &str = "seed1,noise,head,ep32,ep16,d256,t16,head+ep32";

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
    /// `head`, `ep<N>`, `d<N>`, `t<N>`, `seed<N>` (e.g. `head+ep32`), or `noise` alone.
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_ESTIMATES)]
    estimates: Vec<String>,
    /// Episodes per environment of the reference (the study's `gradients.episodes`).
    #[arg(long, default_value_t = GradientsConfig::default().episodes)]
    episodes: u32,
    /// Projection dimension of the reference (the study's `gradients.dim`).
    #[arg(long, default_value_t = GradientsConfig::default().dim)]
    dim: usize,
    /// The study's master seed (default: the `cpu` preset's); the gradient seed derives from
    /// it as in the gradients stage.
    #[arg(long, default_value_t = ExperimentConfig::preset(Preset::Cpu).seed)]
    seed: u64,
    /// AES budget (the study's `k`).
    #[arg(long, default_value_t = ExperimentConfig::preset(Preset::Cpu).k)]
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
    /// Zero-gradient environments in the AES selections: `exclude` (the study's default:
    /// left out as unknown) or `keep` (seen as conflict-free).
    #[arg(long, default_value = "exclude")]
    zero_gradient: String,
    /// `cpu` or `cuda` (`cuda:N`); cuda needs `--features cuda`.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Write the measurements as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write every gradient set (reference included) as `DIR/<name>.safetensors`.
    #[arg(long, value_name = "DIR")]
    save_sets: Option<PathBuf>,
}

/// One estimate: the reference config with some changes.
#[derive(Debug, Clone, PartialEq)]
struct Estimate {
    name: String,
    head: bool,
    episodes: Option<usize>,
    dim: Option<usize>,
    max_steps: Option<u32>,
    seed_offset: Option<u64>,
    /// Random rows instead of gradients.
    noise: bool,
}

impl Estimate {
    fn parse(spec: &str) -> anyhow::Result<Self> {
        let name = spec.trim().to_string();
        let mut e = Estimate {
            name: name.clone(),
            head: false,
            episodes: None,
            dim: None,
            max_steps: None,
            seed_offset: None,
            noise: false,
        };
        let number = |part: &str, prefix: &str| -> anyhow::Result<usize> {
            let n: usize = part[prefix.len()..].parse().with_context(|| {
                format!("--estimates {name:?}: expected {prefix}<N> with N a positive integer, found {part:?}")
            })?;
            if n == 0 {
                bail!("--estimates {name:?}: {part:?} must be at least 1");
            }
            Ok(n)
        };
        for part in name.split('+').map(str::trim) {
            if part == "noise" {
                e.noise = true;
            } else if part == "head" {
                e.head = true;
            } else if part.starts_with("seed") {
                e.seed_offset = Some(number(part, "seed")? as u64);
            } else if part.starts_with("ep") {
                e.episodes = Some(number(part, "ep")?);
            } else if part.starts_with('d') {
                e.dim = Some(number(part, "d")?);
            } else if part.starts_with('t') {
                e.max_steps = Some(
                    u32::try_from(number(part, "t")?)
                        .with_context(|| format!("--estimates {name:?}: {part:?} is too large"))?,
                );
            } else {
                bail!(
                    "--estimates {name:?}: unknown part {part:?} (expected head, ep<N>, d<N>, t<N> or seed<N>, joined by +, or noise)"
                );
            }
        }
        if e.noise && name != "noise" {
            bail!("--estimates {name:?}: `noise` stands alone");
        }
        Ok(e)
    }

    fn config(&self, reference: &GradientConfig) -> GradientConfig {
        let mut c = reference.clone();
        if self.head {
            c.params = GradientParams::PolicyHead;
        }
        if let Some(n) = self.episodes {
            c.rollouts_per_env = n;
        }
        if let Some(d) = self.dim {
            c.dim = d;
        }
        if self.max_steps.is_some() {
            c.max_episode_steps = self.max_steps;
        }
        if let Some(o) = self.seed_offset {
            c.seed = c.seed.wrapping_add(o);
        }
        c
    }
}

/// One measured gradient set.
#[derive(Debug, Serialize)]
struct Measured {
    name: String,
    /// The gradient config (absent for `noise`).
    config: Option<GradientConfig>,
    seconds: f64,
    cost: GradientCost,
    /// Environments whose gradient is exactly zero (no episode's return differed).
    zero_rows: usize,
    /// The AES selection on the profiles with these gradients, in pick order.
    selection: Vec<EnvId>,
}

/// One gradient set compared with another (the reference, or the replicate).
#[derive(Debug, Serialize)]
struct Comparison {
    agreement: CosineAgreement,
    /// `|AES selection ∩ the other's| / k`.
    selection_overlap: f32,
}

/// One row of the report.
#[derive(Debug, Serialize)]
struct Row {
    #[serde(flatten)]
    measured: Measured,
    /// `seconds` over the reference's.
    cost_ratio: f64,
    /// Against the reference (absent for the reference itself).
    vs_reference: Option<Comparison>,
    /// Against the replicate, when it was measured (absent for the replicate itself).
    vs_replicate: Option<Comparison>,
    /// Against the reference: `selection_overlap >= min_overlap` and
    /// `conflict_recall >= min_recall` (absent for the reference).
    stable: Option<bool>,
}

#[derive(Debug, Serialize)]
struct Report {
    schema_version: u32,
    checkpoint: String,
    profiles: String,
    device: String,
    threads: usize,
    /// The 1-minute load average when the run started and ended (the machine is shared).
    load_average: [Option<f32>; 2],
    envs: Vec<EnvId>,
    k: usize,
    conflict_fraction: f32,
    min_overlap: f32,
    min_recall: f32,
    /// Name of the replicate row, if one was measured.
    replicate: Option<String>,
    /// The reference first, then the estimates in the order asked for.
    rows: Vec<Row>,
}

fn load_average() -> Option<f32> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The environments to measure, in profile order.
fn pick_envs(args: &ConflictArgs, profiles: &ProfileSet) -> anyhow::Result<Vec<EnvId>> {
    let all: Vec<EnvId> = profiles.profiles.iter().map(|p| p.env.clone()).collect();
    let listed: Vec<&str> = args
        .envs
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    let mut envs = if listed.is_empty() || listed == ["all"] {
        all
    } else {
        let mut out = Vec::with_capacity(listed.len());
        for id in listed {
            let id = EnvId::new(id);
            if !all.contains(&id) {
                bail!("--envs: {id} has no profile in {}", args.profiles.display());
            }
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    };
    if let Some(n) = args.sample {
        if n < 2 {
            bail!("--sample {n}: at least 2 environments are needed to form pairs");
        }
        if n < envs.len() {
            let len = envs.len();
            envs = (0..n).map(|i| envs[i * len / n].clone()).collect();
        }
    }
    if envs.len() < 2 {
        bail!("at least 2 environments are needed to form pairs");
    }
    Ok(envs)
}

fn fmt_opt(x: Option<f32>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

/// The markdown table of a report.
fn table(r: &Report) -> String {
    let mut s = String::new();
    let rep = r.replicate.as_deref().unwrap_or("replicate");
    let _ = writeln!(
        s,
        "| estimate | seconds | cost ratio | params | backward passes | env steps | zero rows | Spearman | Kendall | recall@{}% | AES overlap | stable | Spearman vs {rep} | recall vs {rep} | overlap vs {rep} |",
        100.0 * r.conflict_fraction
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|"
    );
    let cells = |c: Option<&Comparison>, kendall: bool| match c {
        None => {
            if kendall {
                "1 | 1 | 1 | 1".to_string()
            } else {
                "- | - | -".to_string()
            }
        }
        Some(c) => {
            let mut t = fmt_opt(c.agreement.spearman);
            if kendall {
                let _ = write!(t, " | {}", fmt_opt(c.agreement.kendall));
            }
            let _ = write!(
                t,
                " | {:.2} | {:.2}",
                c.agreement.conflict_recall, c.selection_overlap
            );
            t
        }
    };
    for row in &r.rows {
        let m = &row.measured;
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.3} | {} | {} | {} | {} | {} | {} | {} |",
            m.name,
            m.seconds,
            row.cost_ratio,
            m.cost.params,
            m.cost.backward_passes,
            m.cost.env_steps,
            m.zero_rows,
            cells(row.vs_reference.as_ref(), true),
            match row.stable {
                None => "(reference)",
                Some(true) => "yes",
                Some(false) => "no",
            },
            cells(row.vs_replicate.as_ref(), false),
        );
    }
    s
}

/// Run `conflict-estimates`.
pub fn run(args: ConflictArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let load_start = load_average();
    let device: Device = args.device.parse()?;
    let estimates: Vec<Estimate> = args
        .estimates
        .iter()
        .filter(|e| !e.trim().is_empty())
        .map(|e| Estimate::parse(e))
        .collect::<anyhow::Result<_>>()?;
    if !(0.0..=1.0).contains(&args.min_overlap) || !(0.0..=1.0).contains(&args.min_recall) {
        bail!("--min-overlap and --min-recall: expected fractions in [0, 1]");
    }
    let profiles = ProfileSet::read(&args.profiles)?;
    let envs = pick_envs(&args, &profiles)?;
    if args.k == 0 || args.k > envs.len() {
        bail!(
            "--k {}: expected 1..={} (the environments measured)",
            args.k,
            envs.len()
        );
    }
    // The selections are the study's AES over the measured environments' profiles.
    let sel_key = SelectionsKey {
        k: args.k,
        seeds: 1,
        seed: args.seed,
        zero_gradient: match args.zero_gradient.as_str() {
            "exclude" => ZeroGradient::Exclude,
            "keep" => ZeroGradient::Keep,
            other => bail!("--zero-gradient {other:?}: expected exclude or keep"),
        },
    };
    let model = PolicyModel::load(&args.checkpoint, device)
        .with_context(|| format!("loading {}", args.checkpoint.display()))?;
    let canvas = model.config().image_size as u32;
    let suite =
        Arc::new(Suite::with_canvas(canvas).map_err(|e| anyhow::anyhow!("canvas {canvas}: {e}"))?);
    let reference_cfg = GradientsKey {
        episodes: args.episodes,
        dim: args.dim,
        seed: args.seed,
        harness: HarnessLevel::H4,
        params: GradientParams::All,
        max_episode_steps: None,
    }
    .config();
    if let Some(dir) = &args.save_sets {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    eprintln!(
        "conflict-estimates: {} envs, {} params, reference {} episodes x d = {}, {} estimates",
        envs.len(),
        model.num_params(),
        reference_cfg.rollouts_per_env,
        reference_cfg.dim,
        estimates.len()
    );

    // Selection and bookkeeping for one gradient set.
    let finish = |name: &str,
                  config: Option<GradientConfig>,
                  seconds: f64,
                  cost: GradientCost,
                  set: GradientSet|
     -> anyhow::Result<(Measured, GradientSet, Selection)> {
        let (selection, note) = study_aes(&sel_key, &profiles, &set, &envs)?;
        if let Some(note) = &note {
            eprintln!("  {name}: {note}");
        }
        if let Some(dir) = &args.save_sets {
            set.write(dir.join(format!("{name}.safetensors")))?;
        }
        eprintln!(
            "  {name:<14} {seconds:>8.1} s (play {:.1}, backward {:.1}, project {:.1})",
            cost.play_seconds, cost.backward_seconds, cost.project_seconds
        );
        Ok((
            Measured {
                name: name.to_string(),
                config,
                seconds,
                cost,
                zero_rows: set.zero_rows().len(),
                selection: selection.env_ids.clone(),
            },
            set,
            selection,
        ))
    };
    let measure =
        |name: &str, cfg: &GradientConfig| -> anyhow::Result<(Measured, GradientSet, Selection)> {
            let pb = bar(envs.len() as u64, name);
            let t = Instant::now();
            let report =
                per_env_gradients_report(&model, suite.as_ref(), &envs, cfg, &mut |_| pb.inc(1))?;
            let seconds = t.elapsed().as_secs_f64();
            pb.finish_and_clear();
            finish(name, Some(cfg.clone()), seconds, report.cost, report.set)
        };
    let noise = |name: &str| -> anyhow::Result<(Measured, GradientSet, Selection)> {
        let t = Instant::now();
        let mut rng = Rng::seed_from_u64(reference_cfg.seed ^ 0x4e4f_4953);
        let set = GradientSet {
            env_ids: envs.clone(),
            dim: reference_cfg.dim,
            values: (0..envs.len() * reference_cfg.dim)
                .map(|_| rng.normal())
                .collect(),
            projection_seed: None,
        };
        let cost = GradientCost {
            envs: envs.len(),
            ..GradientCost::default()
        };
        finish(name, None, t.elapsed().as_secs_f64(), cost, set)
    };

    // Untimed warm-up of both gradient paths on two envs (allocator, thread pool, caches), so
    // the reference, timed first, does not pay for them.
    for params in [GradientParams::All, GradientParams::PolicyHead] {
        let warm = GradientConfig {
            rollouts_per_env: 8,
            params,
            ..reference_cfg.clone()
        };
        per_env_gradients_report(&model, suite.as_ref(), &envs[..2], &warm, &mut |_| {})?;
    }
    let mut measured = vec![measure("reference", &reference_cfg)?];
    for e in &estimates {
        measured.push(if e.noise {
            noise(&e.name)?
        } else {
            measure(&e.name, &e.config(&reference_cfg))?
        });
    }
    let compare = |i: usize, j: usize| -> anyhow::Result<Comparison> {
        let (a, b) = (&measured[i], &measured[j]);
        Ok(Comparison {
            agreement: a.1.cosine_agreement(&b.1, args.conflict_fraction)?,
            selection_overlap: a.2.overlap(&b.2),
        })
    };
    let replicate = (1..measured.len()).find(|&i| measured[i].0.name == args.replicate);
    let mut rows = Vec::with_capacity(measured.len());
    for i in 0..measured.len() {
        let vs_reference = (i > 0).then(|| compare(i, 0)).transpose()?;
        let vs_replicate = match replicate {
            Some(r) if r != i => Some(compare(i, r)?),
            _ => None,
        };
        let stable = vs_reference.as_ref().map(|c| {
            c.selection_overlap >= args.min_overlap
                && c.agreement.conflict_recall >= args.min_recall
        });
        rows.push((vs_reference, vs_replicate, stable));
    }
    let reference_seconds = measured[0].0.seconds.max(1e-9);
    let rows: Vec<Row> = measured
        .into_iter()
        .zip(rows)
        .map(|((m, _, _), (vs_reference, vs_replicate, stable))| Row {
            cost_ratio: m.seconds / reference_seconds,
            measured: m,
            vs_reference,
            vs_replicate,
            stable,
        })
        .collect();

    let report = Report {
        schema_version: CONFLICT_ESTIMATES_SCHEMA_VERSION,
        checkpoint: args.checkpoint.display().to_string(),
        profiles: args.profiles.display().to_string(),
        device: device.to_string(),
        threads: rayon::current_num_threads(),
        load_average: [load_start, load_average()],
        envs,
        k: args.k,
        conflict_fraction: args.conflict_fraction,
        min_overlap: args.min_overlap,
        min_recall: args.min_recall,
        replicate: replicate.map(|_| args.replicate.clone()),
        rows,
    };
    print!("{}", table(&report));
    if let Some(out) = &args.out {
        envdist_core::io::write_json_atomic(out, &report)?;
        eprintln!("wrote {}", out.display());
    }
    eprintln!("done in {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
