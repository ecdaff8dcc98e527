//! # envdist-envs
//!
//! The environment suite of envdist: procedurally generated pixel environments with harness
//! text, a state scale and atomic ability tags, registered as a pool of exactly 200
//! environments plus a held-out (OOD) set of further families. See `crates/envs/README.md`
//! for the families, the ability catalogue, the conflict pairs and the reward scheme.
//!
//! Main design decision: a family is only its rules. Each game draws semantic cells into a
//! [`render::Grid`]; one renderer turns that grid into pixels at any canvas (cells scale with
//! it, so 32x32 frames are drawn directly), and the same grid gives the text observation. One
//! wrapper ([`SuiteEnv`]) adds what every environment shares: themes, observation changes
//! (noise, occlusion, egocentric crop), mirrored controls, harness levels (only the surviving
//! channels are generated), the horizon and rewards (+1 on success, 0 otherwise, no step cost).
//!
//! ```
//! use envdist_core::{HarnessLevel, Task, env::EnvFactory};
//! use envdist_envs::{Suite, SuiteConfig};
//!
//! let suite = Suite::new(SuiteConfig { canvas: 32, ..SuiteConfig::default() });
//! assert_eq!(suite.pool_specs().len(), 200);
//! assert!(suite.ood_specs().len() >= 20);
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
//! ```
#![warn(missing_docs)]

pub mod abilities;
mod env;
mod games;
pub mod render;
mod vec_env;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use envdist_core::{Env, EnvId, EnvSpec, HarnessSchedule, Rgb8Image, ScaleRange, Split, Turn};
// Not re-exported at the root of envdist-core, so named through its module.
use envdist_core::env::{EnvFactory, UnknownEnv};
use serde::{Deserialize, Serialize};

pub use env::{ObsMod, StepInfo, SuiteEnv};
pub use vec_env::{VecEnv, VecEnvError};

use env::VariantCfg;
use render::{CLASSIC, THEMES};

/// Smallest supported canvas side.
pub const MIN_CANVAS: u32 = 16;
/// Largest supported canvas side.
pub const MAX_CANVAS: u32 = 128;

/// Rendering and harness options of the whole suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteConfig {
    /// Side of the square canvas in pixels, 16..=128 (default 64).
    pub canvas: u32,
    /// Which channel each harness level drops.
    pub harness_schedule: HarnessSchedule,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        Self {
            canvas: 64,
            harness_schedule: HarnessSchedule::default(),
        }
    }
}

/// A [`SuiteConfig`] that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Canvas outside 16..=128.
    #[error("suite config field `canvas`: expected 16..=128 pixels, found {0}")]
    Canvas(u32),
    /// A harness schedule that does not name each channel once.
    #[error("suite config: {0}")]
    Schedule(envdist_core::InvalidValue),
}

impl SuiteConfig {
    /// Check the canvas range and the harness schedule.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_CANVAS..=MAX_CANVAS).contains(&self.canvas) {
            return Err(ConfigError::Canvas(self.canvas));
        }
        self.harness_schedule
            .validate()
            .map_err(|e| ConfigError::Schedule(e.within("harness_schedule")))
    }
}

struct Entry {
    spec: Arc<EnvSpec>,
    family: usize,
    rule: u8,
    variant: VariantCfg,
}

/// The registry of every environment: the pool, the held-out set, filters, and the factory.
pub struct Suite {
    config: SuiteConfig,
    families: Vec<games::Family>,
    entries: Vec<Entry>,
}

impl Suite {
    /// Build the suite. An out-of-range canvas is clamped into 16..=128 and an invalid
    /// schedule replaced by the default; use [`Suite::try_new`] to refuse them instead.
    pub fn new(mut config: SuiteConfig) -> Self {
        config.canvas = config.canvas.clamp(MIN_CANVAS, MAX_CANVAS);
        if config.harness_schedule.validate().is_err() {
            config.harness_schedule = HarnessSchedule::default();
        }
        let families = games::families();
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
                    ObsMod::Noise => ("noise", "noise-robust"),
                    ObsMod::Occlude => ("occluded", "occlusion-robust"),
                    ObsMod::Ego => ("egocentric", "egocentric-view"),
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

    /// Build the suite, refusing an invalid config.
    pub fn try_new(config: SuiteConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self::new(config))
    }

    /// The configuration in use (after clamping).
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

    /// Family names, pool families first, in registration order.
    pub fn families(&self) -> Vec<&'static str> {
        let names = |split| {
            self.families
                .iter()
                .filter(move |f| f.split == split)
                .map(|f| f.name)
        };
        names(Split::Pool).chain(names(Split::Ood)).collect()
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
