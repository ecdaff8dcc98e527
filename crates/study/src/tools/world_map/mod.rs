//! The skill-world map (`cargo xtask world-map`): the real AES (and its ablations and
//! baselines) and the real curricula (HDC, its ablations, the rivals) run on
//! [`envdist_world`]'s worlds, against the oracle subset and a TAG-style lookahead pick, over
//! a grid of the knobs that decide whether they can work: transfer along shared abilities ×
//! annotator noise, conflict strength × gradient noise, H4 reward scarcity × carry-over.
//!
//! The grid is centred on the testbed: the world calibrated to the committed cpu record's
//! preconditions ([`calibrate`]), each plane moving two of its knobs. Every cell runs the
//! same seeds (a seed's families, abilities and difficulties are the same in every cell), so
//! differences between arms are paired by seed and intervals resample seeds.
//!
//! Files: [`write`] puts `results.json` (the [`WorldMap`], with a `schema_version`),
//! `REPORT.md` and the heat maps under `figures/` into a directory, each written atomically.

mod analysis;
mod arms;
pub mod calibrate;
mod measure;
mod observed;
mod report;
#[cfg(test)]
mod tests;
mod world;

use std::path::Path;
use std::time::Instant;

use envdist_core::{Checked, InvalidValue, Validate};
use envdist_world::{OracleSearch, WorldConfig};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use analysis::{CellMetrics, Threshold, ThresholdStatus};
pub use arms::WorldArm;
pub use calibrate::{Calibration, Targets};
pub use measure::Descriptors;
pub use world::ArmScores;

use crate::error::{Context, Result};
use crate::observer::Observer;

/// Schema version of the map's `results.json`.
pub const WORLD_MAP_SCHEMA_VERSION: u32 = 1;

/// One axis of a plane: a knob of [`WorldConfig`] and the values it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// The knob (one of [`envdist_world::KNOBS`]).
    pub knob: String,
    /// Its values, in increasing order.
    pub values: Vec<f32>,
}

/// One plane of the map: two knobs crossed, every other knob at the centre's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plane {
    /// Its name (a file-name-safe word).
    pub name: String,
    /// What it asks.
    pub question: String,
    /// The columns.
    pub x: Axis,
    /// The rows.
    pub y: Axis,
    /// Also run the curricula's ablations and the rivals in its cells (costlier).
    pub rivals: bool,
    /// Knobs this plane sets away from the centre before its axes (`[["annotator_noise",
    /// 0.0]]`): a plane may ask its question where other premises hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<(String, f32)>,
}

/// What the map runs. Defaults: the map committed under docs/experiments/skill-world.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldMapConfig {
    /// Master seed: world `i` of every cell is generated from `seed + i`. Default 2026.
    pub seed: u64,
    /// Worlds (paired seeds) per cell. Default 10: a paired difference's interval of about
    /// ±1 point where worlds disagree by 1.5 points (sd), enough to tell 3 points from 0.
    pub seeds: u32,
    /// Environments a selection keeps. Default 10 of the world's 64 (the paper's 30 of 200).
    pub k: usize,
    /// Training episodes per arm. Default 8,000: 800 per selected environment, as many as
    /// the record's multi-turn environments got in an arm (the environments where HDC's
    /// stages bind), and room for HDC's ten stages of at least 30 episodes below the top.
    pub budget: u64,
    /// Evaluation instances per environment of a measured transfer probe (the lookahead's
    /// affinity, the calibration's Spearman). Default 72: the record's 24 per scale at 3
    /// scales.
    pub probe_instances: u32,
    /// The oracle's search.
    pub oracle: OracleSearch,
    /// Bootstrap replicates of every interval. Default 1,000.
    pub replicates: u32,
    /// Worlds each step of the calibration averages. Default 4.
    pub calibration_seeds: u32,
    /// Passes of the calibration over its knobs. Default 3.
    pub calibration_passes: u32,
    /// HDC's stage gates (`min_episodes` 30, `max_stage_episodes` 120 in the study) times
    /// this. Default 1, the study's HDC; the calibration fits it to the record's share of
    /// episodes HDC played below H4 (the record's single-turn environments got about 20
    /// times the episodes a world's selected environment gets, so the study's gates would
    /// keep a world's environments on the staircase for most of their budget).
    pub hdc_stage_scale: f32,
    /// The world before calibration (its structural knobs are kept; the calibration sets
    /// the ones it fits), and the centre of the grid when no record is given.
    pub world: WorldConfig,
    /// The planes.
    pub planes: Vec<Plane>,
}

impl Default for WorldMapConfig {
    fn default() -> Self {
        Self {
            seed: 2026,
            seeds: 10,
            k: 10,
            budget: 8_000,
            probe_instances: 72,
            oracle: OracleSearch::default(),
            replicates: 1_000,
            calibration_seeds: 4,
            calibration_passes: 3,
            hdc_stage_scale: 1.0,
            world: WorldConfig::default(),
            planes: default_planes(),
        }
    }
}

/// The three planes the issue asks for, over first-principles ranges (each spans "off" to
/// "as strong as the paper assumes or stronger"), and a fourth that asks the coverage
/// question where every other premise of AES holds.
pub fn default_planes() -> Vec<Plane> {
    let axis = |knob: &str, values: &[f32]| Axis {
        knob: knob.into(),
        values: values.to_vec(),
    };
    vec![
        Plane {
            name: "coverage".into(),
            question: "does AES's coverage pay: transfer along shared abilities x annotator noise"
                .into(),
            x: axis("transfer", &[0.0, 0.2, 0.4, 0.6]),
            y: axis("annotator_noise", &[0.0, 0.25, 0.5, 1.0]),
            rivals: false,
            fixed: vec![],
        },
        Plane {
            name: "conflict".into(),
            question: "does AES's conflict term pay where gradients measure transfer: conflict \
                       strength x gradient noise"
                .into(),
            x: axis("gradient_noise", &[0.0, 0.5, 1.0, 2.0]),
            y: axis("conflict", &[0.0, 0.33, 0.67, 1.0]),
            rivals: false,
            fixed: vec![("gradient_relevance".into(), 1.0)],
        },
        Plane {
            name: "curriculum".into(),
            question: "does HDC pay: H4 reward scarcity x carry-over from the harness".into(),
            x: axis("carry_over", &[0.0, 0.33, 0.67, 1.0]),
            y: axis("h4_scarcity", &[0.0, 2.0, 4.0, 6.0]),
            rivals: true,
            fixed: vec![],
        },
        Plane {
            name: "premises".into(),
            question: "does AES's coverage pay where its premises hold: exact profiles, \
                       reliable and relevant gradients, environments alike in difficulty, no \
                       family task; transfer along abilities x how unevenly pools use them"
                .into(),
            x: axis("transfer", &[0.0, 0.3, 0.6, 0.9]),
            y: axis("ability_skew", &[0.0, 0.5, 1.0, 2.0]),
            rivals: false,
            fixed: [
                ("annotator_noise", 0.0),
                ("family_share", 0.0),
                ("family_spread", 0.0),
                ("variant_spread", 0.0),
                ("gradient_noise", 0.0),
                ("gradient_relevance", 1.0),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        },
    ]
}

impl Validate for WorldMapConfig {
    fn validate(&self) -> std::result::Result<(), InvalidValue> {
        if self.seeds < 2 {
            return Err(InvalidValue::new(
                "seeds",
                "at least 2 (intervals resample seeds)",
                self.seeds,
            ));
        }
        if self.k == 0 {
            return Err(InvalidValue::new("k", "at least 1", self.k));
        }
        if self.budget < self.k as u64 {
            return Err(InvalidValue::new(
                "budget",
                format!("at least k = {} episodes", self.k),
                self.budget,
            ));
        }
        if self.probe_instances == 0 {
            return Err(InvalidValue::new("probe_instances", "at least 1", 0));
        }
        if self.replicates < 100 {
            return Err(InvalidValue::new(
                "replicates",
                "at least 100",
                self.replicates,
            ));
        }
        if !(self.hdc_stage_scale.is_finite() && self.hdc_stage_scale > 0.0) {
            return Err(InvalidValue::new(
                "hdc_stage_scale",
                "a finite positive factor",
                self.hdc_stage_scale,
            ));
        }
        if self.calibration_seeds == 0 {
            return Err(InvalidValue::new("calibration_seeds", "at least 1", 0));
        }
        self.world.validate().map_err(|e| e.within("world"))?;
        let pool = self.world.families * self.world.variants;
        if self.k >= pool {
            return Err(InvalidValue::new(
                "k",
                format!("fewer than the world's {pool} environments"),
                self.k,
            ));
        }
        for (i, p) in self.planes.iter().enumerate() {
            for (name, axis) in [("x", &p.x), ("y", &p.y)] {
                let field = format!("planes[{i}].{name}");
                self.world.knob(&axis.knob).map_err(|e| e.within(&field))?;
                if axis.values.is_empty() || axis.values.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(InvalidValue::new(
                        format!("{field}.values"),
                        "at least one value, strictly increasing",
                        format!("{:?}", axis.values),
                    ));
                }
            }
            for (j, (knob, _)) in p.fixed.iter().enumerate() {
                self.world
                    .knob(knob)
                    .map_err(|e| e.within(&format!("planes[{i}].fixed[{j}]")))?;
            }
            if p.x.knob == p.y.knob {
                return Err(InvalidValue::new(
                    format!("planes[{i}].y.knob"),
                    "another knob than x's",
                    &p.y.knob,
                ));
            }
        }
        Ok(())
    }
}

/// One cell of a plane: its knob values, the arms' scores per seed, the metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Its x value.
    pub x: f32,
    /// Its y value.
    pub y: f32,
    /// Per seed, every arm's whole-pool score (points) and what the world looked like.
    pub worlds: Vec<ArmScores>,
    /// The differences the map draws, with intervals over seeds.
    pub metrics: CellMetrics,
}

/// A plane as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlaneMap {
    /// What was asked.
    pub plane: Plane,
    /// Row-major cells: `y` outer (in `plane.y.values` order), `x` inner.
    pub cells: Vec<Cell>,
}

/// Everything the map measured (`results.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldMap {
    /// Always [`WORLD_MAP_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What ran.
    pub config: WorldMapConfig,
    /// The grid's centre: the calibrated testbed, or `config.world` without a record.
    pub centre: WorldConfig,
    /// The HDC every HDC arm ran (the study's, its gates scaled by the calibration).
    pub hdc: envdist_curriculum::HdcConfig,
    /// The calibration to the record, with the testbed's predictions beside the record's
    /// measurements (`None` without a record).
    pub calibration: Option<Calibration>,
    /// The planes.
    pub planes: Vec<PlaneMap>,
    /// Where each comparison starts to pay, or stops costing, along each plane's axes.
    pub thresholds: Vec<Threshold>,
    /// Wall seconds of the run (not part of what is reproduced).
    pub seconds: f64,
    /// Worker threads the run used (not part of what is reproduced).
    pub threads: usize,
}

impl WorldMap {
    /// This map without the fields that depend on the machine (wall time, threads): what two
    /// runs at different thread counts must agree on exactly.
    pub fn reproducible(&self) -> Self {
        Self {
            seconds: 0.0,
            threads: 0,
            ..self.clone()
        }
    }
}

/// A knob setting of the centre, refused with the plane and value named.
fn cell_config(
    centre: &WorldConfig,
    plane: &Plane,
    x: f32,
    y: f32,
) -> Result<Checked<WorldConfig>> {
    let mut c = centre.clone();
    for (knob, v) in &plane.fixed {
        c = c
            .with_knob(knob, *v)
            .with_context(|| format!("plane {:?}, fixed", plane.name))?;
    }
    let c = c
        .with_knob(&plane.x.knob, x)
        .and_then(|c| c.with_knob(&plane.y.knob, y))
        .and_then(Validate::checked)
        .with_context(|| {
            format!(
                "plane {:?} at {} = {x}, {} = {y}",
                plane.name, plane.x.knob, plane.y.knob
            )
        })?;
    Ok(c)
}

/// Run the map: calibrate to `targets` (when given), run every plane's cells and the
/// testbed, analyse. The numbers depend on the configuration alone, never on the number of
/// threads (each world is a job of its own; results are gathered in job order).
pub fn run(
    config: &Checked<WorldMapConfig>,
    targets: Option<&Targets>,
    observer: &dyn Observer,
) -> Result<WorldMap> {
    let t0 = Instant::now();
    let cfg: &WorldMapConfig = config;
    let (centre, fit) = match targets {
        Some(t) => {
            let fit = calibrate::fit(cfg, t, observer)?;
            (fit.world.clone(), Some(fit))
        }
        None => (cfg.world.clone(), None),
    };
    // The map runs with the calibrated HDC sizing where there is one.
    let ran = WorldMapConfig {
        hdc_stage_scale: fit
            .as_ref()
            .map_or(cfg.hdc_stage_scale, |f| f.hdc_stage_scale),
        ..cfg.clone()
    };
    let cfg = &ran;
    let centre_checked = centre.clone().checked().context("the calibrated world")?;
    // Every job: (plane, cell, seed); the testbed's seeds last, under plane index `planes`.
    let mut jobs: Vec<(usize, usize, Checked<WorldConfig>, bool)> = Vec::new();
    for (p, plane) in cfg.planes.iter().enumerate() {
        for (yi, &y) in plane.y.values.iter().enumerate() {
            for (xi, &x) in plane.x.values.iter().enumerate() {
                let c = cell_config(&centre, plane, x, y)?;
                jobs.push((p, yi * plane.x.values.len() + xi, c, plane.rivals));
            }
        }
    }
    if fit.is_some() {
        jobs.push((cfg.planes.len(), 0, centre_checked, true));
    }
    let seeds = cfg.seeds as u64;
    let work: Vec<(usize, u64)> = (0..jobs.len())
        .flat_map(|j| (0..seeds).map(move |s| (j, s)))
        .collect();
    let bar = observer.progress("worlds", work.len() as u64);
    // An indexed parallel map: results come back in job order whatever the scheduling.
    let runs: Vec<ArmScores> = work
        .into_par_iter()
        .map(|(j, s)| {
            let (_, _, world, rivals) = &jobs[j];
            let out = world::run_world(cfg, world, cfg.seed + s, *rivals);
            bar.inc(1);
            out
        })
        .collect::<Result<Vec<_>>>()?;
    bar.finish();
    let mut chunks = runs.chunks(cfg.seeds as usize);
    let mut planes = Vec::with_capacity(cfg.planes.len());
    for plane in &cfg.planes {
        let mut cells = Vec::new();
        for &y in &plane.y.values {
            for &x in &plane.x.values {
                let worlds = chunks.next().context("a cell without worlds")?.to_vec();
                let metrics = analysis::metrics(&worlds, cfg.replicates, cfg.seed);
                cells.push(Cell {
                    x,
                    y,
                    worlds,
                    metrics,
                });
            }
        }
        planes.push(PlaneMap {
            plane: plane.clone(),
            cells,
        });
    }
    let calibration = match (fit, targets) {
        (Some(fit), Some(t)) => {
            let testbed = chunks
                .next()
                .context("the testbed without worlds")?
                .to_vec();
            Some(calibrate::compare(fit, t, testbed, cfg))
        }
        _ => None,
    };
    let thresholds = analysis::thresholds(&planes, &centre, cfg.replicates, cfg.seed);
    Ok(WorldMap {
        schema_version: WORLD_MAP_SCHEMA_VERSION,
        config: cfg.clone(),
        centre,
        hdc: arms::world_hdc(cfg.hdc_stage_scale),
        calibration,
        planes,
        thresholds,
        seconds: t0.elapsed().as_secs_f64(),
        threads: rayon::current_num_threads(),
    })
}

/// Write `results.json`, `REPORT.md` and `figures/*.png` of `map` into `dir`; `command` is
/// the command line the report names. Returns the figures' paths.
pub fn write(map: &WorldMap, dir: &Path, command: &str) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir.join("figures")).map_err(crate::error::io_error(dir))?;
    envdist_core::io::write_json_atomic(dir.join("results.json"), map)?;
    let figures = report::figures(map, &dir.join("figures"))?;
    envdist_core::io::write_atomic(
        dir.join("REPORT.md"),
        report::markdown(map, command).as_bytes(),
    )?;
    Ok(figures)
}

/// The terminal summary: the regions and the thresholds in a few lines.
pub fn summary(map: &WorldMap) -> String {
    report::summary(map)
}
