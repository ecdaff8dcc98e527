//! The vector env behind `envdist.vector.make`: many [`SuiteEnv`]s stepped on rayon threads
//! with the GIL released, writing frames and step results straight into numpy arrays that
//! Python allocated once (no copy on the way out), with Gymnasium's NEXT_STEP autoreset.
//!
//! Written here over `SuiteEnv` rather than with `envdist_envs::VecEnv` because the hand-over
//! needs two things that API does not offer: writing into a caller-owned buffer (VecEnv keeps
//! its own frame buffer, which would cost a copy per step) and resetting finished envs inside
//! the same parallel pass (NEXT_STEP autoreset).

use std::sync::{Mutex, PoisonError};

use envdist_core::{ActionId, Env as _};
use numpy::{PyReadonlyArray1, PyReadwriteArray1, PyReadwriteArray4, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::env::{Slot, action, check_started, parse_in};
use crate::errors::value_error;
use crate::suite;

struct Inner {
    slots: Vec<Slot>,
    /// Whether env `i` ended at the last step and resets at the next (NEXT_STEP autoreset).
    pending_reset: Vec<bool>,
    frame_len: usize,
    canvas: usize,
}

/// A batch of environments (used by `envdist.vector.EnvdistVectorEnv`).
#[pyclass(module = "envdist._envdist")]
pub struct VectorEnv {
    inner: Mutex<Inner>,
}

impl VectorEnv {
    fn inner(&mut self) -> &mut Inner {
        self.inner.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

fn check_shape(name: &str, found: &[usize], expected: &[usize]) -> PyResult<()> {
    if found == expected {
        Ok(())
    } else {
        Err(value_error(format!(
            "{name}: expected shape {expected:?}, found {found:?}"
        )))
    }
}

#[pymethods]
impl VectorEnv {
    /// `env_ids[i]`, `harness[i]`, `scales[i]` configure env `i`.
    #[new]
    #[pyo3(signature = (env_ids, harness, scales, canvas = 64))]
    fn new(
        env_ids: Vec<String>,
        harness: Vec<String>,
        scales: Vec<Option<u32>>,
        canvas: u32,
    ) -> PyResult<Self> {
        let n = env_ids.len();
        if n == 0 {
            return Err(value_error(
                "env_ids: expected at least one environment, found none",
            ));
        }
        if harness.len() != n || scales.len() != n {
            return Err(value_error(format!(
                "harness / scales: expected {n} entries (one per env), found {} / {}",
                harness.len(),
                scales.len()
            )));
        }
        let s = suite::suite(canvas)?;
        let mut slots = Vec::with_capacity(n);
        for (i, ((id, h), sc)) in env_ids.iter().zip(&harness).zip(&scales).enumerate() {
            let (spec, env) = suite::make(&s, id, &format!("env_ids[{i}]"))?;
            let h = suite::harness(h)?;
            let sc = suite::scale(&spec, *sc)?;
            slots.push(Slot::new(spec, env, h, sc));
        }
        let canvas = s.config().canvas as usize;
        Ok(Self {
            inner: Mutex::new(Inner {
                pending_reset: vec![false; n],
                frame_len: canvas * canvas * 3,
                canvas,
                slots,
            }),
        })
    }

    /// Number of environments.
    fn __len__(&mut self) -> usize {
        self.inner().slots.len()
    }

    /// Reset every env: `seeds[i]` (or the next seed of its stream when `None`). Frames land in
    /// `frames` (`n x canvas x canvas x 3`, uint8), legal masks in `legal`.
    fn reset(
        &mut self,
        py: Python<'_>,
        seeds: Vec<Option<u64>>,
        mut frames: PyReadwriteArray4<'_, u8>,
        mut legal: PyReadwriteArray1<'_, u32>,
    ) -> PyResult<()> {
        let inner = self.inner();
        let n = inner.slots.len();
        if seeds.len() != n {
            return Err(value_error(format!(
                "seed: expected {n} seeds (one per env), found {}",
                seeds.len()
            )));
        }
        let c = inner.canvas;
        check_shape("frames", frames.shape(), &[n, c, c, 3])?;
        check_shape("legal", legal.shape(), &[n])?;
        let frames = frames.as_slice_mut().map_err(value_error)?;
        let legal = legal.as_slice_mut().map_err(value_error)?;
        let fl = inner.frame_len;
        py.detach(|| {
            inner
                .slots
                .par_iter_mut()
                .zip(frames.par_chunks_mut(fl))
                .zip(legal.par_iter_mut())
                .zip(seeds.par_iter())
                .for_each(|(((slot, dst), l), seed)| {
                    slot.start(*seed);
                    dst.copy_from_slice(&slot.env.frame().data);
                    *l = slot.env.legal_actions().0;
                });
        });
        inner.pending_reset.iter_mut().for_each(|p| *p = false);
        Ok(())
    }

    /// Step every env with `actions[i]` (int64); an env that ended at the previous step is
    /// reset instead (its action ignored, reward 0, not done). Results land in the arrays.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray1<'_, i64>,
        mut frames: PyReadwriteArray4<'_, u8>,
        mut rewards: PyReadwriteArray1<'_, f64>,
        mut terminated: PyReadwriteArray1<'_, bool>,
        mut truncated: PyReadwriteArray1<'_, bool>,
        mut success: PyReadwriteArray1<'_, bool>,
        mut legal: PyReadwriteArray1<'_, u32>,
    ) -> PyResult<()> {
        let inner = self.inner();
        let n = inner.slots.len();
        let c = inner.canvas;
        if let Some(slot) = inner.slots.first() {
            // `reset` starts every env at once, so the first says for all.
            check_started(slot)?;
        }
        check_shape("actions", actions.shape(), &[n])?;
        check_shape("frames", frames.shape(), &[n, c, c, 3])?;
        for (name, shape) in [
            ("rewards", rewards.shape()),
            ("terminated", terminated.shape()),
            ("truncated", truncated.shape()),
            ("success", success.shape()),
            ("legal", legal.shape()),
        ] {
            check_shape(name, shape, &[n])?;
        }
        let acts = actions
            .as_slice()
            .map_err(value_error)?
            .iter()
            .enumerate()
            .map(|(i, a)| action(*a).map_err(|e| value_error(format!("actions[{i}]: {e}"))))
            .collect::<PyResult<Vec<_>>>()?;
        let frames = frames.as_slice_mut().map_err(value_error)?;
        let rewards = rewards.as_slice_mut().map_err(value_error)?;
        let terminated = terminated.as_slice_mut().map_err(value_error)?;
        let truncated = truncated.as_slice_mut().map_err(value_error)?;
        let success = success.as_slice_mut().map_err(value_error)?;
        let legal = legal.as_slice_mut().map_err(value_error)?;
        let fl = inner.frame_len;
        let Inner {
            slots,
            pending_reset,
            ..
        } = inner;
        py.detach(|| {
            let results: Vec<(f64, bool, bool, bool, u32)> = slots
                .par_iter_mut()
                .zip(pending_reset.par_iter_mut())
                .zip(frames.par_chunks_mut(fl))
                .zip(acts.par_iter())
                .map(|(((slot, pending), dst), a)| {
                    let r = if *pending {
                        slot.start(None);
                        *pending = false;
                        (0.0, false, false, false, slot.env.legal_actions().0)
                    } else {
                        let (s, terminated, truncated) = slot.step(*a);
                        *pending = terminated || truncated;
                        (
                            f64::from(s.reward),
                            terminated,
                            truncated,
                            s.success,
                            s.legal.0,
                        )
                    };
                    dst.copy_from_slice(&slot.env.frame().data);
                    r
                })
                .collect();
            for (i, (r, d, t, s, l)) in results.into_iter().enumerate() {
                rewards[i] = r;
                terminated[i] = d;
                truncated[i] = t;
                success[i] = s;
                legal[i] = l;
            }
        });
        Ok(())
    }

    /// Per env `(env_id, harness, scale, seed)` of the current episode.
    fn episodes(&mut self) -> Vec<(String, String, u32, u64)> {
        self.inner()
            .slots
            .iter()
            .map(|s| {
                (
                    s.spec.id.to_string(),
                    s.harness.to_string(),
                    s.env.scale(),
                    s.seed,
                )
            })
            .collect()
    }

    /// The harness text of env `i`: `(observation, state, hints, rules)`.
    #[allow(clippy::type_complexity)]
    fn harness_text(
        &mut self,
        i: i64,
    ) -> PyResult<(
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    )> {
        let inner = self.inner();
        let n = inner.slots.len();
        // `i64`, not `usize`: a negative index is a ValueError naming the range, not pyo3's
        // OverflowError.
        let slot = usize::try_from(i)
            .ok()
            .and_then(|i| inner.slots.get_mut(i))
            .ok_or_else(|| {
                value_error(format!(
                    "i: expected an env index from 0 to {} (num_envs - 1), found {i}",
                    n - 1
                ))
            })?;
        let t = slot.env.harness_text();
        Ok((t.observation, t.state, t.hints, t.rules))
    }

    /// Side of the square frames in pixels.
    fn canvas(&mut self) -> usize {
        self.inner().canvas
    }

    /// The actions `texts[i]` name, each read in env `i`'s current state (its answers in
    /// words, as `Env.parse_action`); `ValueError` naming the first that names none.
    fn parse_actions(&mut self, texts: Vec<String>) -> PyResult<Vec<usize>> {
        let slots = &self.inner().slots;
        if texts.len() != slots.len() {
            return Err(value_error(format!(
                "actions: expected {} action texts (one per env), found {}",
                slots.len(),
                texts.len()
            )));
        }
        slots
            .iter()
            .zip(&texts)
            .enumerate()
            .map(|(i, (slot, text))| {
                parse_in(&slot.env, text)
                    .map(ActionId::index)
                    .map_err(|e| value_error(format!("actions[{i}]: {e}")))
            })
            .collect()
    }
}
