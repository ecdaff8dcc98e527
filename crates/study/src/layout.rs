//! [`RunLayout`]: the one place that knows where a run directory keeps what. Stages, the report
//! and the tests ask it for paths; nothing else spells a file name of the run directory.
//!
//! ```text
//! <run>/config.json  results.json  REPORT.md  figures/
//!       pool/  profiles/profiles.json  base/checkpoint/  constant-baseline/
//!       gradients/gradients.safetensors  gradients-h0/  selections/
//!       arms/base/  arms/<arm>/seed<i>/{the trainer's RunFiles, progress.json, ...}
//!       scaling/n<size>/seed<i>/
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use envdist_core::HarnessLevel;
use envdist_trainer::RunFiles;

use crate::error::{Result, io_error};
use crate::model::Arm;

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
    /// The H4 gradients of training seed `i` ≥ 1 (seed 0's are [`Stage::Gradients`]): other
    /// episodes and another projection, from which that seed's AES-family selections are made.
    GradientsSeed(u32),
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
    /// The base's greedy success on the pool at every harness level.
    BaseByHarness,
    /// The base's scores on every environment under the transfer matrix's evaluation.
    MatrixBase,
    /// One source of the transfer matrix: fine-tuned alone, evaluated on every environment.
    MatrixProbe(usize),
    /// One harness probe: a matrix source fine-tuned at H0–H2 only, evaluated at H4.
    HarnessProbe(usize),
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
            Stage::GradientsSeed(i) => write!(f, "gradients-seed{i}"),
            Stage::Selections => f.write_str("selections"),
            Stage::BaseEval => write!(f, "arms/{}", Arm::base().name()),
            Stage::Arm(arm, seed) => write!(f, "arms/{}/seed{seed}", arm.name()),
            Stage::Scaling(size, seed) => write!(f, "scaling/n{size}/seed{seed}"),
            Stage::TransferBase => f.write_str("transfer/base"),
            Stage::Transfer(i) => write!(f, "transfer/probe{i:02}"),
            Stage::BaseByHarness => f.write_str("preconditions/base-by-harness"),
            Stage::MatrixBase => f.write_str("preconditions/matrix/base"),
            Stage::MatrixProbe(i) => write!(f, "preconditions/matrix/probe{i:02}"),
            Stage::HarnessProbe(i) => write!(f, "preconditions/harness/probe{i:02}"),
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
        RunFiles::new(self.stage_dir(Stage::Base)).checkpoint()
    }

    /// The files of a training stage ([`Stage::Arm`] or [`Stage::Scaling`]).
    pub fn arm_files(&self, stage: Stage) -> ArmFiles {
        ArmFiles::in_dir(self.stage_dir(stage))
    }
}

/// Schema version of `lock.json`.
pub const LOCK_SCHEMA_VERSION: u32 = 1;

/// Who holds a run directory (`<run>/lock.json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockHolder {
    /// Always [`LOCK_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The holding process.
    pub pid: u32,
    /// Its start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so that a
    /// recycled pid is not mistaken for the holder.
    pub start_ticks: Option<u64>,
    /// The machine it runs on.
    pub host: String,
    /// Its command line.
    pub command: String,
}

impl LockHolder {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        Self {
            schema_version: LOCK_SCHEMA_VERSION,
            pid,
            start_ticks: start_ticks(pid),
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_default(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }

    /// Whether the holder is still running (on this machine; a holder on another machine is
    /// taken to be alive).
    fn alive(&self) -> bool {
        let here = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        if self.host != here {
            return true;
        }
        match (start_ticks(self.pid), self.start_ticks) {
            (None, _) => false,
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
        }
    }
}

/// Field 22 of `/proc/<pid>/stat` (the process's start time), if the process exists.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: split after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A run directory held by this process; dropping it releases the directory.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl RunLayout {
    /// The lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("lock.json")
    }

    /// Hold the run directory: one process at a time runs a study in it. A directory held by
    /// a live process is refused with an error naming the holder; a lock left by a process
    /// that is gone (killed) is taken over, with `on_stale` told whose it was.
    pub fn lock(&self, on_stale: &dyn Fn(&LockHolder)) -> Result<RunLock> {
        let path = self.lock_file();
        let me = LockHolder::current();
        let text = serde_json::to_vec_pretty(&me)?;
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    f.write_all(&text).map_err(io_error(&path))?;
                    f.sync_all().map_err(io_error(&path))?;
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder: Option<LockHolder> = std::fs::read(&path)
                        .ok()
                        .and_then(|b| serde_json::from_slice(&b).ok());
                    match holder {
                        Some(h) if h.alive() => {
                            return Err(crate::StudyError::msg(format!(
                                "{} is in use by process {} on {} ({}); wait for it to finish, \
                                 or stop it, or choose another --out",
                                self.root.display(),
                                h.pid,
                                if h.host.is_empty() {
                                    "this machine"
                                } else {
                                    &h.host
                                },
                                h.command
                            )));
                        }
                        Some(h) => on_stale(&h),
                        // Unreadable (a crash while writing it): nobody can hold it.
                        None => {}
                    }
                    std::fs::remove_file(&path).map_err(io_error(&path))?;
                }
                Err(e) => return Err(io_error(&path)(e)),
            }
        }
        Err(crate::StudyError::msg(format!(
            "{}: another process took the lock while a stale one was being removed",
            path.display()
        )))
    }
}

/// The files a training stage keeps in its directory: the trainer's own ([`RunFiles`]: log
/// and checkpoint, named by the trainer) and the study's beside them.
#[derive(Debug, Clone)]
pub struct ArmFiles {
    run: RunFiles,
}

impl ArmFiles {
    /// The files of a training stage whose directory is `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            run: RunFiles::new(dir),
        }
    }

    /// The stage directory.
    pub fn dir(&self) -> &Path {
        self.run.dir()
    }

    /// The trainer's files in it.
    pub fn run(&self) -> &RunFiles {
        &self.run
    }

    /// The latest checkpoint (model, optimizer, sampler state).
    pub fn checkpoint(&self) -> PathBuf {
        self.run.checkpoint()
    }

    /// Whether a checkpoint was written.
    pub fn has_checkpoint(&self) -> bool {
        self.run.has_checkpoint()
    }

    /// The hash of the inputs the checkpoint was trained under.
    pub fn progress(&self) -> PathBuf {
        self.dir().join("progress.json")
    }

    /// The online arm's selections so far.
    pub fn online(&self) -> PathBuf {
        self.dir().join("online.json")
    }

    /// The curriculum's trace (HDC arms).
    pub fn curriculum_trace(&self) -> PathBuf {
        self.dir().join("curriculum_trace.jsonl")
    }

    /// Where the curriculum ended (HDC arms).
    pub fn curriculum_status(&self) -> PathBuf {
        self.dir().join("curriculum_status.json")
    }

    /// Everything a fresh start removes, so nothing of an earlier run with other inputs leaks
    /// in.
    pub fn stale(&self) -> [PathBuf; 3] {
        [self.checkpoint(), self.run.train_log(), self.online()]
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
    fn a_held_directory_is_refused_and_a_stale_lock_taken_over() {
        let dir = std::env::temp_dir().join(format!("envdist-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let l = RunLayout::new(&dir).unwrap();
        let held = l.lock(&|_| panic!("not stale")).unwrap();
        let e = l.lock(&|_| panic!("not stale")).unwrap_err().to_string();
        assert!(
            e.contains(&std::process::id().to_string()) && e.contains("in use"),
            "{e}"
        );
        drop(held);
        assert!(!l.lock_file().exists(), "released on drop");
        // A lock written by a process that has exited is stale.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = LockHolder {
            pid: dead,
            start_ticks: Some(1),
            ..LockHolder::current()
        };
        std::fs::write(l.lock_file(), serde_json::to_vec(&stale).unwrap()).unwrap();
        let seen = std::sync::Mutex::new(None);
        let taken = l.lock(&|h| *seen.lock().unwrap() = Some(h.pid)).unwrap();
        assert_eq!(*seen.lock().unwrap(), Some(dead));
        drop(taken);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stage_directories_are_the_documented_names() {
        let l = RunLayout::at("/run");
        for (stage, name) in [
            (Stage::Pool, "pool"),
            (Stage::Gradients(HarnessLevel::H4), "gradients"),
            (Stage::Gradients(HarnessLevel::H0), "gradients-h0"),
            (Stage::BaseEval, "arms/base"),
            (
                Stage::Arm(Arm::AesHdc, 3),
                &*format!("arms/{}/seed3", Arm::AesHdc.name()),
            ),
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
