//! `cargo xtask experiment`: the paper's study end to end.
//!
//! Stages (each cached under the run directory, see [`stage`]): pool -> profiles -> warm-up
//! model + per-env gradients -> selections -> training arms x seeds -> evaluation -> report.

pub mod config;
pub mod pipeline;
pub mod report;
pub mod results;
pub mod stage;

use std::path::Path;

use config::{Arm, ExperimentConfig};
use results::Results;

/// Run the study into `out` and write `results.json`, `REPORT.md` and the figures.
pub fn run_and_report(cfg: &ExperimentConfig, out: &Path) -> anyhow::Result<Results> {
    let results = pipeline::run_experiment(cfg, out)?;
    envdist_core::io::write_json_atomic(out.join("results.json"), &results)?;
    let figures: Vec<(String, String)> = Vec::new();
    envdist_core::io::write_atomic(
        out.join("REPORT.md"),
        report::render(&results, &figures).as_bytes(),
    )?;
    Ok(results)
}

/// The end-of-run table for the terminal.
pub fn terminal_summary(results: &Results) -> String {
    let mut s =
        String::from("\narm                    seeds  ST(ID)  MT(ID)  ST(OOD) MT(OOD)  rel.gain\n");
    for arm in Arm::ALL {
        let runs = results.arm_runs(arm);
        if runs.is_empty() {
            continue;
        }
        let col = |i: usize| {
            let xs: Vec<f32> = runs.iter().filter_map(|r| r.scores.columns()[i]).collect();
            results::mean_std(&xs).map_or("   –  ".to_string(), |(m, _)| {
                format!("{:6.1}", 100.0 * m)
            })
        };
        let gains: Vec<f32> = runs.iter().filter_map(|r| r.relative_gain).collect();
        let gain = results::mean_std(&gains).map_or("     –".to_string(), |(m, _)| {
            format!("{:+7.1}%", 100.0 * m)
        });
        s.push_str(&format!(
            "{:<22} {:>5}  {}  {}  {}  {}  {}\n",
            arm.name(),
            runs.len(),
            col(0),
            col(1),
            col(2),
            col(3),
            gain
        ));
    }
    s
}
