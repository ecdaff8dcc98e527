//! What the map writes: `REPORT.md` (the calibration, one table per plane and difference,
//! the thresholds), the heat maps, and the terminal summary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::analysis::ThresholdStatus;
use super::{Cell, PlaneMap, WorldMap};
use crate::model::Interval;
use envdist_plot::{Heatmap, heatmap};

/// The differences drawn for each plane (by plane name), and the share of the oracle.
fn drawn(plane: &str) -> &'static [&'static str] {
    match plane {
        "coverage" | "premises" => &[
            "aes − random-k",
            "aes − all-pool",
            "aes share of the oracle's gain",
            "oracle − random-k",
            "lookahead − random-k",
        ],
        "conflict" => &["aes − aes-no-conflict", "aes − random-k"],
        "curriculum" => &[
            "random-k+hdc − random-k",
            "random-k+hdc-study-gates − random-k",
            "aes+hdc − aes",
            "best rival − random-k",
        ],
        _ => &["aes − random-k"],
    }
}

const SHARE: &str = "aes share of the oracle's gain";
const BEST_RIVAL: &str = "best rival − random-k";

fn value(cell: &Cell, what: &str) -> Option<Interval> {
    match what {
        SHARE => cell.metrics.aes_share_of_oracle,
        BEST_RIVAL => cell.metrics.best_rival.as_ref().map(|r| r.1),
        d => cell.metrics.difference(d),
    }
}

fn pm(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}")
    } else {
        "–".into()
    }
}

fn ci(i: &Interval) -> String {
    format!("{} [{}, {}]", pm(i.estimate), pm(i.lo), pm(i.hi))
}

fn share(i: &Interval) -> String {
    let f = |v: f64| {
        if v.is_finite() {
            format!("{:.0}%", 100.0 * v)
        } else {
            "–".into()
        }
    };
    format!("{} [{}, {}]", f(i.estimate), f(i.lo), f(i.hi))
}

fn file_name(plane: &str, what: &str) -> String {
    let slug: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("{plane}-{slug}.png")
}

/// Draw every plane's heat maps into `dir`; their paths.
pub fn figures(map: &WorldMap, dir: &Path) -> crate::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in &map.planes {
        let (nx, ny) = (p.plane.x.values.len(), p.plane.y.values.len());
        for what in drawn(&p.plane.name) {
            // Rows top to bottom: the largest y first, as on a chart's axis.
            let mut values = Vec::with_capacity(nx * ny);
            for yi in (0..ny).rev() {
                for xi in 0..nx {
                    let v = value(&p.cells[yi * nx + xi], what).map_or(f32::NAN, |i| {
                        if *what == SHARE {
                            100.0 * i.estimate as f32
                        } else {
                            i.estimate as f32
                        }
                    });
                    values.push(v);
                }
            }
            if values.iter().all(|v| !v.is_finite()) {
                continue;
            }
            let reach = values
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f32, |m, v| m.max(v.abs()))
                .max(1.0);
            let range = if *what == SHARE {
                (-100.0, 100.0)
            } else {
                (-reach, reach)
            };
            let path = dir.join(file_name(&p.plane.name, what));
            heatmap(
                &path,
                &Heatmap {
                    title: format!("{what} ({})", p.plane.name),
                    values,
                    rows: p
                        .plane
                        .y
                        .values
                        .iter()
                        .rev()
                        .map(|v| format!("{} {v}", p.plane.y.knob))
                        .collect(),
                    cols: p
                        .plane
                        .x
                        .values
                        .iter()
                        .map(|v| format!("{} {v}", p.plane.x.knob))
                        .collect(),
                    value_label: if *what == SHARE {
                        "%".into()
                    } else {
                        "points".into()
                    },
                    range: Some(range),
                    annotate: true,
                },
                (720, 560),
            )?;
            out.push(path);
        }
    }
    Ok(out)
}

fn plane_table(s: &mut String, p: &PlaneMap, what: &str) {
    let (nx, ny) = (p.plane.x.values.len(), p.plane.y.values.len());
    let _ = write!(
        s,
        "\n**{what}**\n\n| {} \\ {} |",
        p.plane.y.knob, p.plane.x.knob
    );
    for x in &p.plane.x.values {
        let _ = write!(s, " {x} |");
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(nx));
    s.push('\n');
    for yi in (0..ny).rev() {
        let _ = write!(s, "| {} |", p.plane.y.values[yi]);
        for xi in 0..nx {
            let cell = &p.cells[yi * nx + xi];
            let text = match value(cell, what) {
                Some(i) if what == SHARE => share(&i),
                Some(i) => {
                    let mark = if i.lo > 0.0 {
                        " ▲"
                    } else if i.hi < 0.0 {
                        " ▼"
                    } else {
                        ""
                    };
                    format!("{}{mark}", ci(&i))
                }
                None => "–".into(),
            };
            let _ = write!(s, " {text} |");
        }
        s.push('\n');
    }
}

fn descriptors_table(s: &mut String, p: &PlaneMap) {
    let nx = p.plane.x.values.len();
    let _ = writeln!(
        s,
        "\nWhat an experimenter would measure in these worlds (means over seeds; `profile ρ`: \
         Spearman of profile overlap with measured transfer; `grad rel.`: the gradients' \
         split-half reliability; `harness`: a probe's H4 gain from H0-H2 only; `base`: the \
         base at H4), and the best rival where rivals ran:\n"
    );
    let _ = writeln!(
        s,
        "| {} | {} | profile ρ | grad rel. | harness, points | base, points | best rival − random-k |\n|---|---|---|---|---|---|---|",
        p.plane.y.knob, p.plane.x.knob
    );
    for (i, c) in p.cells.iter().enumerate() {
        let m = &c.metrics;
        let rival = m
            .best_rival
            .as_ref()
            .map_or("–".into(), |(n, iv)| format!("{n} {}", ci(iv)));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {:+.1} | {:.1} | {rival} |",
            p.plane.y.values[i / nx],
            p.plane.x.values[i % nx],
            m.profile_spearman
                .map_or("–".into(), |v| format!("{v:+.2}")),
            m.gradient_reliability,
            m.harness_transfer,
            m.base,
        );
    }
}

/// The threshold table's rows.
fn threshold_rows(map: &WorldMap) -> String {
    let mut s = String::from(
        "| plane | difference ≥ goal | along | held at | where the mean meets it: knob [95%] | in measurable units |\n|---|---|---|---|---|---|\n",
    );
    for t in &map.thresholds {
        let first = |v: &[f32]| v.first().copied().unwrap_or(0.0);
        let axis = map
            .planes
            .iter()
            .find(|p| p.plane.name == t.plane)
            .map(|p| {
                if p.plane.x.knob == t.along {
                    &p.plane.x
                } else {
                    &p.plane.y
                }
            });
        let (lo_end, hi_end) = axis.map_or((0.0, 0.0), |a| {
            (first(&a.values), a.values.last().copied().unwrap_or(0.0))
        });
        let side = if t.met_above { "≥" } else { "≤" };
        let crossing = match (t.status, &t.knob) {
            (ThresholdStatus::Always, _) => format!("everywhere in [{lo_end}, {hi_end}]"),
            (ThresholdStatus::Never, _) => format!("never in [{lo_end}, {hi_end}]"),
            (ThresholdStatus::Crossed, Some(k)) => {
                let end = |v: f64, open: bool| {
                    if open {
                        format!("{v:.2} (range end)")
                    } else {
                        format!("{v:.2}")
                    }
                };
                format!(
                    "{side} {:.2} [{}, {}]",
                    k.estimate,
                    end(k.lo, (k.lo - lo_end as f64).abs() < 1e-6),
                    end(k.hi, (k.hi - hi_end as f64).abs() < 1e-6)
                )
            }
            (ThresholdStatus::Crossed, None) => "–".into(),
        };
        let measured = t.measured.as_ref().map_or("–".into(), |m| {
            let side = if t.measured_above { "≥" } else { "≤" };
            format!(
                "{}: {side} {:.2} [{:.2}, {:.2}]",
                t.measure, m.estimate, m.lo, m.hi
            )
        });
        s.push_str(&format!(
            "| {} | {} ≥ {:+} | {} | {} = {} | {crossing} | {measured} |\n",
            t.plane, t.difference, t.goal, t.along, t.at.0, t.at.1
        ));
    }
    s
}

/// `REPORT.md`.
pub fn markdown(map: &WorldMap, command: &str) -> String {
    let c = &map.config;
    let pool = c.world.families * c.world.variants;
    let mut s = String::new();
    let _ = writeln!(s, "# The skill world: AES and HDC against ground truth\n");
    let _ = writeln!(
        s,
        "Made by `{command}` in {:.0} s on {} threads (results do not depend on the thread count). \
         {} paired worlds per cell (seeds {}..{}), each of {pool} environments in {} families; \
         a selection keeps k = {}; every arm trains {} episodes from the same base with the same \
         training seed; scores are the whole pool's expected H4 success, points. Intervals: 95% \
         percentile bootstrap over the paired seeds ({} replicates). ▲ / ▼: the interval lies \
         above / below 0.\n",
        map.seconds,
        map.threads,
        c.seeds,
        c.seed,
        c.seed + c.seeds as u64 - 1,
        c.world.families,
        c.k,
        c.budget,
        c.replicates
    );
    if let Some(cal) = &map.calibration {
        let _ = writeln!(s, "## The testbed, calibrated to the cpu record\n");
        let _ = writeln!(
            s,
            "Knobs set from the record's pool or fitted to its preconditions ({}): the first \
             two read off the pool, each other matched by bisection to the statistic it moves \
             most, in this order ({} passes), HDC's gates last; every other knob at its \
             default. The fit never sees an arm's score.\n",
            cal.targets.source, c.calibration_passes
        );
        let _ = writeln!(
            s,
            "| knob | value | matched to | record | world |\n|---|---|---|---|---|"
        );
        for k in &cal.knobs {
            let _ = writeln!(
                s,
                "| `{}` | {:.4} | {} | {:+.3} | {} |",
                k.knob,
                k.value,
                k.statistic,
                k.target,
                k.achieved.map_or("–".into(), |a| format!("{a:+.3}"))
            );
        }
        let _ = writeln!(
            s,
            "\nThe record beside the calibrated world run with every arm ({} worlds; the world's \
             interval over seeds; the record's over its seeds and environments where it has one):\n",
            cal.testbed.len()
        );
        let _ = writeln!(s, "| | record | testbed world | |\n|---|---|---|---|");
        for r in &cal.rows {
            let rec = if r.record.lo == r.record.hi {
                format!("{:+.3}", r.record.estimate)
            } else {
                ci(&r.record)
            };
            let world = if r.what.ends_with("points") && !r.fitted {
                ci(&r.world)
            } else {
                format!(
                    "{:+.3} [{:+.3}, {:+.3}]",
                    r.world.estimate, r.world.lo, r.world.hi
                )
            };
            let kind = if r.fitted { "fitted" } else { "predicted" };
            let _ = writeln!(s, "| {} | {rec} | {world} | {kind} |", r.what);
        }
        let _ = writeln!(
            s,
            "\nWhere the testbed sits on each plane (a plane that sets other knobs away from it \
             holds the testbed's point only on its axes):"
        );
        for p in &map.planes {
            let x = cal.world.knob(&p.plane.x.knob).unwrap_or(f32::NAN);
            let y = cal.world.knob(&p.plane.y.knob).unwrap_or(f32::NAN);
            let _ = writeln!(
                s,
                "- {}: {} = {x:.3}, {} = {y:.3}",
                p.plane.name, p.plane.x.knob, p.plane.y.knob
            );
        }
    }
    let _ = writeln!(s, "\n## The map\n");
    for p in &map.planes {
        let _ = writeln!(s, "### {}: {}\n", p.plane.name, p.plane.question);
        if !p.plane.fixed.is_empty() {
            let held: Vec<String> = p
                .plane
                .fixed
                .iter()
                .map(|(k, v)| format!("`{k}` = {v}"))
                .collect();
            let _ = writeln!(
                s,
                "Set away from the testbed in this plane: {}.\n",
                held.join(", ")
            );
        }
        for what in drawn(&p.plane.name) {
            plane_table(&mut s, p, what);
            let f = file_name(&p.plane.name, what);
            let _ = writeln!(s, "\n![{what}](figures/{f})");
        }
        descriptors_table(&mut s, p);
        s.push('\n');
    }
    let _ = writeln!(s, "## Thresholds\n");
    let _ = writeln!(
        s,
        "Where the mean difference meets its goal along one knob, the other held; linear \
         between cells; the interval resamples seeds (an end at the range's first or last value \
         means some replicates meet the goal everywhere or nowhere).\n"
    );
    s.push_str(&threshold_rows(map));
    s
}

/// A few lines for the terminal.
pub fn summary(map: &WorldMap) -> String {
    let mut s = String::new();
    for p in &map.planes {
        for what in drawn(&p.plane.name) {
            if *what == SHARE {
                continue;
            }
            let (mut up, mut down, mut flat) = (0, 0, 0);
            for c in &p.cells {
                match value(c, what) {
                    Some(i) if i.lo > 0.0 => up += 1,
                    Some(i) if i.hi < 0.0 => down += 1,
                    Some(_) => flat += 1,
                    None => {}
                }
            }
            let _ = writeln!(
                s,
                "{:<11} {what:<26} pays in {up:>2} cells, costs in {down:>2}, within noise in {flat:>2}",
                p.plane.name
            );
        }
    }
    if let Some(cal) = &map.calibration {
        let _ = writeln!(s, "testbed (record | world):");
        for r in cal.rows.iter().filter(|r| r.what.contains(" − ")) {
            let _ = writeln!(
                s,
                "  {:<32} {:>6.1} | {}",
                r.what,
                r.record.estimate,
                ci(&r.world)
            );
        }
    }
    s
}
