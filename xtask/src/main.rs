//! # xtask — envdist's composition root
//!
//! The only binary of the workspace: a composition root (with `benches`, the study crate and
//! the Python binding) that sees every library crate. It parses the command line (clap),
//! calls the libraries and prints their results and progress; the logic itself lives in the
//! libraries (the study in `envdist-study`). Run it through the cargo alias:
//! `cargo xtask experiment`, `cargo xtask envs list`, `cargo xtask select ...`.
//!
//! One module per subcommand, each with its own clap `Args` type and a `run` function;
//! `progress` turns the libraries' progress into indicatif bars.

mod cmd_bench_train;
mod cmd_bet;
mod cmd_conflict;
mod cmd_curriculum;
mod cmd_envs;
mod cmd_experiment;
mod cmd_profile;
mod cmd_select;
mod cmd_train;
mod cmd_world_map;
#[cfg(test)]
mod fuzz_tests;
mod progress;

use clap::{Parser, Subcommand};

/// envdist: design the environment distributions multimodal RL agents train on.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the paper's study end to end (pool, profiles, gradients, selections, training arms,
    /// evaluation, report).
    Experiment(cmd_experiment::ExperimentArgs),
    /// Inspect the environment suite: list, render an episode, benchmark stepping.
    Envs(cmd_envs::EnvsArgs),
    /// Profile environments into ability profiles.
    Profile(cmd_profile::ProfileArgs),
    /// Select environments with AES (or a baseline).
    Select(cmd_select::SelectArgs),
    /// Drive the HDC curriculum.
    Curriculum(cmd_curriculum::CurriculumArgs),
    /// Train a policy on a mixture of environments.
    Train(cmd_train::TrainArgs),
    /// Extract per-environment gradients at a checkpoint.
    Gradients(cmd_train::GradientsArgs),
    /// Training throughput of a preset: env steps/s end to end, rollouts, learning.
    BenchTrain(cmd_bench_train::BenchTrainArgs),
    /// Cheaper estimates of the conflict term's per-env gradients (head only, fewer episodes,
    /// smaller projections, truncated episodes) against the full estimate: cost, rank
    /// agreement of pairwise cosines, recall of conflicting pairs, AES selection overlap.
    ConflictEstimates(cmd_conflict::ConflictArgs),
    /// AES and HDC on skill worlds where their premises hold by construction: a map of where
    /// they pay, calibrated to the cpu record (results.json, REPORT.md, heat maps).
    WorldMap(cmd_world_map::WorldMapArgs),
    /// The pilots of the pixel testbed's two bets, `compositional` and `scaffold-settings`
    /// (docs/experiments/BETS.md)
    Bet(cmd_bet::BetArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes, `: `-separated, each cause left out when the message before it
/// already says it (a library error that shows its source in its own message, as thiserror's
/// `#[error("...: {0}")]` over a `#[from]` field does, would otherwise be printed twice).
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Experiment(a) => cmd_experiment::run(a),
        Command::Envs(a) => cmd_envs::run(a),
        Command::Profile(a) => cmd_profile::run(a),
        Command::Select(a) => cmd_select::run(a),
        Command::Curriculum(a) => cmd_curriculum::run(a),
        Command::Train(a) => cmd_train::run(a),
        Command::Gradients(a) => cmd_train::run_gradients(a),
        Command::BenchTrain(a) => cmd_bench_train::run(a),
        Command::ConflictEstimates(a) => cmd_conflict::run(a),
        Command::WorldMap(a) => cmd_world_map::run(a),
        Command::Bet(a) => cmd_bet::run(a),
    }
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    /// An error that shows its source in its own message, as thiserror's
    /// `#[error("trainer config: {0}")]` over a `#[from]` field does.
    #[derive(Debug)]
    struct Shows(std::fmt::Error);

    impl std::fmt::Display for Shows {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "trainer config: {}", self.0)
        }
    }

    impl std::error::Error for Shows {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_the_message_already_shows_is_printed_once() {
        let e = anyhow::Error::new(Shows(std::fmt::Error)).context("--set");
        let text = error_chain(&e);
        assert_eq!(text, format!("--set: trainer config: {}", std::fmt::Error));
        let plain = anyhow::Error::new(std::fmt::Error).context("reading x.json");
        assert_eq!(
            error_chain(&plain),
            format!("reading x.json: {}", std::fmt::Error)
        );
    }
}
