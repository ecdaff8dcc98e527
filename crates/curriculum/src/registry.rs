//! One serialisable configuration for any sampler of this crate, so a caller (the experiment,
//! the Python binding) builds HDC or a rival from the same kind of file.

use std::path::Path;

use envdist_core::{EnvSpec, EpisodeOutcome, FileError, InvalidValue};
use serde::{Deserialize, Serialize};

use crate::error::CurriculumError;
use crate::rivals::ladder::{LadderConfig, LadderRule};
use crate::rivals::learnability::{LearnabilityConfig, LearnabilityRule};
use crate::rivals::learning_progress::{LearningProgressConfig, LearningProgressRule};
use crate::rivals::pass_rate::{PassRateConfig, PassRateRule};
use crate::rivals::plr::{PlrConfig, PlrRule};
use crate::rivals::sec::{SecConfig, SecRule};
use crate::rivals::{Rule, RuleConfig, RuleSampler};
use crate::{CurriculumSampler, EnvSnapshot, HdcConfig, HdcSampler, TraceEvent, Traced};

/// A row's sampler type: a rival's is defined (its rule run by [`RuleSampler`]); HDC's is its
/// own struct.
macro_rules! rival_sampler {
    ($(#[$doc:meta])* $sampler:ident) => {};
    ($(#[$doc:meta])* $sampler:ident = $rule_sampler:ty) => {
        $(#[$doc])*
        pub type $sampler = $rule_sampler;
    };
}

/// The one table of sampler kinds. A row: the kind's variant and configuration, its name in
/// configs and saved states, and its sampler type (for a rival, defined here: its rule run by
/// [`RuleSampler`]). The enum, [`SamplerConfig::KINDS`], the rivals' sampler types and every
/// per-kind decision of [`SamplerConfig`] (name, default, parsing, validation, building) come
/// from it, so a new kind is one row (and its module).
macro_rules! sampler_kinds {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($config:ty) = $name:literal => $sampler:ident $(= $rule_sampler:ty)?;
    )+) => {
        $(rival_sampler!($(#[doc = $doc])* $sampler $(= $rule_sampler)?);)+

        /// Any sampler's configuration, tagged by `kind`: `{"kind": "sec", "temperature": 0.4}`.
        /// Missing fields take their documented defaults; unknown fields are refused.
        ///
        /// ```
        /// use envdist_core::TaskSampler;
        /// use envdist_curriculum::{SamplerConfig, synthetic_specs};
        ///
        /// let envs = synthetic_specs("maze", &[(2, 6), (3, 9)]);
        /// let json = serde_json::json!({"kind": "ladder", "window": 2});
        /// let config = SamplerConfig::from_json(&json).unwrap();
        /// let mut sampler = config.build(&envs, 7).unwrap();
        /// assert_eq!(sampler.kind(), "ladder");
        /// // Every environment starts at its smallest scale.
        /// let task = sampler.sample();
        /// assert!(task.scale == 2 || task.scale == 3);
        /// // Where only the trait is needed, the box coerces.
        /// let _plain: Box<dyn TaskSampler> = config.build(&envs, 7).unwrap();
        /// ```
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum SamplerConfig {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant($config),)+
        }

        impl SamplerConfig {
            /// Every kind, in documentation order.
            pub const KINDS: [&'static str; [$($name),+].len()] = [$($name),+];

            /// The kind's name as written in configs.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)+
                }
            }

            /// The default configuration of a kind named exactly.
            fn default_of(kind: &str) -> Option<Self> {
                match kind {
                    $($name => Some(Self::$variant(<$config>::default())),)+
                    _ => None,
                }
            }

            /// This configuration's kind, its fields read from `fields`.
            fn reparse(&self, fields: &serde_json::Value) -> Result<Self, CurriculumError> {
                Ok(match self {
                    $(Self::$variant(_) => Self::$variant(parse_fields($name, fields)?),)+
                })
            }

            /// Check the configuration; the error names the first bad field.
            pub fn validate(&self) -> Result<(), CurriculumError> {
                match self {
                    $(Self::$variant(c) => c.validate(),)+
                }
            }

            /// Build the sampler of its kind's row.
            fn build_kind(
                &self,
                envs: &[EnvSpec],
                seed: u64,
                options: BuildOptions<'_>,
            ) -> Result<Box<dyn CurriculumSampler>, CurriculumError> {
                Ok(match self {
                    $(Self::$variant(c) => {
                        let sampler = $sampler::from_config(c, envs, seed, options.weights)?;
                        traced_if(options.trace, sampler)
                    })+
                })
            }
        }
    };
}

sampler_kinds! {
    /// The HDC curriculum (and its ablation modes).
    Hdc(HdcConfig) = "hdc" => HdcSampler;
    /// Online pass-rate filtering (DAPO dynamic sampling as a prime-rl style sampler).
    PassRate(PassRateConfig) = "pass_rate" => PassRateSampler = RuleSampler<PassRateRule>;
    /// Learnability `p (1 - p)` sampling, top-k or proportional (Syllabus learnability).
    Learnability(LearnabilityConfig) = "learnability"
        => LearnabilitySampler = RuleSampler<LearnabilityRule>;
    /// Learning progress sampling (Syllabus online learning progress).
    LearningProgress(LearningProgressConfig) = "learning_progress"
        => LearningProgressSampler = RuleSampler<LearningProgressRule>;
    /// The SEC bandit over (environment, harness level, scale).
    Sec(SecConfig) = "sec" => SecSampler = RuleSampler<SecRule>;
    /// RLVE's difficulty ladder per environment.
    Ladder(LadderConfig) = "ladder" => LadderSampler = RuleSampler<LadderRule>;
    /// Robust prioritized level replay over replayable tasks.
    Plr(PlrConfig) = "plr" => PlrSampler = RuleSampler<PlrRule>;
}

/// A kind's sampler, built from its configuration over `envs`, seeded: what a row of the table
/// builds.
trait FromConfig: CurriculumSampler + Sized + 'static {
    /// The kind's configuration.
    type Config;
    /// The sampler; `weights` (one per environment) are HDC's alone.
    fn from_config(
        config: &Self::Config,
        envs: &[EnvSpec],
        seed: u64,
        weights: Option<&[f32]>,
    ) -> Result<Self, CurriculumError>;
}

/// HDC: `weights` replace its `env_weights`.
impl FromConfig for HdcSampler {
    type Config = HdcConfig;
    fn from_config(
        config: &HdcConfig,
        envs: &[EnvSpec],
        seed: u64,
        weights: Option<&[f32]>,
    ) -> Result<Self, CurriculumError> {
        HdcSampler::new(envs, weights, config.clone(), seed)
    }
}

/// A rival: its rule run by [`RuleSampler`]. Per-environment weights are refused: a rival
/// draws environments by its own rule.
impl<R: Rule + 'static> FromConfig for RuleSampler<R> {
    type Config = R::Config;
    fn from_config(
        config: &R::Config,
        envs: &[EnvSpec],
        seed: u64,
        weights: Option<&[f32]>,
    ) -> Result<Self, CurriculumError> {
        if weights.is_some() {
            return Err(CurriculumError::Envs(InvalidValue::new(
                "weights",
                "none: per-environment weights are HDC's",
                format!(
                    "weights for {}, which draws environments by its own rule",
                    R::KIND
                ),
            )));
        }
        RuleSampler::new(envs, config.clone(), seed)
    }
}

/// `sampler`, wrapped in [`Traced`] when `trace`.
fn traced_if<S: CurriculumSampler + 'static>(
    trace: bool,
    sampler: S,
) -> Box<dyn CurriculumSampler> {
    if trace {
        Box::new(Traced::new(sampler))
    } else {
        Box::new(sampler)
    }
}

/// Read one kind's configuration from its fields alone, naming a bad field and the kind.
fn parse_fields<T: serde::de::DeserializeOwned>(
    kind: &str,
    fields: &serde_json::Value,
) -> Result<T, CurriculumError> {
    // The variant's own struct, not the tagged enum: an internally tagged enum buffers its
    // fields first and loses the path to a bad one.
    serde_path_to_error::deserialize(fields).map_err(|e| {
        let mut v = envdist_core::invalid_from_serde(e.path().to_string(), &e.inner().to_string());
        v.expected = format!("{} (in the {kind} configuration)", v.expected);
        CurriculumError::Config(v)
    })
}

impl SamplerConfig {
    /// The default configuration of a kind (`-` and case are forgiven).
    pub fn default_for(kind: &str) -> Result<Self, CurriculumError> {
        let norm = kind.trim().to_ascii_lowercase().replace('-', "_");
        Self::default_of(&norm).ok_or_else(|| {
            CurriculumError::Config(InvalidValue::new(
                "kind",
                Self::KINDS.join(" | "),
                format!("{kind:?}"),
            ))
        })
    }

    /// Parse a configuration from JSON (`{"kind": "sec", ...}`, the kind spelt as
    /// [`Self::KINDS`] writes it); errors name the offending field.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, CurriculumError> {
        let kinds = || format!("an object with \"kind\" one of {}", Self::KINDS.join(", "));
        let Some(map) = value.as_object() else {
            return Err(CurriculumError::Config(InvalidValue::new(
                ".",
                kinds(),
                value.to_string(),
            )));
        };
        let kind = match map.get("kind") {
            Some(serde_json::Value::String(k)) if Self::KINDS.contains(&k.as_str()) => k,
            found => {
                return Err(CurriculumError::Config(InvalidValue::new(
                    "kind",
                    Self::KINDS.join(" | "),
                    found.map_or_else(|| "nothing".into(), |k| k.to_string()),
                )));
            }
        };
        let mut fields = map.clone();
        fields.remove("kind");
        Self::from_fields(kind, &serde_json::Value::Object(fields))
    }

    /// The configuration of `kind` (`-` and case forgiven, as in [`Self::default_for`]) from
    /// its fields alone (`{"temperature": 0.4}`, no `kind`); missing fields take their
    /// defaults. Errors name the offending field: an unknown one, or one of the wrong type.
    /// Values are checked by [`Self::validate`] (and when the sampler is built).
    pub fn from_fields(kind: &str, fields: &serde_json::Value) -> Result<Self, CurriculumError> {
        Self::default_for(kind)?.reparse(fields)
    }

    /// The configuration a command line names: `mode` is an HDC mode (`full`, `scale_only`, ...)
    /// or a sampler kind (`sec`, `plr`, ...); `file` (a config file's JSON) holds the fields,
    /// tagged with `kind` or not. An HDC mode keeps HDC and sets its mode; a kind reads the
    /// file as that kind's fields; neither reads the file as tagged (or HDC's, untagged).
    /// Errors name the mismatch (`--config` says one kind, `--mode` another).
    pub fn resolve(
        mode: Option<&str>,
        file: Option<serde_json::Value>,
    ) -> Result<Self, CurriculumError> {
        let bad = |field: &str, expected: String, found: String| {
            CurriculumError::Config(InvalidValue::new(field, expected, found))
        };
        let tagged = file
            .as_ref()
            .and_then(|v| v.get("kind"))
            .and_then(|k| k.as_str())
            .map(str::to_owned);
        let hdc_mode = match mode {
            None => None,
            Some(m) => match m.parse::<crate::Mode>() {
                Ok(mode) => Some(mode),
                Err(_) => {
                    let kind = Self::default_for(m)
                        .map_err(|_| {
                            bad(
                                "mode",
                                format!(
                                    "an HDC mode ({}) or a sampler ({})",
                                    crate::Mode::ALL.map(crate::Mode::name).join(", "),
                                    Self::KINDS.join(", ")
                                ),
                                format!("{m:?}"),
                            )
                        })?
                        .kind();
                    return match file {
                        None => Self::default_for(kind),
                        Some(mut v) => {
                            if let Some(t) = &tagged {
                                if t != kind {
                                    return Err(bad(
                                        "kind",
                                        format!("{kind:?} (the mode asked for)"),
                                        format!("{t:?} in the config file"),
                                    ));
                                }
                            } else if let serde_json::Value::Object(map) = &mut v {
                                map.insert("kind".into(), kind.into());
                            }
                            Self::from_json(&v)
                        }
                    };
                }
            },
        };
        let mut config = match (file, tagged) {
            (Some(v), Some(_)) => match Self::from_json(&v)? {
                Self::Hdc(c) => c,
                other if hdc_mode.is_none() => return Ok(other),
                other => {
                    return Err(bad(
                        "kind",
                        format!(
                            "hdc (the mode asked for HDC mode {})",
                            hdc_mode.map_or("?", crate::Mode::name)
                        ),
                        format!("{:?} in the config file", other.kind()),
                    ));
                }
            },
            (Some(v), None) => serde_path_to_error::deserialize(v).map_err(|e| {
                let v =
                    envdist_core::invalid_from_serde(e.path().to_string(), &e.inner().to_string());
                bad(
                    &v.field,
                    format!("{} (in the HDC configuration)", v.expected),
                    v.found,
                )
            })?,
            (None, _) => HdcConfig::default(),
        };
        if let Some(m) = hdc_mode {
            config.mode = m;
        }
        Ok(Self::Hdc(config))
    }

    /// Read a configuration file (a tagged object, as [`Self::from_json`]) and check it;
    /// errors name the file and the field.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, CurriculumError> {
        let path = path.as_ref();
        let value: serde_json::Value = envdist_core::io::read_json(path, None)?;
        let config = Self::from_json(&value).and_then(|c| c.validate().map(|()| c));
        config.map_err(|e| match e {
            CurriculumError::Config(v) => {
                FileError::invalid(path, v.field, v.expected, v.found).into()
            }
            other => other,
        })
    }

    /// Build the sampler over `envs` (uniform environment weights), seeded, untraced. The box
    /// coerces to `Box<dyn TaskSampler>` where only the trait is needed.
    pub fn build(
        &self,
        envs: &[EnvSpec],
        seed: u64,
    ) -> Result<Box<dyn CurriculumSampler>, CurriculumError> {
        self.build_with(envs, seed, BuildOptions::default())
    }

    /// Build the sampler over `envs`, seeded, with `options`: tracing (the sampler then
    /// records a [`TraceEvent`](crate::TraceEvent) per outcome and keeps the trace in its
    /// state, see [`Traced`]) and HDC's per-environment weights (refused for the rivals,
    /// which draw environments by their own rule).
    pub fn build_with(
        &self,
        envs: &[EnvSpec],
        seed: u64,
        options: BuildOptions<'_>,
    ) -> Result<Box<dyn CurriculumSampler>, CurriculumError> {
        self.build_kind(envs, seed, options)
    }
}

/// How [`SamplerConfig::build_with`] builds a sampler. The default: untraced, uniform
/// environment weights.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions<'a> {
    /// Record a trace line per reported outcome, kept in the saved state ([`Traced`]).
    pub trace: bool,
    /// HDC only: one sampling weight per environment, replacing `env_weights`.
    pub weights: Option<&'a [f32]>,
}

impl CurriculumSampler for HdcSampler {
    fn kind(&self) -> &'static str {
        "hdc"
    }

    /// Score: the competence (bias-corrected success EMA) of the current stage; success: the
    /// success rate of every reported outcome; harness: the current level; scales: the
    /// window.
    fn snapshot(&self) -> Vec<EnvSnapshot> {
        let probs = self.env_probabilities();
        self.status()
            .into_iter()
            .enumerate()
            .map(|(i, st)| {
                let lp = self.level_probabilities(i);
                EnvSnapshot {
                    env: st.env,
                    probability: probs[i],
                    score: st.competence as f64,
                    success: if st.episodes > 0 {
                        st.successes as f64 / st.episodes as f64
                    } else {
                        f64::NAN
                    },
                    harness: st.harness,
                    mean_harness: lp.iter().enumerate().map(|(j, p)| j as f64 * p).sum(),
                    scale_lo: st.window.0,
                    scale_hi: st.window.1,
                    mean_scale: (st.window.0 as f64 + st.window.1 as f64) / 2.0,
                    episodes: st.episodes,
                    successes: st.successes,
                }
            })
            .collect()
    }

    fn samples(&self) -> u64 {
        HdcSampler::samples(self)
    }

    fn updates(&self) -> u64 {
        HdcSampler::updates(self)
    }

    /// `level`: the environment's current level; `window_lo..=window_hi`: its scale window.
    fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent> {
        HdcSampler::trace_event(self, step, outcome)
    }

    /// [`HdcSampler::with_envs`]: uniform weights (or `env_weights`) over the new set.
    fn retarget(&mut self, envs: &[EnvSpec]) -> Result<(), CurriculumError> {
        *self = self.with_envs(envs)?;
        Ok(())
    }

    fn hdc(&self) -> Option<&HdcSampler> {
        Some(self)
    }

    /// [`HdcSampler::save`]: the [`SavedState`](crate::SavedState) as is.
    fn save_state_file(&self, path: &Path) -> Result<(), CurriculumError> {
        self.save(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::specs;
    use envdist_core::TaskSampler;
    use serde_json::json;

    #[test]
    fn every_kind_round_trips_through_json_and_builds() {
        let envs = specs(3, 2, 5);
        for kind in SamplerConfig::KINDS {
            let cfg = SamplerConfig::default_for(kind).unwrap();
            assert_eq!(cfg.kind(), kind);
            cfg.validate().unwrap();
            let json = serde_json::to_value(&cfg).unwrap();
            assert_eq!(json["kind"], kind);
            assert_eq!(SamplerConfig::from_json(&json).unwrap(), cfg);
            let mut s = cfg.build(&envs, 7).unwrap();
            assert_eq!(s.kind(), kind);
            let t = s.sample();
            assert!((2..=5).contains(&t.scale));
            let snap = s.snapshot();
            let total: f64 = snap.iter().map(|e| e.probability).sum();
            assert!((total - 1.0).abs() < 1e-9, "{kind}: {total}");
            let as_trait: Box<dyn TaskSampler> = cfg.build(&envs, 7).unwrap();
            drop(as_trait);
        }
        let c = SamplerConfig::from_json(&serde_json::json!({"kind": "sec", "temperature": 0.4}))
            .unwrap();
        match c {
            SamplerConfig::Sec(s) => assert_eq!((s.temperature, s.alpha), (0.4, 0.5)),
            other => panic!("{other:?}"),
        }
        let e = SamplerConfig::from_json(&serde_json::json!({"kind": "sec", "temprature": 0.4}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("temprature"), "{e}");
        // Bad fields are named, whatever is wrong with them.
        for (json, field) in [
            (
                serde_json::json!({"kind": "sec", "temperature": "hot"}),
                "`temperature`",
            ),
            (
                serde_json::json!({"kind": "plr", "buffer_size": -1}),
                "`buffer_size`",
            ),
            (
                serde_json::json!({"kind": "ladder", "harness_levels": ["H9"]}),
                "`harness_levels[0]`",
            ),
            (serde_json::json!({"kind": "bandit"}), "`kind`"),
            (serde_json::json!({"window": 2}), "`kind`"),
        ] {
            let e = SamplerConfig::from_json(&json).unwrap_err().to_string();
            assert!(e.contains(field), "{json}: {e}");
        }
        let e = SamplerConfig::from_fields("pass-rate", &serde_json::json!({"lowe": 0.1}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("lowe") && e.contains("pass_rate"), "{e}");
        // In words, not serde's: the range of the field's type, no Rust type name.
        let e = SamplerConfig::from_fields("plr", &serde_json::json!({"buffer_size": -1}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("field `buffer_size`: expected an integer from 0 to 4294967295 (in the plr configuration), found -1"),
            "{e}"
        );
        assert_eq!(
            SamplerConfig::from_fields("Pass-Rate", &serde_json::json!({})).unwrap(),
            SamplerConfig::default_for("pass_rate").unwrap()
        );
        let e = SamplerConfig::default_for("bandit")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`kind`") && e.contains("plr"), "{e}");
    }

    /// Every kind's validation: per kind, bad values of its fields, each refused alone with
    /// an error naming its field.
    #[test]
    fn bad_values_are_refused_naming_the_field() {
        let bad = json!({
            "hdc": {"window_width": 0, "competence_threshold": 1.5, "ema_rate": 0.0,
                    "min_episodes": 0, "lambda": -1.0, "decay_span": 5, "global_fraction": 0.0,
                    "env_weights": {"a/b": -2.0}, "max_stage_episodes": 2},
            "pass_rate": {"group_size": 0, "high": 0.0, "max_easy_fraction": 1.0,
                          "harness_levels": []},
            "learnability": {"top_k": 0, "learnable_prob": 1.5, "ema_rate": 0.0},
            "learning_progress": {"p_theta": 1.0, "update_interval": 0, "uniform_prob": -0.1},
            "sec": {"alpha": 0.0, "temperature": 0.0, "batch_episodes": 0, "group_size": 1},
            "ladder": {"threshold": 0.0, "window": 0},
            "plr": {"buffer_size": 0, "rho": 1.5},
        });
        let refusal = |kind: &str, fields: serde_json::Value| {
            let config = SamplerConfig::from_fields(kind, &fields).unwrap();
            config.validate().unwrap_err().to_string()
        };
        for (kind, fields) in bad.as_object().unwrap() {
            for (field, value) in fields.as_object().unwrap() {
                let e = refusal(kind, json!({ field: value }));
                // `env_weights.a/b`: the field and the weight's key.
                assert!(e.contains(&format!("`{field}")), "{kind} {field}: {e}");
            }
        }
        // Caps that leave no arm drawable: the second one is named.
        let e = refusal("pass_rate", json!({"max_easy_fraction": 0.6}));
        assert!(e.contains("`max_hard_fraction`"), "{e}");
        // JSON has no NaN: a rate that is not a number, from Rust.
        let nan = HdcConfig {
            ema_rate: f32::NAN,
            ..Default::default()
        };
        assert!(
            nan.validate()
                .unwrap_err()
                .to_string()
                .contains("`ema_rate`")
        );
    }

    #[test]
    fn a_state_is_refused_by_every_other_kind() {
        let envs = specs(2, 2, 4);
        let states: Vec<_> = SamplerConfig::KINDS
            .iter()
            .map(|k| {
                let mut s = SamplerConfig::default_for(k)
                    .unwrap()
                    .build(&envs, 3)
                    .unwrap();
                s.sample();
                s.state()
            })
            .collect();
        for (i, kind) in SamplerConfig::KINDS.iter().enumerate() {
            let mut s = SamplerConfig::default_for(kind)
                .unwrap()
                .build(&envs, 3)
                .unwrap();
            s.restore(&states[i]).unwrap();
            for (j, other) in states.iter().enumerate().filter(|&(j, _)| j != i) {
                let e = s.restore(other).unwrap_err().0;
                assert!(
                    e.contains("sampler") && e.contains("another sampler"),
                    "{kind} <- {}: {e}",
                    SamplerConfig::KINDS[j]
                );
            }
            assert_eq!(s.state(), states[i], "{kind}: a refused state changed it");
        }
    }
}
