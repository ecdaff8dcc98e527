//! `cargo xtask profile`: profile the default pool (rollouts by two policies, tag
//! segmentation, meta-ability clustering) or a trajectory log made elsewhere (the work is
//! `envdist_study::profile`; this is its command line and its report).
//!
//! Outputs in `--out` (default `target/envdist/profile`): `trajectories.jsonl` (pool mode),
//! `profiles.json`, `abilities.dot`, `abilities.svg` and `summary.json`. The summary records
//! the configuration; a later run with the same configuration reuses the outputs instead of
//! recomputing them (`--force` recomputes).

use std::path::PathBuf;

use anyhow::bail;
use envdist_core::HarnessLevel;
use envdist_profiling::{MetaConfig, RolloutConfig};
use envdist_study::Silent;
use envdist_study::tools::profile::{
    ProfileInput, ProfileRequest, ProfileSummary, SegmenterKind, profile,
};

use crate::progress::Terminal;

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
    let input = match &args.from_jsonl {
        Some(file) => ProfileInput::Log(file.clone()),
        None => ProfileInput::Pool {
            rollout: RolloutConfig {
                trajectories_per_env: args.trajectories,
                harness: args.harness,
                seed: args.seed,
            },
            epsilon: args.epsilon,
            persistence: args.persistence,
        },
    };
    let request = ProfileRequest {
        input,
        segmenter: args.segmenter,
        ignore_tags: args.ignore_tags,
        meta: MetaConfig {
            cooccurrence_weight: args.cooccurrence_weight,
            threshold: args.threshold,
        },
        out: args.out,
        threads,
        force: args.force,
    };
    if args.json {
        let summary = profile(&request, &Silent)?;
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_report(&profile(&request, &Terminal)?);
    }
    Ok(())
}

fn print_report(s: &ProfileSummary) {
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
