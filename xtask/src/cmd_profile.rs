//! `cargo xtask profile`: profile the default pool (rollouts by two policies, tag
//! segmentation, meta-ability clustering) or a trajectory log made elsewhere.
//!
//! Outputs in `--out` (default `target/envdist/profile`): `trajectories.jsonl` (pool mode),
//! `profiles.json`, `abilities.dot`, `abilities.svg` and `summary.json`. The summary records
//! the configuration; a later run with the same configuration reuses the outputs instead of
//! recomputing them (`--force` recomputes).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, EnvSpec, HarnessLevel, Trajectory};
use envdist_envs::Suite;
use envdist_profiling::{
    Explorer, LlmConfig, LlmSegmenter, LogCheck, MetaConfig, NoisyOracle, PolicyMaker, PoolProfile,
    RolloutConfig, Segmenter, TagSegmenter, check_trajectories, check_usable, coverage_cosine,
    profile_trajectories, read_trajectory_log, replay_abilities, rollout_pool, write_outputs,
};
use envdist_study::Silent;
use envdist_study::cache::cached;
use serde::{Deserialize, Serialize};

/// Schema version of `summary.json`.
const SUMMARY_SCHEMA_VERSION: u32 = 1;

/// Which segmenter cuts trajectories into abilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmenterKind {
    /// The environments' own step tags.
    Tags,
    /// An OpenAI-compatible endpoint (ENVDIST_LLM_URL, ENVDIST_LLM_MODEL, ENVDIST_LLM_KEY).
    Llm,
}

/// Arguments of `cargo xtask profile`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// Trajectories per environment (half by the noisy solver, half by the explorer).
    #[arg(long, default_value_t = 40)]
    trajectories: u32,
    /// Harness level of the rollouts.
    #[arg(long, default_value = "H0")]
    harness: HarnessLevel,
    /// Seed of the rollouts.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Error probability of the noisy solver.
    #[arg(long, default_value_t = 0.1)]
    epsilon: f32,
    /// Probability that the explorer repeats its previous action.
    #[arg(long, default_value_t = 0.5)]
    persistence: f32,
    /// Output directory.
    #[arg(long, default_value = "target/envdist/profile")]
    out: PathBuf,
    /// Print a JSON summary on stdout instead of the text report.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Profile this trajectory log (JSONL, see crates/profiling/README.md) instead of the pool.
    #[arg(long, value_name = "FILE")]
    from_jsonl: Option<PathBuf>,
    /// How trajectories are cut into atomic abilities.
    #[arg(long, value_enum, default_value = "tags")]
    segmenter: SegmenterKind,
    /// Meta-ability clustering: merge while the average-linkage similarity is at least this.
    #[arg(long, default_value_t = MetaConfig::default().threshold)]
    threshold: f32,
    /// Meta-ability clustering: weight of co-occurrence (the rest is transition affinity).
    #[arg(long, default_value_t = MetaConfig::default().cooccurrence_weight)]
    cooccurrence_weight: f32,
    /// Tag segmenter: drop these tags (comma-separated), e.g. `mirrored-control,negation` to
    /// profile only the games' own abilities.
    #[arg(long, value_delimiter = ',')]
    ignore_tags: Vec<String>,
    /// Recompute even if the outputs for this configuration exist.
    #[arg(long)]
    force: bool,
}

/// Where the trajectories come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// A trajectory log made elsewhere.
    Log,
    /// Rollouts of the default pool.
    Pool,
}

/// Everything the outputs depend on; equal keys mean the cached outputs can be reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CacheKey {
    mode: Mode,
    segmenter: SegmenterKind,
    ignore_tags: Vec<String>,
    meta: MetaConfig,
    /// Pool mode: rollout settings and a hash of every pool spec.
    rollout: Option<RolloutConfig>,
    epsilon: Option<f32>,
    persistence: Option<f32>,
    /// FNV-1a of the pool specs (pool mode) or of the log's bytes (log mode).
    input_hash: String,
    /// The log file (log mode).
    input: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TwinPair {
    a: EnvId,
    b: EnvId,
    cosine: f32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TwinReport {
    /// Conflict-twin pairs with both sides profiled.
    pairs: usize,
    min_cosine: f32,
    mean_cosine: f32,
    /// Mean coverage cosine over all other pairs of profiled environments, for contrast.
    other_pairs_mean_cosine: f32,
    /// Every pair, lowest cosine first.
    examples: Vec<TwinPair>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Summary {
    schema_version: u32,
    environments: usize,
    trajectories: usize,
    atomic_abilities: usize,
    meta_abilities: usize,
    /// Wall time of this command.
    seconds: f64,
    /// Seconds spent rolling out (pool mode) or reading the log, when computed.
    rollout_seconds: f64,
    /// Seconds spent segmenting, counting and clustering, when computed.
    profile_seconds: f64,
    /// True when the outputs were reused from an earlier run.
    cached: bool,
    threads: usize,
    segmenter: String,
    /// Share of solved trajectories per policy name.
    success_rate: BTreeMap<String, f32>,
    twins: Option<TwinReport>,
    /// Log entries that do not match the suite's specs (reported, still profiled).
    check: LogCheck,
    /// meta-ability -> its atomic abilities.
    meta: BTreeMap<String, Vec<String>>,
    out: PathBuf,
    config: CacheKey,
}

/// Run the command.
pub fn run(args: ProfileArgs) -> anyhow::Result<()> {
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if threads == 0 {
        bail!("--threads: expected at least 1, found 0");
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("building the worker thread pool")?;
    let summary = pool.install(|| run_in_pool(&args, threads))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_report(&summary);
    }
    Ok(())
}

fn make_segmenter(
    kind: SegmenterKind,
    ignore_tags: &[String],
    suite: &Suite,
) -> anyhow::Result<Box<dyn Segmenter>> {
    if kind != SegmenterKind::Tags && !ignore_tags.is_empty() {
        bail!("--ignore-tags applies to the tag segmenter only");
    }
    Ok(match kind {
        SegmenterKind::Tags => Box::new(TagSegmenter::new(true, ignore_tags.to_vec())),
        SegmenterKind::Llm => {
            let mut config = LlmConfig::from_env()?;
            if config.vocabulary.is_empty() {
                config.vocabulary = suite.abilities().into_iter().collect();
            }
            Box::new(LlmSegmenter::new(config)?)
        }
    })
}

fn run_in_pool(args: &ProfileArgs, threads: usize) -> anyhow::Result<Summary> {
    let start = Instant::now();
    let meta = MetaConfig {
        cooccurrence_weight: args.cooccurrence_weight,
        threshold: args.threshold,
    };
    meta.validate()?;
    let suite = Suite::default();
    let all_specs = suite.specs();
    // Built first so that a bad LLM configuration fails before any rollout.
    let segmenter = make_segmenter(args.segmenter, &args.ignore_tags, &suite)?;

    let (key, trajectories_source): (CacheKey, Source) = match &args.from_jsonl {
        Some(file) => {
            let bytes =
                std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
            (
                CacheKey {
                    mode: Mode::Log,
                    segmenter: args.segmenter,
                    ignore_tags: args.ignore_tags.clone(),
                    meta: meta.clone(),
                    rollout: None,
                    epsilon: None,
                    persistence: None,
                    input_hash: envdist_core::hash::fnv1a_hex(&bytes),
                    input: Some(file.clone()),
                },
                Source::Log(file.clone()),
            )
        }
        None => {
            let pool_specs = suite.pool_specs();
            let specs_json = serde_json::to_vec(&pool_specs)?;
            let rollout = RolloutConfig {
                trajectories_per_env: args.trajectories,
                harness: args.harness,
                seed: args.seed,
            };
            (
                CacheKey {
                    mode: Mode::Pool,
                    segmenter: args.segmenter,
                    ignore_tags: args.ignore_tags.clone(),
                    meta: meta.clone(),
                    rollout: Some(rollout.clone()),
                    epsilon: Some(args.epsilon),
                    persistence: Some(args.persistence),
                    input_hash: envdist_core::hash::fnv1a_hex(&specs_json),
                    input: None,
                },
                Source::Pool(pool_specs, rollout),
            )
        }
    };

    if args.force {
        let _ = std::fs::remove_file(args.out.join("stage.json"));
    }
    let (mut summary, info) = cached(&args.out, "profile", &key, &Silent, |_| {
        compute(
            args,
            &suite,
            &all_specs,
            segmenter.as_ref(),
            &meta,
            threads,
            &trajectories_source,
            &key,
        )
        // The library's cache takes the study's error type; anyhow keeps the whole chain.
        .map_err(|e| envdist_study::StudyError::msg(format!("{e:#}")))
    })?;
    if info.cached {
        summary.cached = true;
        summary.threads = threads;
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// Roll out (or read the log), profile, write the outputs and `summary.json` into `args.out`.
#[allow(clippy::too_many_arguments)]
fn compute(
    args: &ProfileArgs,
    suite: &Suite,
    all_specs: &[EnvSpec],
    segmenter: &dyn Segmenter,
    meta: &MetaConfig,
    threads: usize,
    trajectories_source: &Source,
    key: &CacheKey,
) -> anyhow::Result<Summary> {
    let start = Instant::now();
    let summary_path = args.out.join("summary.json");
    let t0 = Instant::now();
    let mut replay = None;
    let trajectories: Vec<Trajectory> = match &trajectories_source {
        Source::Log(file) => {
            // Untagged trajectories (a trainer's chat log) get their tags by replay in the suite.
            let mut log = read_trajectory_log(file)?;
            replay = Some(replay_abilities(&mut log, suite));
            log
        }
        Source::Pool(specs, rollout) => {
            let bar = if args.json {
                indicatif::ProgressBar::hidden()
            } else {
                crate::progress::bar(specs.len() as u64, "rollouts (envs)")
            };
            let (eps, pers) = (args.epsilon, args.persistence);
            let first: Box<PolicyMaker> = Box::new(move || Box::new(NoisyOracle::new(eps)));
            let second: Box<PolicyMaker> = Box::new(move || Box::new(Explorer::new(pers)));
            let out = rollout_pool(suite, specs, rollout, &*first, &*second, &|_| bar.inc(1))?;
            bar.finish_and_clear();
            envdist_core::io::write_jsonl_atomic(args.out.join("trajectories.jsonl"), &out)?;
            out
        }
    };
    let rollout_seconds = t0.elapsed().as_secs_f64();
    let check = check_trajectories(&trajectories, all_specs);
    if !args.json {
        for line in check.describe() {
            eprintln!("warning: {line}");
        }
    }

    let t1 = Instant::now();
    let profile = profile_trajectories(&trajectories, segmenter, meta)?;
    if let Source::Log(file) = &trajectories_source {
        check_usable(file, &profile, trajectories.len(), replay.as_ref())?;
    }
    write_outputs(&profile, &args.out)?;
    let profile_seconds = t1.elapsed().as_secs_f64();

    let mut summary = Summary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        environments: profile.profiles.profiles.len(),
        trajectories: trajectories.len(),
        atomic_abilities: profile.atomic_abilities(),
        meta_abilities: profile.meta_abilities.len(),
        seconds: 0.0,
        rollout_seconds,
        profile_seconds,
        cached: false,
        threads,
        segmenter: profile.segmenter.clone(),
        success_rate: success_rates(&trajectories),
        twins: twin_report(&profile, suite),
        check,
        meta: profile
            .meta_abilities
            .iter()
            .map(|m| (m.name.clone(), m.members.clone()))
            .collect(),
        out: args.out.clone(),
        config: key.clone(),
    };
    summary.seconds = start.elapsed().as_secs_f64();
    envdist_core::io::write_json_atomic(&summary_path, &summary)?;
    Ok(summary)
}

enum Source {
    Log(PathBuf),
    Pool(Vec<EnvSpec>, RolloutConfig),
}

fn success_rates(trajectories: &[Trajectory]) -> BTreeMap<String, f32> {
    let mut n: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for t in trajectories {
        let e = n.entry(t.policy.as_str()).or_default();
        e.0 += t.success as u32;
        e.1 += 1;
    }
    n.into_iter()
        .map(|(k, (s, t))| (k.to_string(), s as f32 / t.max(1) as f32))
        .collect()
}

fn twin_report(profile: &PoolProfile, suite: &Suite) -> Option<TwinReport> {
    let ids: Vec<EnvId> = profile
        .profiles
        .profiles
        .iter()
        .map(|p| p.env.clone())
        .collect();
    let mut pairs: Vec<TwinPair> = suite
        .conflict_pairs(&ids)
        .into_iter()
        .filter_map(|(a, b)| {
            let cosine = coverage_cosine(profile.profile(&a)?, profile.profile(&b)?);
            Some(TwinPair { a, b, cosine })
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let seen: BTreeSet<(EnvId, EnvId)> = pairs.iter().map(|p| (p.a.clone(), p.b.clone())).collect();
    let ps = &profile.profiles.profiles;
    let (mut total, mut count) = (0.0f64, 0usize);
    for i in 0..ps.len() {
        for j in i + 1..ps.len() {
            let (a, b) = (&ps[i].env, &ps[j].env);
            let key = if a < b {
                (a.clone(), b.clone())
            } else {
                (b.clone(), a.clone())
            };
            if !seen.contains(&key) {
                total += coverage_cosine(&ps[i], &ps[j]) as f64;
                count += 1;
            }
        }
    }
    pairs.sort_by(|a, b| a.cosine.total_cmp(&b.cosine).then_with(|| a.a.cmp(&b.a)));
    Some(TwinReport {
        pairs: pairs.len(),
        min_cosine: pairs[0].cosine,
        mean_cosine: pairs.iter().map(|p| p.cosine).sum::<f32>() / pairs.len() as f32,
        other_pairs_mean_cosine: (total / count.max(1) as f64) as f32,
        examples: pairs,
    })
}

fn print_report(s: &Summary) {
    if s.cached {
        println!(
            "reused cached profiles in {} (same configuration; --force recomputes)",
            s.out.display()
        );
    }
    println!(
        "profiled {} environments from {} trajectories ({} threads, segmenter {})",
        s.environments, s.trajectories, s.threads, s.segmenter
    );
    println!(
        "{} atomic abilities -> {} meta-abilities",
        s.atomic_abilities, s.meta_abilities
    );
    for (name, members) in &s.meta {
        if members.len() > 1 {
            println!("  {name}: {}", members.join(", "));
        }
    }
    let singles = s.meta.values().filter(|m| m.len() == 1).count();
    println!("  (+ {singles} singleton meta-abilities)");
    for (policy, rate) in &s.success_rate {
        println!("success rate {policy}: {:.1}%", rate * 100.0);
    }
    if let Some(t) = &s.twins {
        println!(
            "conflict twins: {} pairs, coverage cosine min {:.4}, mean {:.4} (other pairs mean {:.4})",
            t.pairs, t.min_cosine, t.mean_cosine, t.other_pairs_mean_cosine
        );
        for p in t.examples.iter().take(5) {
            println!("  {} vs {}: {:.4}", p.a, p.b, p.cosine);
        }
    }
    for line in s.check.describe() {
        println!("reported: {line}");
    }
    if s.cached {
        println!("took {:.2} s (cached)", s.seconds);
    } else {
        println!(
            "took {:.2} s (rollouts/reading {:.2} s, profiling {:.2} s); outputs in {}",
            s.seconds,
            s.rollout_seconds,
            s.profile_seconds,
            s.out.display()
        );
    }
}
