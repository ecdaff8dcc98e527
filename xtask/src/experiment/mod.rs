//! `cargo xtask experiment`: the paper's study end to end.
//!
//! Stages (each cached under the run directory, see [`stage`]): pool -> profiles -> warm-up
//! model + per-env gradients -> selections -> training arms x seeds -> evaluation -> report.

pub mod config;
pub mod figures;
pub mod report;
pub mod results;
pub mod run;
pub mod stage;
pub mod stages;

use std::path::Path;

use config::{Arm, ExperimentConfig};
use results::Results;

/// Run the study into `out` and write `results.json`, `REPORT.md` and the figures.
pub fn run_and_report(cfg: &ExperimentConfig, out: &Path) -> anyhow::Result<Results> {
    let results = run::run_experiment(cfg, out)?;
    envdist_core::io::write_json_atomic(out.join("results.json"), &results)?;
    let figures = make_figures(&results, out);
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

/// Draw every figure into `out/figures/`; a figure that cannot be drawn is reported and
/// skipped (the numbers in results.json do not depend on it).
fn make_figures(results: &Results, out: &Path) -> Vec<(String, String)> {
    let dir = out.join("figures");
    let mut made = Vec::new();
    let mut attempt =
        |title: &str, file: &str, f: &dyn Fn(&Path) -> anyhow::Result<()>| match f(&dir.join(file))
        {
            Ok(()) => made.push((title.to_string(), format!("figures/{file}"))),
            Err(e) => eprintln!("warning: figure `{title}` not drawn: {e:#}"),
        };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("warning: cannot create {}: {e}", dir.display());
        return made;
    }
    attempt("Learning curves", "learning_curves.png", &|p| {
        figures::learning_curves(p, results)
    });
    if !results.scaling.is_empty() {
        attempt("Pool size vs score", "scaling.png", &|p| {
            figures::scaling(p, results)
        });
    }
    let grads = envdist_core::GradientSet::read(out.join(stages::gradients::GRADIENTS_FILE));
    if let Ok(g) = &grads {
        attempt(
            "Gradient conflict across the pool",
            "gradient_conflict.png",
            &|p| figures::gradient_heatmap(p, g),
        );
    }
    if let Ok(profiles) = envdist_core::ProfileSet::read(out.join(stages::profiles::PROFILES_FILE))
    {
        for s in &results.selections {
            use results::SelectionId;
            if matches!(
                s.name,
                SelectionId::Aes | SelectionId::AesNoConflict | SelectionId::RandomK(0)
            ) {
                let name = s.name.to_string();
                let file = format!("coverage_{}.png", name.replace('/', "-"));
                attempt(&format!("Ability coverage: {name}"), &file, &|p| {
                    figures::coverage_matrix(p, &name, &s.envs, &profiles)
                });
            }
        }
    }
    let trace_path = out.join(format!(
        "arms/{}/seed0/curriculum_trace.jsonl",
        Arm::AesHdc.name()
    ));
    if let Ok(trace) =
        envdist_core::io::read_jsonl::<envdist_curriculum::TraceEvent>(&trace_path, None)
    {
        let suite = envdist_envs::Suite::default();
        attempt(
            "Curriculum trace (aes+hdc, seed 0)",
            "curriculum_trace.png",
            &|p| figures::curriculum_trace(p, &trace, &suite, 3),
        );
    }
    made
}
