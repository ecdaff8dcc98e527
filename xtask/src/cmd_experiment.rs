//! `cargo xtask experiment`: the paper's study end to end (the study is `envdist-study`).

use std::path::PathBuf;

use anyhow::Context;
use envdist_core::Validate;
use envdist_study::{ExperimentConfig, Preset};
use envdist_trainer::Device;

use crate::progress::Terminal;

/// Arguments of `cargo xtask experiment`.
#[derive(Debug, clap::Args)]
pub struct ExperimentArgs {
    /// Preset: `smoke` (seconds; a test compares it with its record), `cpu` (default; the
    /// study at laptop scale), `gpu-lite`, `gpu`.
    #[arg(long, value_enum, default_value = "cpu")]
    preset: Preset,
    /// Run directory (default `runs/experiment-<preset>`). Finished stages there are reused.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Training seeds per arm (overrides the preset).
    #[arg(long)]
    seeds: Option<u32>,
    /// `cpu`, `libtorch` (needs `--features tch`) or `cuda` (needs `--features cuda`); overrides
    /// the preset.
    #[arg(long)]
    device: Option<Device>,
    /// A JSON file whose fields override the preset's (any field of `config.json`; sections
    /// merge field by field).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// The effective configuration, checked: preset, then config file, then flags.
pub fn effective_config(args: &ExperimentArgs) -> anyhow::Result<envdist_study::CheckedConfig> {
    let (mut cfg, names_split) = match &args.config {
        None => (ExperimentConfig::preset(args.preset), false),
        Some(path) => {
            let overrides: serde_json::Value = envdist_core::io::read_json(path, None)?;
            let named = envdist_study::protocol::names_split(&overrides);
            let cfg = ExperimentConfig::from_overrides(
                args.preset,
                &overrides,
                &path.display().to_string(),
            )?;
            (cfg, named)
        }
    };
    if let Some(s) = args.seeds {
        cfg.seeds = s;
        // Other seeds than the preset's make a pilot, unless the config names the split.
        if !names_split {
            cfg.protocol.split = envdist_study::protocol::Split::Development;
        }
    }
    if let Some(d) = args.device {
        cfg.device = d;
    }
    let name = args
        .config
        .as_ref()
        .map_or("the preset".into(), |p| p.display().to_string());
    cfg.checked()
        .with_context(|| format!("the configuration ({name}, flags)"))
}

/// Run the command.
pub fn run(args: ExperimentArgs) -> anyhow::Result<()> {
    let cfg = effective_config(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/experiment-{}", cfg.preset.name())));
    eprintln!(
        "envdist experiment: preset {} ({} run), {} seed(s), device {}, output {}",
        cfg.preset.name(),
        cfg.protocol.split.name(),
        cfg.seeds,
        cfg.device,
        out.display()
    );
    let command = std::iter::once("cargo xtask".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let results = envdist_study::run_and_report(&cfg, &out, &command, &Terminal)?;
    println!("{}", envdist_study::report::terminal_summary(&results));
    println!(
        "wrote {}/results.json and {}/REPORT.md",
        out.display(),
        out.display()
    );
    Ok(())
}
