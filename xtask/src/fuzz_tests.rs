//! The experiment's `--config` file under mutation fuzzing (`envdist_core::fuzz`): each input
//! gives a validated configuration over the preset, or an error naming the file; never a
//! panic, a huge allocation or a hang. In the binary's unit tests because the reader
//! (`cmd_experiment::effective_config`) is the CLI's. The long run: `ENVDIST_FUZZ_INPUTS=100000
//! cargo test -p xtask --bin xtask fuzz -- --nocapture` (docs/fuzzing.md).

use clap::Parser;
use envdist_core::fuzz::{Fuzz, TrackingAllocator, scratch_dir};
use envdist_study::config::{ExperimentConfig, Preset};

use crate::cmd_experiment::{ExperimentArgs, effective_config};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    experiment: ExperimentArgs,
}

#[test]
fn fuzz_experiment_config() {
    let dir = scratch_dir("experiment-config");
    let path = dir.join("experiment.json");
    let args = Args::parse_from([
        "experiment".as_ref(),
        "--preset".as_ref(),
        "smoke".as_ref(),
        "--config".as_ref(),
        path.as_os_str(),
    ]);
    let whole = serde_json::to_vec_pretty(&ExperimentConfig::preset(Preset::Smoke)).unwrap();
    Fuzz::new("experiment-config")
        .seed("the smoke preset's config.json", whole)
        .seed(
            "a few overrides",
            br#"{"seeds": 3, "selection": {"k": 12}, "base": {"samples": 20000}, "eval": {"episodes": 4}}"#
                .to_vec(),
        )
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(300)
        .run_on_file(&path, |_| {
            effective_config(&args.experiment)
                .map(drop)
                .map_err(|e| format!("{e:#}"))
        })
        .assert_clean();
}
