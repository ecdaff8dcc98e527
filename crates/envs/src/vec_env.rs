//! [`VecEnv`]: many environments stepped in parallel with rayon, frames written into one
//! reused buffer.

use envdist_core::{ActionId, Task};
use rayon::prelude::*;

use crate::env::{StepInfo, SuiteEnv};

/// A [`VecEnv`] call with inputs that do not fit the batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VecEnvError {
    /// Environments rendering at different canvas sizes.
    #[error(
        "VecEnv field `envs[{index}]`: expected a {expected}-byte frame like envs[0], found {found}"
    )]
    Canvas {
        /// The first environment that differs.
        index: usize,
        /// Frame length of `envs[0]`.
        expected: usize,
        /// Its frame length.
        found: usize,
    },
    /// A reset named an environment that does not exist, or one twice.
    #[error("VecEnv field `resets`: index {index}: expected {expected}")]
    Index {
        /// The offending index.
        index: usize,
        /// What is accepted.
        expected: &'static str,
    },
    /// One action or task per environment is required.
    #[error(
        "VecEnv field `{field}`: expected {expected} entries (one per environment), found {found}"
    )]
    Length {
        /// `actions` or `tasks`.
        field: &'static str,
        /// Number of environments.
        expected: usize,
        /// Entries given.
        found: usize,
    },
}

/// A batch of environments stepped in parallel. Frames land in one contiguous `u8` buffer
/// (`n * canvas * canvas * 3`, env-major, row-major RGB) that is reused across steps, so a
/// trainer can read a batch without per-step allocation of images. Text channels are not
/// built here; call [`SuiteEnv::harness_text`] through [`VecEnv::env_mut`] when needed.
pub struct VecEnv {
    envs: Vec<SuiteEnv>,
    frames: Vec<u8>,
    infos: Vec<StepInfo>,
    frame_len: usize,
}

impl VecEnv {
    /// Wrap environments made by suites with the same canvas.
    pub fn new(envs: Vec<SuiteEnv>) -> Result<Self, VecEnvError> {
        let frame_len = envs.first().map_or(0, |e| e.frame().data.len());
        if let Some((index, e)) = envs
            .iter()
            .enumerate()
            .find(|(_, e)| e.frame().data.len() != frame_len)
        {
            return Err(VecEnvError::Canvas {
                index,
                expected: frame_len,
                found: e.frame().data.len(),
            });
        }
        let n = envs.len();
        let mut v = Self {
            envs,
            frames: vec![0; n * frame_len],
            infos: Vec::with_capacity(n),
            frame_len,
        };
        v.copy_frames();
        Ok(v)
    }

    /// Number of environments.
    pub fn len(&self) -> usize {
        self.envs.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.envs.is_empty()
    }

    fn copy_frames(&mut self) {
        if self.frame_len == 0 {
            return;
        }
        self.frames
            .par_chunks_mut(self.frame_len)
            .zip(self.envs.par_iter_mut())
            .for_each(|(dst, e)| dst.copy_from_slice(&e.frame().data));
    }

    /// Reset environment `i` to `task` (its frame is updated). Panics if `i >= len()`, like
    /// slice indexing.
    pub fn reset(&mut self, i: usize, task: &Task) {
        self.envs[i].reset_fast(task);
        let fl = self.frame_len;
        self.frames[i * fl..(i + 1) * fl].copy_from_slice(&self.envs[i].frame().data);
    }

    /// Reset every environment, `tasks[i]` for environment `i`.
    pub fn reset_all(&mut self, tasks: &[Task]) -> Result<(), VecEnvError> {
        self.check("tasks", tasks.len())?;
        let fl = self.frame_len;
        self.envs
            .par_iter_mut()
            .zip(self.frames.par_chunks_mut(fl.max(1)))
            .zip(tasks.par_iter())
            .for_each(|((e, dst), t)| {
                e.reset_fast(t);
                dst.copy_from_slice(&e.frame().data);
            });
        Ok(())
    }

    /// Reset environment `i` to `task` for every `(i, task)` in `resets`, in parallel. This is
    /// the auto-reset of a vectorised loop: single-turn environments end every step, so resetting
    /// them one by one on the calling thread would cap the speed-up of [`VecEnv::step`] near 2x
    /// however many threads step. Errors if an index is out of range or repeated.
    pub fn reset_many(&mut self, resets: &[(usize, Task)]) -> Result<(), VecEnvError> {
        let n = self.envs.len();
        let mut task_of: Vec<Option<&Task>> = vec![None; n];
        for (i, t) in resets {
            match task_of.get_mut(*i) {
                Some(slot @ None) => *slot = Some(t),
                Some(Some(_)) => {
                    return Err(VecEnvError::Index {
                        index: *i,
                        expected: "each environment at most once per call",
                    });
                }
                None => {
                    return Err(VecEnvError::Index {
                        index: *i,
                        expected: "an index below the number of environments",
                    });
                }
            }
        }
        let fl = self.frame_len;
        self.envs
            .par_iter_mut()
            .zip(self.frames.par_chunks_mut(fl.max(1)))
            .zip(task_of.par_iter())
            .for_each(|((e, dst), t)| {
                if let Some(t) = t {
                    e.reset_fast(t);
                    dst.copy_from_slice(&e.frame().data);
                }
            });
        Ok(())
    }

    fn check(&self, field: &'static str, found: usize) -> Result<(), VecEnvError> {
        if found == self.envs.len() {
            Ok(())
        } else {
            Err(VecEnvError::Length {
                field,
                expected: self.envs.len(),
                found,
            })
        }
    }

    /// Step every environment with `actions[i]` in parallel; returns the step results.
    pub fn step(&mut self, actions: &[ActionId]) -> Result<&[StepInfo], VecEnvError> {
        self.check("actions", actions.len())?;
        let fl = self.frame_len;
        self.envs
            .par_iter_mut()
            .zip(self.frames.par_chunks_mut(fl.max(1)))
            .zip(actions.par_iter())
            .map(|((e, dst), a)| {
                let info = e.step_fast(*a);
                dst.copy_from_slice(&e.frame().data);
                info
            })
            .collect_into_vec(&mut self.infos);
        Ok(&self.infos)
    }

    /// All frames, env-major.
    pub fn frames(&self) -> &[u8] {
        &self.frames
    }

    /// Frame of environment `i` (panics if `i >= len()`).
    pub fn frame(&self, i: usize) -> &[u8] {
        &self.frames[i * self.frame_len..(i + 1) * self.frame_len]
    }

    /// Environment `i` (panics if `i >= len()`).
    pub fn env_mut(&mut self, i: usize) -> &mut SuiteEnv {
        &mut self.envs[i]
    }
}
