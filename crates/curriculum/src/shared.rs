//! A cheap, cloneable handle to one sampler, for many rollout workers at once.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use envdist_core::{EpisodeOutcome, OutcomeError, SamplerStateError, Task, TaskSampler};

use crate::error::CurriculumError;
use crate::sampler::{EnvStatus, HdcSampler, UpdateEffect};

/// A shared [`HdcSampler`] behind `Arc<Mutex<..>>`. Clones share one state machine; every
/// call takes the lock once, so given the same interleaving of `sample` and `update`
/// calls the tasks are the same as with a single owner. Sampling and updating are a few
/// hundred nanoseconds, far below an episode, so one lock does not become a bottleneck.
#[derive(Debug, Clone)]
pub struct SharedSampler {
    inner: Arc<Mutex<HdcSampler>>,
}

impl SharedSampler {
    /// Share `sampler`.
    pub fn new(sampler: HdcSampler) -> Self {
        Self {
            inner: Arc::new(Mutex::new(sampler)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HdcSampler> {
        // A worker that panicked mid-call cannot leave the sampler half-updated (no call
        // panics between its writes), so a poisoned lock is safe to keep using.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Run `f` with exclusive access (for introspection or several calls in one lock).
    pub fn with<R>(&self, f: impl FnOnce(&mut HdcSampler) -> R) -> R {
        f(&mut self.lock())
    }

    /// Report an outcome and say what it changed ([`HdcSampler::record`]: one the sampler
    /// could not have been told is refused).
    pub fn record(&self, outcome: &EpisodeOutcome) -> Result<UpdateEffect, OutcomeError> {
        self.lock().record(outcome)
    }

    /// Snapshots of every environment.
    pub fn status(&self) -> Vec<EnvStatus> {
        self.lock().status()
    }

    /// Save the state to `path` atomically.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CurriculumError> {
        self.lock().save(path)
    }

    /// Restore the state saved at `path`.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<(), CurriculumError> {
        self.lock().load(path)
    }
}

impl TaskSampler for SharedSampler {
    fn sample(&mut self) -> Task {
        self.lock().sample_task()
    }

    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.lock().check_outcome(outcome)
    }

    /// Checked and recorded under one lock.
    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.lock().record(outcome).map(drop)
    }

    fn state(&self) -> serde_json::Value {
        self.lock().state()
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        self.lock().restore(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HdcConfig;
    use crate::test_support::specs;

    #[test]
    fn workers_share_one_state_and_match_a_single_owner() {
        let make = || HdcSampler::new(&specs(4, 1, 6), None, HdcConfig::default(), 3).unwrap();
        let shared = SharedSampler::new(make());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let mut h = shared.clone();
                std::thread::spawn(move || {
                    for _ in 0..250 {
                        let t = h.sample();
                        h.update(&EpisodeOutcome {
                            task: t,
                            success: true,
                            episode_return: 1.0,
                            steps: 1,
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let (samples, updates) = shared.with(|s| (s.samples(), s.updates()));
        assert_eq!((samples, updates), (1000, 1000));
        // Same order of calls, same tasks: a sequential replay through the handle equals
        // the plain sampler.
        let mut plain = make();
        let mut handle = SharedSampler::new(make());
        for k in 0..300 {
            let (a, b) = (plain.sample(), handle.sample());
            assert_eq!(a, b);
            let o = EpisodeOutcome {
                task: a,
                success: k % 3 != 0,
                episode_return: 0.0,
                steps: 1,
            };
            plain.update(&o).unwrap();
            handle.update(&o).unwrap();
        }
        assert_eq!(plain.state(), handle.state());
    }
}
