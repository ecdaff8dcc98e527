//! # envdist-envs
//!
//! The environment suite of envdist: procedurally generated pixel environments with harness
//! text, a state scale and atomic ability tags, registered as a pool of exactly 200
//! environments plus two held-out sets of further families: the OOD set, and a confirmatory
//! set that only confirmatory records evaluate. See `crates/envs/README.md`
//! for the families, the ability catalogue, the conflict pairs and the reward scheme.
//!
//! Main design decision: a family is only its rules. Each game draws semantic cells into a
//! [`render::Grid`]; one renderer turns that grid into pixels at any canvas (cells scale with
//! it, so 32x32 frames are drawn directly), and the same grid gives the text observation. One
//! wrapper ([`SuiteEnv`]) adds what every environment shares: themes, observation changes
//! (noise, occlusion, egocentric crop), mirrored controls, harness levels (only the surviving
//! channels are generated), the horizon and rewards (+1 on success, 0 otherwise, no step cost).
//! The hints channel comes in two styles ([`HintStyle`]): `Action` gives the solver's action
//! (or a single-turn answer's evidence) away, `Subgoal` only scaffolds. [`inspect`] looks at
//! the suite from outside: the solver table, one episode written out as frames and text, and
//! the stepping benchmark.
//!
//! ```
//! use envdist_core::{HarnessLevel, Task, env::EnvFactory};
//! use envdist_envs::{Suite, SuiteConfig};
//!
//! let suite = Suite::new(SuiteConfig { canvas: 32, ..SuiteConfig::default() })?;
//! assert_eq!(suite.pool_specs().len(), 200);
//! assert!(suite.ood_specs().len() >= 20);
//! assert!(suite.confirm_specs().len() >= 20);
//! let spec = suite.pool_specs().into_iter().find(|s| s.id.as_str() == "maze/classic").unwrap();
//! let mut env = suite.make(&spec.id).unwrap();
//! let task = Task { env: spec.id.clone(), seed: 1, harness: HarnessLevel::H0, scale: spec.scale.min };
//! let obs = env.reset(&task);
//! assert_eq!((obs.image.width, obs.image.height), (32, 32));
//! assert!(obs.harness.hints.unwrap().starts_with("next action:"));
//! let mut solved = false;
//! for _ in 0..spec.max_steps {
//!     let a = env.oracle_action().unwrap();
//!     let step = env.step(a);
//!     if step.done || step.truncated {
//!         solved = step.success;
//!         break;
//!     }
//! }
//! assert!(solved);
//! # Ok::<(), envdist_core::InvalidValue>(())
//! ```
#![warn(missing_docs)]

pub mod abilities;
mod env;
mod games;
pub mod inspect;
pub mod render;
mod vec_env;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use envdist_core::{
    Checked, Env, EnvId, EnvSpec, HarnessSchedule, InvalidValue, Rgb8Image, Rng, ScaleRange, Split,
    Turn, Validate,
};
// Not re-exported at the root of envdist-core, so named through its module.
use envdist_core::env::{EnvFactory, UnknownEnv};
use serde::{Deserialize, Serialize};

pub use env::{ObsMod, StepInfo, SuiteEnv};
pub use render::HintStyle;
pub use vec_env::{VecEnv, VecEnvError};

use env::VariantCfg;
use render::{CLASSIC, THEMES};

/// The throughput mixture `xtask bench-train` and the trainer's criterion bench train on: the
/// classic variants of three navigation, one puzzle and two single-turn families.
pub const BENCH_ENVS: [&str; 6] = [
    "maze/classic",
    "collect/classic",
    "sokoban/classic",
    "count-objects/classic",
    "key-door/classic",
    "symmetry/classic",
];

/// The ability tags of the observation variants (noise, occlusion, an egocentric crop): what
/// a variant adds to its family's abilities without changing the task.
pub const OBSERVATION_ABILITIES: [&str; 3] =
    ["noise-robust", "occlusion-robust", "egocentric-view"];

/// Smallest supported canvas side.
pub const MIN_CANVAS: u32 = 16;
/// Largest supported canvas side.
pub const MAX_CANVAS: u32 = 128;

/// Rendering and harness options of the whole suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SuiteConfig {
    /// Side of the square canvas in pixels, 16..=128 (default 64).
    pub canvas: u32,
    /// Which channel each harness level drops.
    pub harness_schedule: HarnessSchedule,
    /// What the `hints` channel says (default [`HintStyle::Action`]).
    #[serde(default)]
    pub hint_style: HintStyle,
    /// Add the compositional sub-pool to the pool (default off): 20 single-turn families,
    /// each one operation (count, compare, locate, name or match a colour) on one look, in
    /// one glyph vocabulary and one answer layout (docs/experiments/BETS.md, bet 1). Off, it
    /// is left out of the serialised config, so configs written before it read the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compositional: bool,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        Self {
            canvas: 64,
            harness_schedule: HarnessSchedule::default(),
            hint_style: HintStyle::default(),
            compositional: false,
        }
    }
}

impl std::str::FromStr for HintStyle {
    type Err = InvalidValue;

    /// Parse `action` or `subgoal` (a command-line flag); anything else names the choices.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HintStyle::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| InvalidValue::new("hint_style", "action or subgoal", s))
    }
}

impl SuiteConfig {
    /// The default configuration at another canvas size.
    pub fn with_canvas(canvas: u32) -> Self {
        Self {
            canvas,
            ..Self::default()
        }
    }
}

impl Validate for SuiteConfig {
    /// Check the canvas range and the harness schedule.
    fn validate(&self) -> Result<(), InvalidValue> {
        if !(MIN_CANVAS..=MAX_CANVAS).contains(&self.canvas) {
            return Err(InvalidValue::new(
                "canvas",
                format!("{MIN_CANVAS}..={MAX_CANVAS} pixels"),
                self.canvas,
            ));
        }
        self.harness_schedule
            .validate()
            .map_err(|e| e.within("harness_schedule"))
    }
}

struct Entry {
    spec: Arc<EnvSpec>,
    family: usize,
    rule: u8,
    variant: VariantCfg,
}

/// The registry of every environment: the pool, the held-out (OOD) and confirmatory sets,
/// filters, and the factory.
pub struct Suite {
    config: SuiteConfig,
    families: Vec<games::Family>,
    entries: Vec<Entry>,
}

impl Default for Suite {
    /// The suite with the default configuration (64 px canvas, default harness schedule).
    fn default() -> Self {
        Self::build(
            SuiteConfig::default()
                .checked()
                .expect("the default suite config is valid"),
        )
    }
}

impl Suite {
    /// Build the suite; an invalid config is refused with the field that is wrong.
    pub fn new(config: SuiteConfig) -> Result<Self, InvalidValue> {
        Ok(Self::build(config.checked()?))
    }

    /// The suite at another canvas size (default harness schedule).
    pub fn with_canvas(canvas: u32) -> Result<Self, InvalidValue> {
        Self::new(SuiteConfig::with_canvas(canvas))
    }

    fn build(config: Checked<SuiteConfig>) -> Self {
        let config = config.into_inner();
        let mut families = games::families();
        if config.compositional {
            families.extend(games::compositional_families());
        }
        let mut entries = Vec::new();
        for (fi, f) in families.iter().enumerate() {
            let game = (f.make)(0);
            let max_steps = game.horizon(f.scale.1);
            let base_abilities: Vec<String> = f.abilities.iter().map(|s| s.to_string()).collect();
            let twin_id = f
                .twin
                .as_ref()
                .map(|t| EnvId::new(format!("{}/{}", f.name, t.variant)));
            let mut push = |variant: String,
                            rule: u8,
                            cfg: VariantCfg,
                            extra: &[&str],
                            instruction: &str,
                            twin: Option<EnvId>| {
                let mut abilities = base_abilities.clone();
                abilities.extend(extra.iter().map(|s| s.to_string()));
                abilities.sort();
                abilities.dedup();
                let spec = EnvSpec {
                    id: EnvId::new(format!("{}/{}", f.name, variant)),
                    family: f.name.to_string(),
                    variant,
                    turn: f.turn,
                    scale: ScaleRange {
                        min: f.scale.0,
                        max: f.scale.1,
                    },
                    split: f.split,
                    abilities,
                    conflict_twin: twin,
                    instruction: instruction.to_string(),
                    max_steps,
                };
                entries.push(Entry {
                    spec: Arc::new(spec),
                    family: fi,
                    rule,
                    variant: cfg,
                });
            };
            let plain = |theme| VariantCfg {
                theme,
                obs: ObsMod::Plain,
                mirror: false,
            };
            push(
                "classic".into(),
                0,
                plain(CLASSIC),
                &[],
                f.instruction,
                twin_id.clone(),
            );
            if let Some(t) = &f.twin {
                let cfg = VariantCfg {
                    mirror: t.mirror,
                    ..plain(CLASSIC)
                };
                push(
                    t.variant.into(),
                    if t.mirror { 0 } else { 1 },
                    cfg,
                    t.abilities,
                    t.instruction,
                    Some(EnvId::new(format!("{}/classic", f.name))),
                );
            }
            for theme in THEMES.iter().take(f.themes) {
                push(
                    format!("theme-{}", theme.name),
                    0,
                    plain(*theme),
                    &[],
                    f.instruction,
                    None,
                );
            }
            for obs in f.obs {
                let (name, tag) = match obs {
                    ObsMod::Noise => ("noise", OBSERVATION_ABILITIES[0]),
                    ObsMod::Occlude => ("occluded", OBSERVATION_ABILITIES[1]),
                    ObsMod::Ego => ("egocentric", OBSERVATION_ABILITIES[2]),
                    ObsMod::Plain => continue,
                };
                let cfg = VariantCfg {
                    obs: *obs,
                    ..plain(CLASSIC)
                };
                push(name.into(), 0, cfg, &[tag], f.instruction, None);
            }
        }
        Self {
            config,
            families,
            entries,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &SuiteConfig {
        &self.config
    }

    fn filter(&self, keep: impl Fn(&EnvSpec) -> bool) -> Vec<EnvSpec> {
        self.entries
            .iter()
            .filter(|e| keep(&e.spec))
            .map(|e| (*e.spec).clone())
            .collect()
    }

    /// The 200 pool environments.
    pub fn pool_specs(&self) -> Vec<EnvSpec> {
        self.filter(|s| s.split == Split::Pool)
    }

    /// The held-out (OOD) environments.
    pub fn ood_specs(&self) -> Vec<EnvSpec> {
        self.filter(|s| s.split == Split::Ood)
    }

    /// The confirmatory held-out environments: families in neither the pool nor the OOD set,
    /// meant for the records that confirm what pilots found, never for the pilots.
    pub fn confirm_specs(&self) -> Vec<EnvSpec> {
        self.filter(|s| s.split == Split::Confirm)
    }

    /// Environments of one family.
    pub fn family_specs(&self, family: &str) -> Vec<EnvSpec> {
        self.filter(|s| s.family == family)
    }

    /// Environments that are single- or multi-turn.
    pub fn turn_specs(&self, turn: Turn) -> Vec<EnvSpec> {
        self.filter(|s| s.turn == turn)
    }

    /// Environments that can exercise `ability`.
    pub fn ability_specs(&self, ability: &str) -> Vec<EnvSpec> {
        self.filter(|s| s.abilities.iter().any(|a| a == ability))
    }

    /// Family names, pool families first, then the OOD and the confirmatory ones, in
    /// registration order.
    pub fn families(&self) -> Vec<&'static str> {
        Split::ALL
            .into_iter()
            .flat_map(|split| {
                self.families
                    .iter()
                    .filter(move |f| f.split == split)
                    .map(|f| f.name)
            })
            .collect()
    }

    /// Every ability any environment can emit.
    pub fn abilities(&self) -> BTreeSet<String> {
        self.entries
            .iter()
            .flat_map(|e| e.spec.abilities.iter().cloned())
            .collect()
    }

    /// The spec of `id`.
    pub fn spec(&self, id: &EnvId) -> Option<&EnvSpec> {
        self.entries
            .iter()
            .find(|e| e.spec.id == *id)
            .map(|e| &*e.spec)
    }

    /// The conflict pairs (`a < b` by id) whose members are both in `ids`.
    pub fn conflict_pairs(&self, ids: &[EnvId]) -> Vec<(EnvId, EnvId)> {
        let set: BTreeSet<&EnvId> = ids.iter().collect();
        let mut pairs = Vec::new();
        for id in ids {
            if let Some(t) = self.spec(id).and_then(|s| s.conflict_twin.as_ref())
                && id < t
                && set.contains(t)
            {
                pairs.push((id.clone(), t.clone()));
            }
        }
        pairs.sort();
        pairs.dedup();
        pairs
    }

    /// `size` pool environments (sorted by id) that span many families and keep conflict
    /// twins together: families in a seeded order, one environment of each per round, each
    /// taken with its twin while both fit. The whole pool when `size` covers it.
    pub fn pool_subset(&self, size: usize, seed: u64) -> Vec<EnvId> {
        let mut specs = self.pool_specs();
        specs.sort_by(|a, b| a.id.cmp(&b.id));
        let by_id: BTreeMap<EnvId, EnvSpec> =
            specs.iter().map(|s| (s.id.clone(), s.clone())).collect();
        let mut chosen: BTreeSet<EnvId> = BTreeSet::new();
        if size >= specs.len() {
            return specs.into_iter().map(|s| s.id).collect();
        }
        let mut rng = Rng::derive(seed, 1);
        let mut families: BTreeMap<String, Vec<EnvId>> = BTreeMap::new();
        for s in &specs {
            families
                .entry(s.family.clone())
                .or_default()
                .push(s.id.clone());
        }
        let mut fam: Vec<Vec<EnvId>> = families.into_values().collect();
        rng.shuffle(&mut fam);
        for f in &mut fam {
            rng.shuffle(f);
        }
        let mut round = 0;
        while chosen.len() < size {
            let mut added = false;
            for f in &fam {
                if let Some(id) = f.get(round) {
                    added = true;
                    let twin = by_id[id]
                        .conflict_twin
                        .clone()
                        .filter(|t| by_id.contains_key(t));
                    let need = 1 + usize::from(twin.as_ref().is_some_and(|t| !chosen.contains(t)));
                    if !chosen.contains(id) && chosen.len() + need <= size {
                        chosen.insert(id.clone());
                        if let Some(t) = twin {
                            chosen.insert(t);
                        }
                    }
                }
                if chosen.len() >= size {
                    break;
                }
            }
            if !added {
                break;
            }
            round += 1;
        }
        chosen.into_iter().collect()
    }

    /// `n` held-out environments, one family at a time in id order (all when `n` is 0 or
    /// covers them).
    pub fn ood_subset(&self, n: usize) -> Vec<EnvId> {
        self.held_out_subset(Split::Ood, n)
    }

    /// `n` confirmatory environments, chosen as [`Suite::ood_subset`] chooses (one family at
    /// a time in id order; all when `n` is 0 or covers them).
    pub fn confirm_subset(&self, n: usize) -> Vec<EnvId> {
        self.held_out_subset(Split::Confirm, n)
    }

    fn held_out_subset(&self, split: Split, n: usize) -> Vec<EnvId> {
        let mut specs = self.filter(|s| s.split == split);
        specs.sort_by(|a, b| a.id.cmp(&b.id));
        if n == 0 || n >= specs.len() {
            return specs.into_iter().map(|s| s.id).collect();
        }
        let mut families: BTreeMap<String, Vec<EnvId>> = BTreeMap::new();
        for s in &specs {
            families
                .entry(s.family.clone())
                .or_default()
                .push(s.id.clone());
        }
        let fam: Vec<Vec<EnvId>> = families.into_values().collect();
        let mut out = Vec::new();
        let mut round = 0;
        while out.len() < n {
            for f in &fam {
                if let Some(id) = f.get(round)
                    && out.len() < n
                {
                    out.push(id.clone());
                }
            }
            round += 1;
        }
        out
    }

    /// A fresh environment as its concrete type (for [`VecEnv`] and tools).
    pub fn make_env(&self, id: &EnvId) -> Result<SuiteEnv, UnknownEnv> {
        let e = self
            .entries
            .iter()
            .find(|e| e.spec.id == *id)
            .ok_or_else(|| UnknownEnv(id.clone()))?;
        let f = &self.families[e.family];
        Ok(SuiteEnv::new(
            e.spec.clone(),
            e.variant.clone(),
            (f.make)(e.rule),
            self.config.canvas,
            self.config.harness_schedule.clone(),
            self.config.hint_style,
        ))
    }
}

impl EnvFactory for Suite {
    fn specs(&self) -> Vec<EnvSpec> {
        self.entries.iter().map(|e| (*e.spec).clone()).collect()
    }

    fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv> {
        Ok(Box::new(self.make_env(id)?))
    }

    // The same answer as the provided method, by the suite's index instead of a scan.
    fn specs_of(&self, ids: &[EnvId]) -> Result<Vec<EnvSpec>, UnknownEnv> {
        ids.iter()
            .map(|id| self.spec(id).cloned().ok_or_else(|| UnknownEnv(id.clone())))
            .collect()
    }
}

/// Error writing a PNG.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    /// The buffer does not hold `width * height * 3` bytes.
    #[error(
        "image field `data`: expected {expected} bytes for {width}x{height} RGB, found {found}"
    )]
    Size {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// Encoding failed.
    #[error("encoding PNG for {path}: {message}")]
    Encode {
        /// Target file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Writing failed.
    #[error(transparent)]
    File(#[from] envdist_core::FileError),
}

/// Write `img` as a PNG file, atomically.
pub fn save_png(img: &Rgb8Image, path: impl AsRef<Path>) -> Result<(), PngError> {
    let path = path.as_ref();
    let expected = (img.width * img.height * 3) as usize;
    if img.data.len() != expected {
        return Err(PngError::Size {
            width: img.width,
            height: img.height,
            expected,
            found: img.data.len(),
        });
    }
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(
            &img.data,
            img.width,
            img.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| PngError::Encode {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    envdist_core::io::write_atomic(path, &bytes)?;
    Ok(())
}

use image::ImageEncoder as _;
