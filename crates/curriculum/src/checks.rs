//! The checks every sampler's configuration and saved state share (HDC's and the rivals'
//! alike): one error shape, the environments a sampler was given, the counters it keeps, the
//! environments a retarget retired, and a saved state's schema, configuration and fields.

use std::collections::{HashMap, HashSet};
use std::fmt;

use envdist_core::{EnvId, EnvSpec, HarnessLevel, InvalidValue, ScaleRange, Task};
use serde::{Deserialize, Serialize};

use crate::error::CurriculumError;

/// An environment a retarget dropped, or whose scale range it changed: tasks of it may still
/// be in flight (a trainer's env slots outlive a retarget), so their outcomes are still
/// accepted, counted apart (`unknown`); the outcomes it had before still count in `updates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retired {
    /// The environment.
    pub id: EnvId,
    /// Its scale range when it was dropped.
    pub scale: ScaleRange,
    /// Outcomes it had counted when it was dropped.
    pub episodes: u64,
}

/// Remember `env` (with `episodes` counted) among the retired environments, once per id and
/// range.
pub(crate) fn retire(retired: &mut Vec<Retired>, id: &EnvId, scale: ScaleRange, episodes: u64) {
    match retired.iter_mut().find(|r| &r.id == id && r.scale == scale) {
        Some(r) => r.episodes = r.episodes.saturating_add(episodes),
        None => retired.push(Retired {
            id: id.clone(),
            scale,
            episodes,
        }),
    }
}

/// The scale range an outcome of `task` is checked against: the environment's current range
/// (`current`, when the sampler draws it) if it holds the scale, else that of a retired
/// environment of the same id that does, else whichever is known.
pub(crate) fn issued_range(
    current: Option<ScaleRange>,
    retired: &[Retired],
    task: &Task,
) -> Option<ScaleRange> {
    let of_id = || retired.iter().filter(|r| r.id == task.env).map(|r| r.scale);
    current
        .filter(|r| r.contains(task.scale))
        .or_else(|| of_id().find(|r| r.contains(task.scale)))
        .or(current)
        .or_else(|| of_id().next())
}

/// The counters every sampler keeps, checked against each other: `updates` is exactly the
/// outcomes counted per environment (`episodes`) plus those retired environments had;
/// `unknown` counts outcomes of retired environments, so it is 0 without any.
pub(crate) fn check_counters(
    updates: u64,
    unknown: u64,
    episodes: impl Iterator<Item = u64>,
    retired: &[Retired],
) -> Result<(), InvalidValue> {
    let mut seen = HashSet::new();
    for (k, r) in retired.iter().enumerate() {
        if r.scale.min > r.scale.max || !seen.insert((&r.id, r.scale)) {
            return Err(InvalidValue::new(
                format!("retired[{k}]"),
                "an environment with min <= max, listed once per scale range",
                format!("{} (scale {}..={})", r.id, r.scale.min, r.scale.max),
            ));
        }
    }
    let counted = episodes
        .chain(retired.iter().map(|r| r.episodes))
        .try_fold(0u64, u64::checked_add);
    if counted != Some(updates) {
        return Err(InvalidValue::new(
            "updates",
            format!(
                "the outcomes counted per environment, retired ones included ({})",
                counted.map_or_else(|| "more than 2^64".into(), |n| n.to_string())
            ),
            updates,
        ));
    }
    if unknown > 0 && retired.is_empty() {
        return Err(InvalidValue::new(
            "unknown",
            "0 (outcomes of dropped environments; none was dropped)",
            unknown,
        ));
    }
    Ok(())
}

/// Check an environment list (not empty, ranges not reversed, ids distinct) and index it.
pub(crate) fn check_envs(specs: &[EnvSpec]) -> Result<HashMap<EnvId, usize>, CurriculumError> {
    if specs.is_empty() {
        return Err(CurriculumError::Envs(InvalidValue::new(
            "envs",
            "at least one environment",
            "none",
        )));
    }
    let mut index = HashMap::with_capacity(specs.len());
    for (i, e) in specs.iter().enumerate() {
        if e.scale.min > e.scale.max {
            return Err(CurriculumError::Envs(InvalidValue::new(
                format!("envs[{i}] ({}).scale", e.id),
                "min <= max",
                format!("{}..={}", e.scale.min, e.scale.max),
            )));
        }
        if index.insert(e.id.clone(), i).is_some() {
            return Err(CurriculumError::Envs(InvalidValue::new(
                format!("envs[{i}]"),
                "distinct environment ids",
                format!("a duplicate {:?}", e.id.as_str()),
            )));
        }
    }
    Ok(index)
}

/// A stable 64-bit FNV-1a hash of a configuration's JSON ([`envdist_core::hash`]), as 16
/// hex digits: what saved states carry so that a restore under another configuration is
/// refused.
pub fn config_hash<T: Serialize>(config: &T) -> String {
    envdist_core::hash::fnv1a_hex(&serde_json::to_vec(config).unwrap_or_default())
}

/// Check a saved configuration against the current one: the saved hash must be the saved
/// config's (else the state was edited), and the configurations must agree (else the error
/// lists the differing fields).
pub(crate) fn check_config<T: Serialize>(
    saved_hash: &str,
    saved: &T,
    current_hash: &str,
    current: &T,
) -> Result<(), InvalidValue> {
    let rehashed = config_hash(saved);
    if rehashed != saved_hash {
        return Err(InvalidValue::new(
            "config_hash",
            format!("{rehashed} (the hash of the saved config)"),
            format!("{saved_hash}: the state was edited or is corrupt"),
        ));
    }
    if saved_hash != current_hash {
        return Err(InvalidValue::new(
            "config",
            format!("this sampler's configuration (hash {current_hash})"),
            format!(
                "a state saved under a different configuration (hash {saved_hash}); differing fields (saved -> current): {}",
                config_diff(saved, current).join("; ")
            ),
        ));
    }
    Ok(())
}

/// The `schema_version` of a saved state, checked before the rest is parsed.
pub(crate) fn check_schema(v: &serde_json::Value, want: u32) -> Result<(), InvalidValue> {
    let found = v.get("schema_version");
    if found.and_then(|x| x.as_u64()) == Some(want as u64) {
        return Ok(());
    }
    Err(InvalidValue::new(
        "schema_version",
        want.to_string(),
        found.map_or_else(|| "nothing".into(), |x| x.to_string()),
    ))
}

/// Parse a saved state, naming the field that does not parse.
pub(crate) fn parse_state<T: serde::de::DeserializeOwned>(
    v: &serde_json::Value,
    what: &str,
) -> Result<T, InvalidValue> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        InvalidValue::new(
            e.path().to_string(),
            format!("a field of {what}, of its type"),
            e.inner(),
        )
    })
}

/// The top-level fields whose values differ, as `field: a -> b` lines.
pub fn config_diff<T: Serialize>(a: &T, b: &T) -> Vec<String> {
    // Through text, not `to_value`: a value tree widens f32 fields to f64 (0.3 would read
    // 0.30000001192092896), the text keeps their shortest form.
    let tree = |x: &T| {
        serde_json::to_string(x).and_then(|t| serde_json::from_str::<serde_json::Value>(&t))
    };
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (tree(a), tree(b))
    else {
        return vec!["(configurations could not be compared)".into()];
    };
    a.iter()
        .filter_map(|(k, va)| {
            let vb = b.get(k).unwrap_or(&serde_json::Value::Null);
            (va != vb).then(|| format!("{k}: {va} -> {vb}"))
        })
        .collect()
}

/// A saved estimate must be a finite value in [0, 1].
pub(crate) fn check_unit(field: &str, v: f32) -> Result<(), InvalidValue> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        return Ok(());
    }
    Err(InvalidValue::new(field, "a value in [0, 1]", v))
}

/// A saved statistic must be a finite value >= 0.
pub(crate) fn check_nonneg(field: &str, v: f32) -> Result<(), InvalidValue> {
    if v.is_finite() && v >= 0.0 {
        return Ok(());
    }
    Err(InvalidValue::new(field, "a finite value >= 0", v))
}

pub(crate) fn bad(field: &str, expected: &str, found: impl fmt::Display) -> CurriculumError {
    CurriculumError::Config(InvalidValue::new(field, expected, found.to_string()))
}

/// `value` in the open/closed unit interval checks used by every config.
pub(crate) fn check_rate(field: &str, v: f32, lo_open: bool) -> Result<(), CurriculumError> {
    let ok = v.is_finite() && v <= 1.0 && if lo_open { v > 0.0 } else { v >= 0.0 };
    if ok {
        Ok(())
    } else if lo_open {
        Err(bad(field, "a value in (0, 1]", v))
    } else {
        Err(bad(field, "a value in [0, 1]", v))
    }
}

/// A count of a config that must be at least `min` (a window, a batch, a group).
pub(crate) fn check_at_least<T: PartialOrd + fmt::Display>(
    field: &str,
    v: T,
    min: T,
) -> Result<(), CurriculumError> {
    if v < min {
        Err(bad(field, &format!("at least {min}"), v))
    } else {
        Ok(())
    }
}

/// A config value that must be finite and above zero (a temperature).
pub(crate) fn check_positive(field: &str, v: f32) -> Result<(), CurriculumError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(bad(field, "a finite value > 0", v))
    }
}

/// Harness levels of a config: non-empty and strictly increasing (H0 before H4), so that a
/// list names each level once and ladders read from the strongest harness to the weakest.
pub(crate) fn check_levels(field: &str, levels: &[HarnessLevel]) -> Result<(), CurriculumError> {
    if levels.is_empty() {
        return Err(bad(field, "at least one harness level", "[]"));
    }
    if levels.windows(2).any(|w| w[0] >= w[1]) {
        let list: Vec<String> = levels.iter().map(|l| l.to_string()).collect();
        return Err(bad(
            field,
            "strictly increasing levels (e.g. [\"H0\", \"H4\"])",
            format!("[{}]", list.join(", ")),
        ));
    }
    Ok(())
}
