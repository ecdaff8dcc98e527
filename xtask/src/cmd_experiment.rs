//! `cargo xtask experiment`: the paper's study end to end (logic in `xtask::experiment`).

use std::path::PathBuf;

use anyhow::Context;
use envdist_core::Validate;
use envdist_trainer::Device;
use xtask::experiment::config::{ExperimentConfig, Preset};

/// Arguments of `cargo xtask experiment`.
#[derive(Debug, clap::Args)]
pub struct ExperimentArgs {
    /// Preset: `smoke` (minutes; CI), `cpu` (default; the study at laptop scale), `gpu`.
    #[arg(long, value_enum, default_value = "cpu")]
    preset: Preset,
    /// Run directory (default `runs/experiment-<preset>`). Finished stages there are reused.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Training seeds per arm (overrides the preset).
    #[arg(long)]
    seeds: Option<u32>,
    /// `cpu` or `cuda` (overrides the preset; `cuda` needs `--features cuda`).
    #[arg(long)]
    device: Option<Device>,
    /// A JSON file whose fields override the preset's (any field of `config.json`).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Overlay `patch` on `base`: objects merge field by field (so a file can change one field of
/// a nested section), anything else replaces.
fn merge(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// Build the effective configuration: preset, then config file, then flags.
pub fn effective_config(args: &ExperimentArgs) -> anyhow::Result<ExperimentConfig> {
    let mut value = serde_json::to_value(ExperimentConfig::preset(args.preset))?;
    if let Some(path) = &args.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let overrides: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not valid JSON", path.display()))?;
        let obj = overrides.as_object().with_context(|| {
            format!(
                "{}: expected a JSON object of config fields",
                path.display()
            )
        })?;
        for (k, v) in obj {
            merge(&mut value[k], v);
        }
    }
    let mut cfg: ExperimentConfig = serde_json::from_value(value).map_err(|e| {
        let file = args
            .config
            .as_ref()
            .map_or("the preset".into(), |p| p.display().to_string());
        anyhow::anyhow!("{file}: {e}")
    })?;
    if let Some(s) = args.seeds {
        cfg.seeds = s;
    }
    if let Some(d) = &args.device {
        cfg.device = *d;
    }
    cfg.validate().map_err(|e| match &args.config {
        // The value may come from the file or from a flag over it: name both.
        Some(p) if args.seeds.is_some() || args.device.is_some() => {
            anyhow::anyhow!("{} (with the command line's overrides): {e}", p.display())
        }
        Some(p) => anyhow::anyhow!("{}: {e}", p.display()),
        None => e.into(),
    })?;
    Ok(cfg)
}

/// Run the command.
pub fn run(args: ExperimentArgs) -> anyhow::Result<()> {
    let cfg = effective_config(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/experiment-{}", cfg.preset.name())));
    eprintln!(
        "envdist experiment: preset {}, {} seed(s), device {}, output {}",
        cfg.preset.name(),
        cfg.seeds,
        cfg.device,
        out.display()
    );
    let command = std::iter::once("cargo xtask".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let results = xtask::experiment::run_and_report(&cfg, &out, &command)?;
    println!("{}", xtask::experiment::terminal_summary(&results));
    println!(
        "wrote {}/results.json and {}/REPORT.md",
        out.display(),
        out.display()
    );
    Ok(())
}
