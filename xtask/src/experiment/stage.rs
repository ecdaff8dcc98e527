//! Stage caching: each stage of the experiment stores its output under the run directory with
//! a hash of the inputs it depends on, and is skipped when rerun with the same inputs. An
//! interrupted run therefore resumes at the first unfinished stage, losing no finished one.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::config::EXPERIMENT_SCHEMA_VERSION;

/// FNV-1a 64 of the canonical JSON of `value` (serde_json maps are sorted, so the text is
/// canonical). Stable across runs and platforms, unlike `DefaultHasher`.
pub fn stable_hash<T: Serialize>(value: &T) -> String {
    let text = serde_json::to_string(&serde_json::to_value(value).expect("serialisable key"))
        .expect("serialisable key");
    envdist_core::hash::fnv1a_hex(text.as_bytes())
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

/// The run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

/// Whether a stage ran or came from the cache, and how long it took when it ran.
#[derive(Debug, Clone, Copy)]
pub struct StageInfo {
    /// Loaded from cache.
    pub cached: bool,
    /// Seconds the stage took when it was computed (now or in the run that cached it).
    pub seconds: f64,
}

impl RunDir {
    /// Use (and create) `root`.
    pub fn new(root: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        Ok(Self { root })
    }

    /// The run directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of one stage (created on demand).
    pub fn stage_dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let d = self.root.join(name);
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        Ok(d)
    }

    /// Run `compute` unless `name` already finished with the same `key`. `compute` receives the
    /// stage directory for side files (checkpoints, figures); its return value is stored last,
    /// atomically, so a stage counts as finished only once everything it wrote is complete.
    pub fn stage<K: Serialize, T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        key: &K,
        compute: impl FnOnce(&Path) -> anyhow::Result<T>,
    ) -> anyhow::Result<(T, StageInfo)> {
        let dir = self.stage_dir(name)?;
        cached(&dir, name, key, compute)
    }
}

/// The one stage cache: run `compute` in `dir` unless `dir/stage.json` records a finished run
/// with the same `key`; store its output there last, atomically. Used by the experiment's
/// stages and by commands that cache their own output directory (`xtask profile`).
pub fn cached<K: Serialize, T: Serialize + DeserializeOwned>(
    dir: &Path,
    name: &str,
    key: &K,
    compute: impl FnOnce(&Path) -> anyhow::Result<T>,
) -> anyhow::Result<(T, StageInfo)> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let record_path = dir.join("stage.json");
    let key_hash = stable_hash(key);
    if record_path.exists() {
        match envdist_core::io::read_json::<StageRecord<T>>(
            &record_path,
            Some(EXPERIMENT_SCHEMA_VERSION),
        ) {
            Ok(rec) if rec.key_hash == key_hash => {
                return Ok((
                    rec.output,
                    StageInfo {
                        cached: true,
                        seconds: rec.seconds,
                    },
                ));
            }
            Ok(_) => eprintln!("  [{name}] inputs changed since the cached run: recomputing"),
            Err(e) => eprintln!("  [{name}] cached record unreadable ({e}): recomputing"),
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
    Ok((
        rec.output,
        StageInfo {
            cached: false,
            seconds,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_is_cached_by_key_and_recomputed_when_it_changes() {
        let dir = std::env::temp_dir().join(format!("envdist-stage-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = RunDir::new(&dir).unwrap();
        let mut calls = 0;
        let (v, info) = run
            .stage("s", &1u32, |_| {
                calls += 1;
                Ok(10u32)
            })
            .unwrap();
        assert_eq!((v, info.cached), (10, false));
        let (v, info) = run
            .stage("s", &1u32, |_| {
                calls += 1;
                Ok(99u32)
            })
            .unwrap();
        assert_eq!((v, info.cached), (10, true));
        let (v, info) = run
            .stage("s", &2u32, |_| {
                calls += 1;
                Ok(20u32)
            })
            .unwrap();
        assert_eq!((v, info.cached), (20, false));
        assert_eq!(calls, 2);
        // A failed stage leaves no record behind.
        assert!(
            run.stage::<_, u32>("t", &1u32, |_| anyhow::bail!("boom"))
                .is_err()
        );
        assert!(!dir.join("t/stage.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
