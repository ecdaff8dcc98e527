//! `cargo xtask experiment`: the paper's study end to end.
//!
//! Stages (each cached under the run directory, see [`stage`]): pool -> profiles -> base model
//! (behaviour cloning) -> constant-answer baselines -> per-env gradients (H4, and H0 for the
//! polarisation comparison) -> selections -> training arms x seeds (each evaluated at H4) ->
//! analysis (intervals, claims, verdicts) -> results.json, REPORT.md, figures.

pub mod analysis;
pub mod code;
pub mod config;
pub mod figures;
pub mod report;
pub mod results;
pub mod run;
pub mod stage;
pub mod stages;
pub mod stats;

use std::path::Path;

use config::{Arm, ExperimentConfig};
use results::Results;

/// Run the study into `out` and write `results.json`, `REPORT.md` and the figures; `command`
/// is the command line the report names as the one that made it.
pub fn run_and_report(
    cfg: &ExperimentConfig,
    out: &Path,
    command: &str,
) -> anyhow::Result<Results> {
    let results = run::run_experiment(cfg, out)?;
    write_report(&results, out, command)?;
    Ok(results)
}

/// Write `results.json`, the figures and `REPORT.md` of `results` into `out`.
pub fn write_report(results: &Results, out: &Path, command: &str) -> anyhow::Result<()> {
    envdist_core::io::write_json_atomic(out.join("results.json"), results)?;
    let figures = make_figures(results, out);
    envdist_core::io::write_atomic(
        out.join("REPORT.md"),
        report::render(results, &figures, command).as_bytes(),
    )?;
    Ok(())
}

/// The end-of-run table for the terminal: every arm's whole-pool and held-out score and its
/// gain over the base, with 95% intervals.
pub fn terminal_summary(results: &Results) -> String {
    let mut s = String::from(
        "\narm                     seeds  ID score        Δ ID vs base (pts)      OOD score\n",
    );
    let Some(a) = &results.analysis else {
        return s;
    };
    for arm in &a.arms {
        let ci = |i: &stats::Interval| format!("{:5.1} [{:5.1},{:5.1}]", i.estimate, i.lo, i.hi);
        s.push_str(&format!(
            "{:<23} {:>5}  {:<18} {:<22} {}\n",
            arm.arm.name(),
            arm.seeds,
            ci(&arm.id),
            arm.delta_id.map_or("(reference)".into(), |d| format!(
                "{:+5.1} [{:+5.1},{:+5.1}]",
                d.estimate, d.lo, d.hi
            )),
            arm.ood.as_ref().map_or("–".into(), ci),
        ));
    }
    s.push_str("\nclaims:\n");
    for c in &a.claims {
        s.push_str(&format!(
            "  {:<70} {:+5.1} pts [{:+.1}, {:+.1}]  {}\n",
            c.statement,
            c.difference.estimate,
            c.difference.lo,
            c.difference.hi,
            c.verdict.word()
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
