//! [`RunLayout`]: the one place that knows where a run directory keeps what. Stages, the report
//! and the tests ask it for paths; nothing else spells a file name of the run directory.
//!
//! ```text
//! <run>/config.json  results.json  REPORT.md  figures/
//!       pool/  profiles/profiles.json  base/checkpoint/  constant-baseline/
//!       gradients/gradients.safetensors  gradients-h0/  selections/
//!       arms/base/  arms/<arm>/seed<i>/{checkpoint/, train_log.jsonl, progress.json, ...}
//!       scaling/n<size>/seed<i>/
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use envdist_core::HarnessLevel;

use crate::config::Arm;
use crate::error::{Result, io_error};

/// A stage of the study, as its directory names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The pool, held-out and control sets.
    Pool,
    /// Ability profiles of the pool.
    Profiles,
    /// The base model (behaviour clone).
    Base,
    /// The best constant answer of every single-turn environment.
    ConstantBaseline,
    /// Per-environment gradients of the base at one harness level.
    Gradients(HarnessLevel),
    /// The H4 gradients again, on other episodes and another projection: how reproducible
    /// the AES selection is.
    GradientsRerun,
    /// Every selection the arms train on.
    Selections,
    /// The base model's evaluation.
    BaseEval,
    /// One arm at one seed.
    Arm(Arm, u32),
    /// One point of the pool-size scaling study.
    Scaling(usize, u32),
    /// The base's scores on the measured-transfer targets.
    TransferBase,
    /// One fine-tune of the measured-transfer stage.
    Transfer(usize),
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Pool => f.write_str("pool"),
            Stage::Profiles => f.write_str("profiles"),
            Stage::Base => f.write_str("base"),
            Stage::ConstantBaseline => f.write_str("constant-baseline"),
            Stage::Gradients(HarnessLevel::H4) => f.write_str("gradients"),
            Stage::Gradients(h) => write!(f, "gradients-{}", h.to_string().to_lowercase()),
            Stage::GradientsRerun => f.write_str("gradients-rerun"),
            Stage::Selections => f.write_str("selections"),
            Stage::BaseEval => f.write_str("arms/base"),
            Stage::Arm(arm, seed) => write!(f, "arms/{}/seed{seed}", arm.name()),
            Stage::Scaling(size, seed) => write!(f, "scaling/n{size}/seed{seed}"),
            Stage::TransferBase => f.write_str("transfer/base"),
            Stage::Transfer(i) => write!(f, "transfer/probe{i:02}"),
        }
    }
}

/// A run directory.
#[derive(Debug, Clone)]
pub struct RunLayout {
    root: PathBuf,
}

impl RunLayout {
    /// Use (and create) `root`.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(io_error(&root))?;
        Ok(Self { root })
    }

    /// A layout over `root` without touching the disk (reading a finished run).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The run directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The effective configuration of the run.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.json")
    }

    /// Everything the run measured.
    pub fn results_file(&self) -> PathBuf {
        self.root.join("results.json")
    }

    /// The report.
    pub fn report_file(&self) -> PathBuf {
        self.root.join("REPORT.md")
    }

    /// The report's figures.
    pub fn figures_dir(&self) -> PathBuf {
        self.root.join("figures")
    }

    /// The directory of `stage`.
    pub fn stage_dir(&self, stage: Stage) -> PathBuf {
        self.root.join(stage.to_string())
    }

    /// The pool's ability profiles.
    pub fn profiles_file(&self) -> PathBuf {
        self.stage_dir(Stage::Profiles).join("profiles.json")
    }

    /// The base model's gradients at `harness`.
    pub fn gradients_file(&self, harness: HarnessLevel) -> PathBuf {
        self.stage_dir(Stage::Gradients(harness))
            .join("gradients.safetensors")
    }

    /// The split-half reliability of the gradients at `harness`.
    pub fn gradient_reliability_file(&self, harness: HarnessLevel) -> PathBuf {
        self.stage_dir(Stage::Gradients(harness))
            .join("reliability.json")
    }

    /// The base model's checkpoint.
    pub fn base_checkpoint(&self) -> PathBuf {
        self.stage_dir(Stage::Base).join("checkpoint")
    }

    /// The files of a training stage ([`Stage::Arm`] or [`Stage::Scaling`]).
    pub fn arm_files(&self, stage: Stage) -> ArmFiles {
        ArmFiles {
            dir: self.stage_dir(stage),
        }
    }
}

/// The files a training stage keeps in its directory.
#[derive(Debug, Clone)]
pub struct ArmFiles {
    dir: PathBuf,
}

impl ArmFiles {
    /// The files of a training stage whose directory is `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The stage directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The latest checkpoint (model, optimizer, sampler state).
    pub fn checkpoint(&self) -> PathBuf {
        self.dir.join("checkpoint")
    }

    /// Whether a checkpoint was written.
    pub fn has_checkpoint(&self) -> bool {
        self.checkpoint().join("state.json").exists()
    }

    /// The hash of the inputs the checkpoint was trained under.
    pub fn progress(&self) -> PathBuf {
        self.dir.join("progress.json")
    }

    /// The online arm's selections so far.
    pub fn online(&self) -> PathBuf {
        self.dir.join("online.json")
    }

    /// One line of statistics per update.
    pub fn train_log(&self) -> PathBuf {
        self.dir.join("train_log.jsonl")
    }

    /// The curriculum's trace (HDC arms).
    pub fn curriculum_trace(&self) -> PathBuf {
        self.dir.join("curriculum_trace.jsonl")
    }

    /// Where the curriculum ended (HDC arms).
    pub fn curriculum_status(&self) -> PathBuf {
        self.dir.join("curriculum_status.json")
    }

    /// Everything a fresh start removes, so nothing of an earlier run with other inputs leaks
    /// in.
    pub fn stale(&self) -> [PathBuf; 3] {
        [self.checkpoint(), self.train_log(), self.online()]
    }
}

/// Every JSON file under `dir` (and every line of every JSONL file) is an object with a
/// `schema_version`: files that stay readable across versions are versioned from day one.
/// Returns the offenders as `path[:line]`.
pub fn unversioned_files(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            let text = match ext {
                "json" | "jsonl" => std::fs::read_to_string(&p).unwrap_or_default(),
                _ => continue,
            };
            let versioned = |v: &serde_json::Value| v.get("schema_version").is_some();
            if ext == "json" {
                let ok =
                    serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| versioned(&v));
                if !ok {
                    bad.push(p.display().to_string());
                }
            } else {
                for (i, line) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    let ok = serde_json::from_str::<serde_json::Value>(line)
                        .is_ok_and(|v| versioned(&v));
                    if !ok {
                        bad.push(format!("{}:{}", p.display(), i + 1));
                        break;
                    }
                }
            }
        }
    }
    bad.sort();
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_directories_are_the_documented_names() {
        let l = RunLayout::at("/run");
        for (stage, name) in [
            (Stage::Pool, "pool"),
            (Stage::Gradients(HarnessLevel::H4), "gradients"),
            (Stage::Gradients(HarnessLevel::H0), "gradients-h0"),
            (Stage::BaseEval, "arms/base"),
            (Stage::Arm(Arm::AesHdc, 3), "arms/aes+hdc/seed3"),
            (Stage::Scaling(10, 1), "scaling/n10/seed1"),
        ] {
            assert_eq!(l.stage_dir(stage), Path::new("/run").join(name));
        }
        assert_eq!(
            l.gradients_file(HarnessLevel::H4),
            Path::new("/run/gradients/gradients.safetensors")
        );
    }
}
