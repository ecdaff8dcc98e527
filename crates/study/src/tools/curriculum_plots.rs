//! Charts of a curriculum run, drawn from its trace: HDC's harness level and scale window per
//! environment ([`curriculum_trace_grid`]) and a rival sampler's snapshots
//! ([`rival_trace_grid`]). Used by the experiment report and by `cargo xtask curriculum
//! simulate`.

use std::path::Path;

use envdist_core::{EnvId, HarnessLevel, ScaleRange};

use crate::error::Context;
use envdist_curriculum::{EnvSnapshot, TraceEvent};
use serde::{Deserialize, Serialize};

use envdist_plot::{Legend, LineChart, Series, line_chart_grid};

/// Harness level and scale window over episodes for the given envs of one curriculum run, as a
/// grid: one column per env, levels on the top row, scale windows below. `label` names the
/// curriculum (e.g. its mode) in the panel titles. Used by the experiment report and by
/// `cargo xtask curriculum simulate`.
pub fn curriculum_trace_grid(
    path: &Path,
    trace: &[TraceEvent],
    envs: &[(EnvId, ScaleRange)],
    label: &str,
) -> crate::Result<()> {
    crate::ensure!(
        !envs.is_empty(),
        "no environment to plot in the curriculum trace"
    );
    let last = trace.last().map_or(0, |e| e.step) as f32;
    let (mut levels, mut scales) = (Vec::new(), Vec::new());
    for (env, range) in envs {
        // Keep a point only where the curriculum position changes: a staircase needs no more.
        let (mut xs, mut lv, mut lo, mut hi) = (vec![], vec![], vec![], vec![]);
        let mut prev: Option<(HarnessLevel, u32, u32)> = None;
        for e in trace.iter().filter(|e| &e.env == env) {
            let now = (e.level, e.window_lo, e.window_hi);
            if prev != Some(now) {
                xs.push(e.step as f32);
                lv.push(e.level.index() as f32);
                lo.push(e.window_lo as f32);
                hi.push(e.window_hi as f32);
                prev = Some(now);
            }
        }
        if let (Some(&l), Some(&a), Some(&b)) = (lv.last(), lo.last(), hi.last()) {
            xs.push(last);
            lv.push(l);
            lo.push(a);
            hi.push(b);
        }
        levels.push(LineChart {
            title: format!("{env} ({label}): harness level"),
            x_label: "episode (all envs)".into(),
            y_label: "level (0 = H0 .. 4 = H4)".into(),
            series: vec![Series::steps("current level", xs.clone(), lv)],
            y_range: Some((-0.2, 4.2)),
            legend: Legend::LowerRight,
        });
        scales.push(LineChart {
            title: format!("{env}: scale window in {}..={}", range.min, range.max),
            x_label: "episode (all envs)".into(),
            y_label: "scale".into(),
            series: vec![
                Series::steps("window top", xs.clone(), hi),
                Series::steps("window bottom", xs, lo),
            ],
            y_range: Some((range.min as f32 - 0.5, range.max as f32 + 0.5)),
            legend: Legend::LowerRight,
        });
    }
    let charts: Vec<LineChart> = levels.into_iter().chain(scales).collect();
    line_chart_grid(path, &charts, envs.len(), (520, 340))
        .with_context(|| format!("plotting the curriculum trace to {}", path.display()))
}

/// Schema version of a rival sampler's trace lines.
pub const RIVAL_TRACE_SCHEMA_VERSION: u32 = 1;

/// One line of a rival sampler's trace (`trace.jsonl` of `cargo xtask curriculum simulate`
/// with a rival): an environment's snapshot at a step, and the simulated learner's success at
/// H4 there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RivalTraceLine {
    /// Always [`RIVAL_TRACE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Episodes played so far (all environments).
    pub step: u64,
    /// Where the environment stands in the sampler.
    #[serde(flatten)]
    pub snapshot: EnvSnapshot,
    /// The learner's true success probability at H4 (the evaluation condition).
    pub learner_h4: f64,
}

/// A rival sampler's trace for the given envs, one column of panels per env over the global
/// step: (1) its draw probability relative to uniform over `n_envs`, (2) the sampler's score
/// and success estimate beside the learner's true success at H4, (3) the scales its next task
/// can take (lowest, expected, highest), and (4) the expected harness level, when the sampler
/// moves it at all. `kind` names the sampler in the titles.
pub fn rival_trace_grid(
    path: &Path,
    trace: &[RivalTraceLine],
    envs: &[(EnvId, ScaleRange)],
    n_envs: usize,
    kind: &str,
) -> crate::Result<()> {
    crate::ensure!(
        !envs.is_empty(),
        "no environment to plot in the sampler trace"
    );
    let n = n_envs as f64;
    let harness_moves = trace
        .iter()
        .any(|l| (l.snapshot.mean_harness - 4.0).abs() > 1e-9);
    let mut rows: Vec<Vec<LineChart>> = vec![Vec::new(); if harness_moves { 4 } else { 3 }];
    // Every chart's x axis is the episode count of the whole run.
    let over_episodes =
        |title: String, y_label: &str, series: Vec<Series>, y_range, legend| LineChart {
            title,
            x_label: "episode (all envs)".into(),
            y_label: y_label.into(),
            series,
            y_range,
            legend,
        };
    for (id, range) in envs {
        let lines: Vec<&RivalTraceLine> = trace.iter().filter(|l| &l.snapshot.env == id).collect();
        let x: Vec<f32> = lines.iter().map(|l| l.step as f32).collect();
        let col = |f: &dyn Fn(&RivalTraceLine) -> f64| -> Vec<f32> {
            lines.iter().map(|l| f(l) as f32).collect()
        };
        rows[0].push(over_episodes(
            format!("{id} ({kind}): draw probability"),
            "P(env) x envs (1 = uniform)",
            vec![Series::line(
                "P(env) x envs",
                x.clone(),
                col(&|l| l.snapshot.probability * n),
            )],
            None,
            Legend::UpperRight,
        ));
        rows[1].push(over_episodes(
            format!("{id}: score and success"),
            "value",
            vec![
                Series::line("sampler score", x.clone(), col(&|l| l.snapshot.score)),
                Series::line(
                    "sampler success est.",
                    x.clone(),
                    col(&|l| l.snapshot.success),
                ),
                Series::line(
                    "learner P(success) at H4",
                    x.clone(),
                    col(&|l| l.learner_h4),
                ),
            ],
            None,
            Legend::LowerRight,
        ));
        rows[2].push(over_episodes(
            format!("{id}: scales drawn in {}..={}", range.min, range.max),
            "scale",
            vec![
                Series::steps("highest", x.clone(), col(&|l| l.snapshot.scale_hi as f64)),
                Series::line("expected", x.clone(), col(&|l| l.snapshot.mean_scale)),
                Series::steps("lowest", x.clone(), col(&|l| l.snapshot.scale_lo as f64)),
            ],
            Some((range.min as f32 - 0.5, range.max as f32 + 0.5)),
            Legend::LowerRight,
        ));
        if harness_moves {
            rows[3].push(over_episodes(
                format!("{id}: harness level drawn"),
                "level (0 = H0 .. 4 = H4)",
                vec![Series::line(
                    "expected level",
                    x.clone(),
                    col(&|l| l.snapshot.mean_harness),
                )],
                Some((-0.2, 4.2)),
                Legend::LowerRight,
            ));
        }
    }
    let charts: Vec<LineChart> = rows.into_iter().flatten().collect();
    line_chart_grid(path, &charts, envs.len(), (520, 340))
        .with_context(|| format!("plotting the sampler trace to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(env: &str, step: u64, mean_harness: f64) -> RivalTraceLine {
        RivalTraceLine {
            schema_version: RIVAL_TRACE_SCHEMA_VERSION,
            step,
            snapshot: EnvSnapshot {
                env: EnvId::new(env),
                probability: 0.5,
                score: 0.1 * step as f64,
                success: 0.5,
                harness: HarnessLevel::H4,
                mean_harness,
                scale_lo: 2,
                scale_hi: 3,
                mean_scale: 2.5,
                episodes: step,
                successes: step / 2,
            },
            learner_h4: 0.25,
        }
    }

    #[test]
    fn a_rival_trace_is_drawn_and_its_lines_keep_their_file_shape() {
        let path =
            std::env::temp_dir().join(format!("envdist-rival-grid-{}.png", std::process::id()));
        let trace: Vec<RivalTraceLine> = (0..5)
            .flat_map(|s| [line("sim/a", s, 4.0), line("sim/b", s, 3.0)])
            .collect();
        let envs = [(EnvId::new("sim/a"), ScaleRange { min: 2, max: 5 })];
        rival_trace_grid(&path, &trace, &envs, 2, "sec").unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
        let _ = std::fs::remove_file(&path);
        assert!(rival_trace_grid(&path, &trace, &[], 2, "sec").is_err());
        // The snapshot's fields sit beside the step, as `trace.jsonl` has them.
        let json = serde_json::to_value(&trace[0]).unwrap();
        assert_eq!(
            (json["env"].as_str(), json["step"].as_u64()),
            (Some("sim/a"), Some(0))
        );
        let back: RivalTraceLine = serde_json::from_value(json).unwrap();
        assert_eq!(back, trace[0]);
    }
}
