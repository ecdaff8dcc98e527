//! `cargo xtask select`: AES selection (or a baseline) on a profile file, a numpy count
//! matrix or a synthetic pool; prints a summary and the time the selection itself took.
//!
//! ```text
//! cargo xtask select --profiles profiles.json --gradients grads.safetensors --k 30
//! cargo xtask select --counts-npy counts.npy --k 300 --objective coverage --json
//! cargo xtask select --synthetic n=100000,abilities=1000,dim=1024,seed=1 --k 1000
//! cargo xtask select --counts-npy counts.npy --k 8 --objective coverage --exact
//! ```
//!
//! Every selection comes with its certificate (an upper bound on the optimum where one is
//! valid, "within X% of optimal"); `--exact` also runs the exact solver on small pools.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use envdist_core::{EnvId, GradientSet, ProfileSet};
use envdist_selection::{
    AbilityWeighting, Aggregation, Baseline, EXACT_MAX_ENVS, ExactLimits, ExactSolution, Optimizer,
    Problem, SelectConfig, Selection, baseline, read_counts_npy, read_index_npy, select,
    solve_exact, synthetic,
};

use crate::progress::spinner;

/// What to optimise (or which baseline to run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ObjectiveKind {
    /// Coverage − redundancy − conflict (needs gradients unless the weights switch it off).
    Aes,
    /// NewCoverage only (greedy max coverage).
    Coverage,
    /// AES without the conflict term.
    NoConflict,
    /// AES without the redundancy term.
    NoRedundancy,
    /// Baseline: every allowed environment.
    All,
    /// Baseline: a seeded random k (uses --seed).
    Random,
}

/// Optimizer choice: the library's [`Optimizer`] carries stochastic greedy's parameters, which
/// come from their own flags here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OptimizerKind {
    /// Evaluate every candidate each step.
    Naive,
    /// Priority queue of stale bounds (exact when gains cannot increase).
    Lazy,
    /// Stochastic greedy (uses --epsilon and --seed).
    Stochastic,
}

/// Arguments of `cargo xtask select`.
#[derive(Debug, clap::Args)]
pub struct SelectArgs {
    /// Profiles JSON (core's ProfileSet).
    #[arg(long, conflicts_with_all = ["counts_npy", "synthetic"])]
    profiles: Option<PathBuf>,
    /// Dense env x ability count matrix saved by numpy (.npy: bool, int or float).
    #[arg(long, conflicts_with = "synthetic")]
    counts_npy: Option<PathBuf>,
    /// Synthetic pool: `n=N,abilities=A,dim=D,seed=S[,per_env=LO-HI,skew=S,clusters=C,
    /// cluster_size=M,themes=T,theme_size=M]`.
    #[arg(long)]
    synthetic: Option<String>,
    /// Gradients (safetensors, env x dim f32), matched to the environments by id.
    #[arg(long)]
    gradients: Option<PathBuf>,
    /// A JSON SelectConfig to start from (flags below override it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Budget: environments to select.
    #[arg(long)]
    k: Option<usize>,
    /// Objective or baseline.
    #[arg(long, value_enum, default_value = "aes")]
    objective: ObjectiveKind,
    /// Optimizer.
    #[arg(long, value_enum)]
    optimizer: Option<OptimizerKind>,
    /// Stochastic greedy slack.
    #[arg(long, default_value_t = 0.1)]
    epsilon: f32,
    /// Seed for stochastic greedy and the random baseline.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Term weights, e.g. `coverage=1,redundancy=0.25,conflict=2`.
    #[arg(long)]
    weights: Option<String>,
    /// Aggregation of pairwise conflict penalties.
    #[arg(long, value_enum)]
    aggregation: Option<Aggregation>,
    /// Let aligned gradients earn a bonus (do not clamp −cos at zero).
    #[arg(long)]
    no_clamp: bool,
    /// Ability weighting for coverage and redundancy.
    #[arg(long, value_enum)]
    ability_weighting: Option<AbilityWeighting>,
    /// Require the selection to cover every ability the allowed pool covers.
    #[arg(long)]
    full_coverage: bool,
    /// Break ties in the order seeded by this seed (the study passes its master seed) instead
    /// of by lowest index.
    #[arg(long)]
    tie_seed: Option<u64>,
    /// Never select an environment whose gradient is exactly zero.
    #[arg(long)]
    exclude_zero_gradient: bool,
    /// When the constraints are infeasible, give up the zero-gradient exclusion, then full
    /// coverage, and say so (instead of failing). With `--full-coverage --tie-seed S
    /// --exclude-zero-gradient --relax` this is the study's AES.
    #[arg(long)]
    relax: bool,
    /// Environment ids to always select (comma separated).
    #[arg(long, value_delimiter = ',')]
    must_include: Vec<String>,
    /// Environment ids never to select (comma separated).
    #[arg(long, value_delimiter = ',')]
    must_exclude: Vec<String>,
    /// Compare the ranking with a reference ranking (.npy of indices); fail on mismatch.
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Also write the pool as `DIR/profiles.json` and (with gradients) `DIR/gradients.safetensors`
    /// (unit-normalised rows), e.g. to save a synthetic pool for `--profiles`.
    #[arg(long, value_name = "DIR")]
    write_pool: Option<PathBuf>,
    /// Write the full selection (with the per-step trace) as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Also find the exact optimum by branch and bound (pools of at most 256 environments) and
    /// print it beside the certificate's bound.
    #[arg(long)]
    exact: bool,
    /// Time limit of `--exact`, in seconds.
    #[arg(long, default_value_t = 10.0)]
    exact_seconds: f64,
}

/// Run the exact solver on the objective the selection used, if the pool is small enough.
fn run_exact(
    problem: &Problem,
    selection: &Selection,
    seconds: f64,
) -> anyhow::Result<Option<ExactSolution>> {
    if problem.n_envs() > EXACT_MAX_ENVS {
        return Ok(None);
    }
    if !(seconds.is_finite() && seconds > 0.0) {
        bail!("--exact-seconds: expected a positive number of seconds, found {seconds}");
    }
    let limits = ExactLimits {
        max_time: Duration::from_secs_f64(seconds),
        ..ExactLimits::default()
    };
    Ok(Some(solve_exact(problem, &selection.config, &limits)?))
}

/// Peak resident set size of this process (VmHWM), if the platform reports it.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn load_problem(args: &SelectArgs) -> anyhow::Result<Problem> {
    let grads = match &args.gradients {
        Some(p) => Some(
            GradientSet::read(p).with_context(|| format!("reading gradients {}", p.display()))?,
        ),
        None => None,
    };
    let mut problem = if let Some(path) = &args.profiles {
        let set = ProfileSet::read(path)?;
        Problem::from_profiles(&set, None)?
    } else if let Some(path) = &args.counts_npy {
        Problem::from_counts(read_counts_npy(path)?, None, None)?
    } else if let Some(spec) = &args.synthetic {
        let cfg = synthetic::parse_spec(spec)?;
        synthetic::generate(&cfg)?.problem
    } else {
        bail!("give one of --profiles FILE, --counts-npy FILE or --synthetic SPEC");
    };
    if let (Some(g), Some(p)) = (&grads, &args.gradients) {
        // A row the profiles lack (or the other way round) is the two files' mismatch.
        problem = problem
            .with_gradients(g)
            .with_context(|| format!("matching gradients {} to the profiles", p.display()))?;
    }
    Ok(problem)
}

fn build_config(args: &SelectArgs) -> anyhow::Result<SelectConfig> {
    let mut c: SelectConfig = match &args.config {
        Some(p) => envdist_core::io::read_json(p, None)?,
        None => SelectConfig::default(),
    };
    if let Some(k) = args.k {
        c.k = k;
    }
    if let Some(w) = &args.weights {
        c.weights = c
            .weights
            .with_overrides(w)
            .map_err(|e| anyhow!("--weights: {e}"))?;
    }
    if let Some(o) = args.optimizer {
        c.optimizer = match o {
            OptimizerKind::Naive => Optimizer::Naive,
            OptimizerKind::Lazy => Optimizer::Lazy,
            OptimizerKind::Stochastic => Optimizer::Stochastic {
                epsilon: args.epsilon,
                seed: args.seed,
            },
        };
    }
    if let Some(a) = args.aggregation {
        c.aggregation = a;
    }
    if let Some(w) = args.ability_weighting {
        c.ability_weighting = w;
    }
    if args.no_clamp {
        c.clamp_conflict = false;
    }
    if args.full_coverage {
        c.require_full_coverage = true;
    }
    if let Some(seed) = args.tie_seed {
        c.tie_break = envdist_selection::TieBreak::Seeded(seed);
    }
    c.exclude_zero_gradient |= args.exclude_zero_gradient;
    c.relax |= args.relax;
    c.must_include
        .extend(args.must_include.iter().map(EnvId::new));
    c.must_exclude
        .extend(args.must_exclude.iter().map(EnvId::new));
    Ok(c)
}

fn run_selection(
    problem: &Problem,
    config: &SelectConfig,
    objective: ObjectiveKind,
    seed: u64,
) -> anyhow::Result<Selection> {
    Ok(match objective {
        ObjectiveKind::Aes => select(problem, config)?,
        ObjectiveKind::Coverage => baseline(problem, config, Baseline::CoverageOnly)?,
        ObjectiveKind::NoConflict => baseline(problem, config, Baseline::NoConflict)?,
        ObjectiveKind::NoRedundancy => baseline(problem, config, Baseline::NoRedundancy)?,
        ObjectiveKind::All => baseline(problem, config, Baseline::All)?,
        ObjectiveKind::Random => baseline(problem, config, Baseline::Random { seed })?,
    })
}

/// Run the command.
pub fn run(args: SelectArgs) -> anyhow::Result<()> {
    let config = build_config(&args)?;
    let t_load = Instant::now();
    let pb = spinner("loading the pool", args.json);
    let problem = load_problem(&args)?;
    pb.finish_and_clear();
    let load_seconds = t_load.elapsed().as_secs_f64();
    if let Some(dir) = &args.write_pool {
        envdist_core::io::write_json_atomic(dir.join("profiles.json"), &problem.to_profile_set())?;
        if let Some(g) = problem.gradient_set() {
            g.write(dir.join("gradients.safetensors"))?;
        }
    }

    let pb = spinner(
        &format!("selecting {} of {}", config.k, problem.n_envs()),
        args.json,
    );
    let t = Instant::now();
    let selection = run_selection(&problem, &config, args.objective, args.seed)?;
    let select_seconds = t.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let exact = if args.exact {
        let pb = spinner("exact branch and bound", args.json);
        let x = run_exact(&problem, &selection, args.exact_seconds)?;
        pb.finish_and_clear();
        Some(x)
    } else {
        None
    };
    let peak = peak_rss_bytes();

    let reference_match = match &args.reference {
        Some(path) => {
            let reference: Vec<usize> = read_index_npy(path)?
                .into_iter()
                .map(|i| i as usize)
                .collect();
            Some((reference == selection.ranking, reference.len()))
        }
        None => None,
    };
    if let Some(out) = &args.out {
        selection.write(out)?;
    }
    let totals = selection.term_totals();
    if args.json {
        let obj = serde_json::json!({
            "method": selection.method,
            "n_envs": problem.n_envs(),
            "n_abilities": problem.n_abilities(),
            "nnz": problem.nnz(),
            "gradient_dim": problem.gradients().map(|g| g.dim()),
            "k": selection.ranking.len(),
            "ranking": selection.ranking,
            "env_ids": selection.env_ids,
            "gains": selection.gains(),
            "objective": selection.objective,
            "shares": totals,
            "covered": selection.covered,
            "coverable": selection.coverable,
            "uncovered": selection.uncovered,
            "gains_non_increasing": selection.gains_non_increasing,
            "lazy_fell_back": selection.lazy_fell_back,
            "evaluations": selection.evaluations,
            "notes": selection.notes,
            "relaxation": selection.relaxation,
            "reference_match": reference_match.map(|(m, _)| m),
            "certificate": selection.certificate,
            "exact": exact.as_ref().map(|x| match x {
                Some(x) => serde_json::json!(x),
                None => serde_json::json!({"skipped": format!("more than {EXACT_MAX_ENVS} environments")}),
            }),
            "load_seconds": load_seconds,
            "select_seconds": select_seconds,
            "peak_rss_bytes": peak,
            "threads": rayon::current_num_threads(),
        });
        println!("{obj}");
    } else {
        println!(
            "{}: selected {} of {} environments ({} abilities, {} gradient dims)",
            selection.method,
            selection.ranking.len(),
            problem.n_envs(),
            problem.n_abilities(),
            problem.gradients().map_or(0, |g| g.dim())
        );
        let head: Vec<String> = selection
            .env_ids
            .iter()
            .take(10)
            .map(|e| e.to_string())
            .collect();
        println!(
            "  first picks: {}{}",
            head.join(", "),
            if selection.ranking.len() > 10 {
                ", ..."
            } else {
                ""
            }
        );
        println!(
            "  coverage {}/{} (coverable {}), objective {:.3} = coverage {:.3} + redundancy {:.3} + conflict {:.3}",
            selection.covered,
            selection.abilities,
            selection.coverable,
            selection.objective,
            totals.coverage,
            totals.redundancy,
            totals.conflict
        );
        if !selection.uncovered.is_empty() {
            println!(
                "  uncovered: {}",
                selection
                    .uncovered
                    .iter()
                    .take(20)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(c) = &selection.certificate {
            println!("  certificate: {c}");
            println!("    bound: {}", c.kind.explanation());
        }
        match &exact {
            Some(Some(x)) => println!("  exact: {}", x.versus_greedy(selection.objective)),
            Some(None) => println!(
                "  exact: skipped: the pool has more than {EXACT_MAX_ENVS} environments (exact search is for small pools)"
            ),
            None => {}
        }
        for n in &selection.notes {
            println!("  note: {n}");
        }
        if let Some(r) = &selection.relaxation {
            println!("  relaxed: {r}");
        }
        if let Some((m, len)) = reference_match {
            println!(
                "  reference ranking ({len} picks): {}",
                if m { "identical" } else { "DIFFERENT" }
            );
        }
        println!(
            "  load {load_seconds:.3} s, select {select_seconds:.4} s, peak RSS {} MiB, {} threads",
            peak.map_or("?".into(), |b| (b / (1 << 20)).to_string()),
            rayon::current_num_threads()
        );
        if let Some(out) = &args.out {
            println!("  wrote {}", out.display());
        }
    }
    if let Some((false, _)) = reference_match {
        bail!(
            "the ranking differs from the reference {}",
            args.reference
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        );
    }
    Ok(())
}
