//! Stage caching: each stage stores its output in its directory with the [`StageKey`] it was
//! computed under, and is skipped when rerun under the same key. An interrupted run therefore
//! resumes at the first unfinished stage, losing no finished one.
//!
//! A key is built from what the stage reads and nothing else: the configuration sections it
//! uses (by reference, never copied field by field), the keys of the stages whose outputs it
//! consumes (by hash), and the source hashes of the code it runs ([`Crate`]). Changing a
//! section, an upstream stage or a crate therefore recomputes exactly the stages that depend
//! on it.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::code::{CodeVersion, Crate};
use crate::config::EXPERIMENT_SCHEMA_VERSION;
use crate::error::{Context, Result, io_error};
use crate::observer::{Observer, StageInfo};

/// FNV-1a 64 of the canonical JSON of `value` (serde_json maps are sorted, so the text is
/// canonical). Stable across runs and platforms, unlike `DefaultHasher`.
pub fn stable_hash<T: Serialize>(value: &T) -> Result<String> {
    let text = serde_json::to_string(&serde_json::to_value(value)?)?;
    Ok(envdist_core::hash::fnv1a_hex(text.as_bytes()))
}

/// What a stage's output depends on, as a JSON object: named parts, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageKey(serde_json::Map<String, serde_json::Value>);

impl StageKey {
    /// A key over the code of `crates` (the stage code and the lock file are always added).
    pub fn new(code: &CodeVersion, crates: &[Crate]) -> Result<Self> {
        let mut map = serde_json::Map::new();
        map.insert("code".into(), serde_json::to_value(code.of(crates))?);
        Ok(Self(map))
    }

    /// The key with `value` (a configuration section, a seed) under `name`.
    pub fn with(mut self, name: &str, value: &impl Serialize) -> Result<Self> {
        self.0.insert(name.into(), serde_json::to_value(value)?);
        Ok(self)
    }

    /// The key with `value` under `name` where there is one; `None` adds nothing, so a
    /// setting at its default leaves the keys (and the cached stages) of earlier records as
    /// they were.
    pub fn with_some(self, name: &str, value: Option<&impl Serialize>) -> Result<Self> {
        match value {
            Some(v) => self.with(name, v),
            None => Ok(self),
        }
    }

    /// The key with the upstream stage `name`, whose output this stage reads, by its key's
    /// hash.
    pub fn after(mut self, name: &str, upstream: &StageKey) -> Result<Self> {
        self.0
            .insert(format!("after:{name}"), upstream.hash()?.into());
        Ok(self)
    }

    /// The key's hash.
    pub fn hash(&self) -> Result<String> {
        stable_hash(&self.0)
    }

    /// The part named `name`, if any (tests).
    pub fn part(&self, name: &str) -> Option<&serde_json::Value> {
        self.0.get(name)
    }
}

#[derive(Serialize, Deserialize)]
struct StageRecord<T> {
    schema_version: u32,
    stage: String,
    key_hash: String,
    key: serde_json::Value,
    seconds: f64,
    output: T,
}

/// The one stage cache: run `compute` in `dir` unless `dir/stage.json` records a finished run
/// with the same `key`; store its output there last, atomically, so a stage counts as finished
/// only once everything it wrote is complete. Used by the study's stages and by commands that
/// cache their own output directory (`xtask profile`).
pub fn cached<K: Serialize, T: Serialize + DeserializeOwned>(
    dir: &Path,
    name: &str,
    key: &K,
    observer: &dyn Observer,
    compute: impl FnOnce(&Path) -> Result<T>,
) -> Result<(T, StageInfo)> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let record_path = dir.join("stage.json");
    let key_hash = stable_hash(key)?;
    if record_path.exists() {
        match envdist_core::io::read_json::<StageRecord<T>>(
            &record_path,
            Some(EXPERIMENT_SCHEMA_VERSION),
        ) {
            Ok(rec) if rec.key_hash == key_hash => {
                let info = StageInfo {
                    cached: true,
                    seconds: rec.seconds,
                };
                observer.stage_done(name, &info);
                return Ok((rec.output, info));
            }
            Ok(_) => observer.stage_recomputed(name, "its inputs changed since the cached run"),
            Err(e) => observer.stage_recomputed(name, &format!("its record is unreadable ({e})")),
        }
    }
    let start = std::time::Instant::now();
    let output = compute(dir).with_context(|| format!("stage `{name}`"))?;
    let seconds = start.elapsed().as_secs_f64();
    let rec = StageRecord {
        schema_version: EXPERIMENT_SCHEMA_VERSION,
        stage: name.to_string(),
        key_hash,
        key: serde_json::to_value(key)?,
        seconds,
        output,
    };
    envdist_core::io::write_json_atomic(&record_path, &rec)?;
    let info = StageInfo {
        cached: false,
        seconds,
    };
    observer.stage_done(name, &info);
    Ok((rec.output, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::Silent;

    #[test]
    fn stage_is_cached_by_key_and_recomputed_when_it_changes() {
        let dir = std::env::temp_dir().join(format!("envdist-stage-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut calls = 0;
        let mut stage = |key: u32, value: u32| {
            cached(&dir.join("s"), "s", &key, &Silent, |_| {
                calls += 1;
                Ok(value)
            })
            .unwrap()
        };
        let (v, info) = stage(1, 10);
        assert_eq!((v, info.cached), (10, false));
        let (v, info) = stage(1, 99);
        assert_eq!((v, info.cached), (10, true));
        let (v, info) = stage(2, 20);
        assert_eq!((v, info.cached), (20, false));
        assert_eq!(calls, 2);
        // A failed stage leaves no record behind.
        assert!(
            cached::<_, u32>(&dir.join("t"), "t", &1u32, &Silent, |_| {
                Err(crate::StudyError::msg("boom"))
            })
            .is_err()
        );
        assert!(!dir.join("t/stage.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_key_holds_its_parts_and_changes_with_each() {
        let code = CodeVersion::current();
        let k = StageKey::new(&code, &[Crate::Envs])
            .unwrap()
            .with("seed", &1u64)
            .unwrap();
        let code_part = k.part("code").unwrap().as_object().unwrap();
        assert!(code_part.contains_key("envs") && code_part.contains_key("stages"));
        assert!(!code_part.contains_key("trainer"));
        let other = k.clone().with("seed", &2u64).unwrap();
        assert_ne!(k.hash().unwrap(), other.hash().unwrap());
        let downstream = |up: &StageKey| {
            StageKey::new(&code, &[])
                .unwrap()
                .after("up", up)
                .unwrap()
                .hash()
                .unwrap()
        };
        assert_ne!(downstream(&k), downstream(&other));
    }
}
