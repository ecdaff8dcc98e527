//! `cargo xtask bet`: the pilots of the pixel testbed's bets (docs/experiments/BETS.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use envdist_study::tools::bets::{self, CompositionalPilot, ScaffoldSearch};

use crate::progress::Terminal;

/// Arguments of `cargo xtask bet`.
#[derive(Debug, Args)]
pub struct BetArgs {
    #[command(subcommand)]
    command: BetCommand,
}

#[derive(Debug, Subcommand)]
enum BetCommand {
    /// Bet 1: does transfer follow skills on the compositional sub-pool? Fine-tunes sources of
    /// the sub-pool alone and measures the operation gap and the profile rank (defaults: the
    /// pre-registered design; under 10 minutes on 2 cores).
    Compositional {
        /// Output directory (default `runs/bet-compositional-<design>`); finished fine-tunes
        /// there are reused.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The design's name, as docs/experiments/BETS.md numbers them.
        #[arg(long, default_value = "d1")]
        design: String,
        /// Sources fine-tuned.
        #[arg(long, default_value_t = 30)]
        probes: usize,
        /// Fine-tune seeds per source.
        #[arg(long, default_value_t = 2)]
        seeds: u64,
        /// Environment steps of each fine-tune.
        #[arg(long, default_value_t = 16_000)]
        steps: u64,
    },
    /// Bet 2, design s1: the settings (pool env x scale) where a base's bare-pixel reward is
    /// scarce (H4 <= 5%) and its scaffolded reward is not (H0 >= 20%).
    ScaffoldSettings {
        /// The base's checkpoint directory (a study run's `base/checkpoint`).
        #[arg(long)]
        base: PathBuf,
        /// Output directory (default `runs/bet-scaffold-s1`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Development instances per env, scale and level.
        #[arg(long, default_value_t = 48)]
        episodes: u32,
    },
}

/// Run the command.
pub fn run(args: BetArgs) -> anyhow::Result<()> {
    match args.command {
        BetCommand::Compositional {
            out,
            design,
            probes,
            seeds,
            steps,
        } => {
            anyhow::ensure!(probes >= 4, "--probes: expected at least 4, got {probes}");
            anyhow::ensure!(seeds >= 1, "--seeds: expected at least 1, got {seeds}");
            let pilot = CompositionalPilot {
                design,
                probes,
                seeds,
                steps,
                ..CompositionalPilot::default()
            };
            let out = out.unwrap_or_else(|| bets::compositional::default_out(&pilot));
            eprintln!(
                "bet 1 pilot {}: {probes} sources x {seeds} seeds, {steps} steps each, into {}",
                pilot.design,
                out.display()
            );
            let r = bets::run_compositional(&pilot, &out, &Terminal)?;
            print!("{}", std::fs::read_to_string(out.join("REPORT.md"))?);
            eprintln!("{} in {:.0} s", r.decision, r.seconds);
            Ok(())
        }
        BetCommand::ScaffoldSettings {
            base,
            out,
            episodes,
        } => {
            anyhow::ensure!(
                base.is_dir(),
                "--base: {} is not a checkpoint directory (a study run's base/checkpoint)",
                base.display()
            );
            anyhow::ensure!(episodes >= 1, "--episodes: expected at least 1");
            let out = out.unwrap_or_else(bets::scaffold::default_out);
            std::fs::create_dir_all(&out)?;
            let r = bets::run_scaffold_search(&ScaffoldSearch { base, episodes }, &out)?;
            print!("{}", std::fs::read_to_string(out.join("REPORT.md"))?);
            eprintln!("{} in {:.0} s", r.decision, r.seconds);
            Ok(())
        }
    }
}
