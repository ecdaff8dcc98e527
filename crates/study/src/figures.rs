//! The report's figures: learning curves per arm, the pool's gradient-conflict heatmap, the
//! ability coverage matrix of each selection, and the flagship arm's curriculum trace (drawn
//! with [`crate::tools::curriculum_plots`]).

use std::collections::BTreeMap;
use std::path::Path;

use envdist_core::{EnvId, GradientSet, ProfileSet, ScaleRange};
use envdist_curriculum::TraceEvent;
use envdist_envs::Suite;

use crate::layout::{RunLayout, Stage};
use crate::model::Arm;
use crate::model::Results;
use crate::observer::Observer;
use crate::tools::curriculum_plots::curriculum_trace_grid;
use envdist_plot::{Heatmap, Legend, LineChart, Series, heatmap, line_chart};

/// The run's first training seed (0 in development, the confirmatory base in a record): the
/// one seed the single-seed figures show.
fn first_seed(results: &Results) -> u32 {
    results.config.seed_indices().start
}

/// Training success rate over env steps, the first training seed of each trained arm (rolling
/// mean of 5 updates).
pub fn learning_curves(path: &Path, results: &Results) -> crate::Result<()> {
    let series = learning_curve_series(results);
    crate::ensure!(!series.is_empty(), "no learning curve to plot");
    let chart = LineChart {
        title: format!(
            "Training success (sampled actions, the arm's own tasks; seed {})",
            first_seed(results)
        ),
        x_label: "environment steps".into(),
        y_label: "episode success rate".into(),
        series,
        y_range: Some((0.0, 1.0)),
        legend: Legend::LowerRight,
    };
    Ok(line_chart(path, &chart, (1000, 620))?)
}

/// The lines of [`learning_curves`], one per plotted arm with a curve, labelled by arm name.
pub fn learning_curve_series(results: &Results) -> Vec<Series> {
    let mut series = Vec::new();
    // The arms whose cards say so (the paper's main arms and three rivals): more lines
    // would not be readable.
    for arm in Arm::ALL.into_iter().filter(|a| a.plotted()) {
        let Some(run) = results
            .arm_runs(arm)
            .into_iter()
            .find(|r| r.seed == first_seed(results))
        else {
            continue;
        };
        if run.curve.is_empty() {
            continue;
        }
        let ys: Vec<f32> = run.curve.iter().map(|p| p.1).collect();
        let smooth: Vec<f32> = (0..ys.len())
            .map(|i| {
                let lo = i.saturating_sub(4);
                ys[lo..=i].iter().sum::<f32>() / (i - lo + 1) as f32
            })
            .collect();
        series.push(Series {
            label: arm.name().to_string(),
            x: run.curve.iter().map(|p| p.0 as f32).collect(),
            y: smooth,
            step: false,
        });
    }
    series
}

/// Pairwise cosine of per-env gradients, envs ordered by family.
pub fn gradient_heatmap(path: &Path, grads: &GradientSet) -> crate::Result<()> {
    let n = grads.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| grads.env_ids[a].cmp(&grads.env_ids[b]));
    let norms: Vec<f32> = (0..n)
        .map(|i| {
            grads
                .row(i)
                .iter()
                .map(|v| v * v)
                .sum::<f32>()
                .sqrt()
                .max(1e-12)
        })
        .collect();
    let mut values = Vec::with_capacity(n * n);
    for &i in &order {
        for &j in &order {
            let dot: f32 = grads
                .row(i)
                .iter()
                .zip(grads.row(j))
                .map(|(a, b)| a * b)
                .sum();
            values.push(dot / (norms[i] * norms[j]));
        }
    }
    let labels: Vec<String> = order.iter().map(|&i| grads.env_ids[i].0.clone()).collect();
    Ok(heatmap(
        path,
        &Heatmap {
            title: "Per-environment gradient cosine (base model, projected)".into(),
            values,
            rows: labels.clone(),
            cols: labels,
            value_label: "cosine".into(),
            range: Some((-1.0, 1.0)),
            annotate: false,
        },
        (1100, 1000),
    )?)
}

/// Rows: the selection's envs in pick order; columns: abilities; cell: share of the env's
/// ability weight.
pub fn coverage_matrix(
    path: &Path,
    name: &str,
    envs: &[EnvId],
    profiles: &ProfileSet,
) -> crate::Result<()> {
    let by_env: BTreeMap<&str, &envdist_core::AbilityProfile> = profiles
        .profiles
        .iter()
        .map(|p| (p.env.as_str(), p))
        .collect();
    let mut values = Vec::new();
    for e in envs {
        let p = by_env.get(e.as_str());
        let total: f32 = p.map_or(0.0, |p| p.coverage.values().sum());
        for a in &profiles.abilities {
            let w = p.and_then(|p| p.coverage.get(a)).copied().unwrap_or(0.0);
            values.push(if total > 0.0 { w / total } else { 0.0 });
        }
    }
    Ok(heatmap(
        path,
        &Heatmap {
            title: format!("Ability coverage of selection `{name}`"),
            values,
            rows: envs.iter().map(|e| e.to_string()).collect(),
            cols: profiles.abilities.clone(),
            value_label: "share of the env's abilities".into(),
            range: None,
            annotate: false,
        },
        (1200, 200 + 18 * envs.len() as u32),
    )?)
}

/// The curriculum trace of the experiment's most-played `shown` envs.
pub fn curriculum_trace(
    path: &Path,
    trace: &[TraceEvent],
    suite: &Suite,
    shown: usize,
) -> crate::Result<()> {
    let mut counts: BTreeMap<&EnvId, usize> = BTreeMap::new();
    for e in trace {
        *counts.entry(&e.env).or_default() += 1;
    }
    let mut envs: Vec<(&EnvId, usize)> = counts.into_iter().collect();
    envs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let envs: Vec<(EnvId, ScaleRange)> = envs
        .into_iter()
        .take(shown)
        .filter_map(|(id, _)| suite.spec(id).map(|s| (id.clone(), s.scale)))
        .collect();
    curriculum_trace_grid(path, trace, &envs, crate::model::FLAGSHIP.name())
}

/// Whole-pool score against the number of random pool environments trained on (the random-k
/// and all-pool arms included), mean over seeds with its 95% interval.
pub fn scaling(path: &Path, results: &Results) -> crate::Result<()> {
    let points = results
        .analysis
        .as_ref()
        .map(|a| a.scaling.clone())
        .unwrap_or_default();
    crate::ensure!(points.len() >= 2, "fewer than two pool sizes in this run");
    let x: Vec<f32> = points.iter().map(|(n, _)| *n as f32).collect();
    let pick = |f: fn(&crate::model::Interval) -> f64| -> Vec<f32> {
        points.iter().map(|(_, i)| f(i) as f32).collect()
    };
    let chart = LineChart {
        title: "Whole-pool score vs environments trained on (random subsets, equal budget)".into(),
        x_label: "environments trained on".into(),
        y_label: "success at H4 on the pool, %".into(),
        series: vec![
            Series {
                label: "mean over seeds".into(),
                x: x.clone(),
                y: pick(|i| i.estimate),
                step: false,
            },
            Series {
                label: "95% interval (upper)".into(),
                x: x.clone(),
                y: pick(|i| i.hi),
                step: false,
            },
            Series {
                label: "95% interval (lower)".into(),
                x,
                y: pick(|i| i.lo),
                step: false,
            },
        ],
        y_range: None,
        legend: Legend::LowerRight,
    };
    Ok(line_chart(path, &chart, (900, 560))?)
}

/// Draw every figure of `results` into the run's `figures/`; a figure that cannot be drawn
/// is reported to `observer` and skipped (the numbers in results.json do not depend on it).
/// Returns each drawn figure's title and path relative to the run directory.
pub fn draw_all(
    results: &Results,
    layout: &RunLayout,
    observer: &dyn Observer,
) -> Vec<(String, String)> {
    let dir = layout.figures_dir();
    let mut made = Vec::new();
    let mut attempt = |title: &str, file: &str, f: &dyn Fn(&Path) -> crate::Result<()>| match f(
        &dir.join(file),
    ) {
        Ok(()) => made.push((title.to_string(), format!("figures/{file}"))),
        Err(e) => observer.note(&format!("figure `{title}` not drawn: {e}")),
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        observer.note(&format!("cannot create {}: {e}", dir.display()));
        return made;
    }
    attempt("Learning curves", "learning_curves.png", &|p| {
        learning_curves(p, results)
    });
    if !results.scaling.is_empty() {
        attempt("Pool size vs score", "scaling.png", &|p| {
            scaling(p, results)
        });
    }
    let grads =
        envdist_core::GradientSet::read(layout.gradients_file(envdist_core::HarnessLevel::H4));
    if let Ok(g) = &grads {
        attempt(
            "Gradient conflict across the pool",
            "gradient_conflict.png",
            &|p| gradient_heatmap(p, g),
        );
    }
    if let Ok(profiles) = envdist_core::ProfileSet::read(layout.profiles_file()) {
        for s in &results.selections {
            // AES, its ablation and the first random draw: one figure each.
            use crate::model::EnvSource as E;
            if matches!(s.name.source, E::Aes | E::AesNoConflict | E::RandomK)
                && s.name.seed == first_seed(results)
            {
                let name = s.name.to_string();
                let file = format!("coverage_{}.png", name.replace('/', "-"));
                attempt(&format!("Ability coverage: {name}"), &file, &|p| {
                    coverage_matrix(p, &name, &s.envs, &profiles)
                });
            }
        }
    }
    let trace_path = layout
        .arm_files(Stage::Arm(crate::model::FLAGSHIP, first_seed(results)))
        .curriculum_trace();
    if let Ok(trace) =
        envdist_core::io::read_jsonl::<envdist_curriculum::TraceEvent>(&trace_path, None)
    {
        let suite = envdist_envs::Suite::default();
        attempt(
            &format!(
                "Curriculum trace ({}, seed {})",
                crate::model::FLAGSHIP.name(),
                first_seed(results)
            ),
            "curriculum_trace.png",
            &|p| curriculum_trace(p, &trace, &suite, 3),
        );
    }
    made
}
