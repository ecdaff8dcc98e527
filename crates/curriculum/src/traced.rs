//! [`Traced`]: an [`HdcSampler`] that records one [`TraceEvent`] per reported outcome, for
//! curriculum-trace figures. Its saved state is the inner sampler's, so checkpoints are the
//! same with or without the recording.

use envdist_core::{EpisodeOutcome, SamplerStateError, Task, TaskSampler};

use crate::{HdcSampler, TraceEvent};

/// An [`HdcSampler`] and the trace of what it was told.
#[derive(Debug, Clone)]
pub struct Traced {
    /// The sampler.
    pub sampler: HdcSampler,
    /// One event per outcome of a known environment, in order.
    pub trace: Vec<TraceEvent>,
}

impl Traced {
    /// Start tracing `sampler` (with an empty trace).
    pub fn new(sampler: HdcSampler) -> Self {
        Self {
            sampler,
            trace: Vec::new(),
        }
    }
}

impl TaskSampler for Traced {
    fn sample(&mut self) -> Task {
        self.sampler.sample()
    }
    fn update(&mut self, outcome: &EpisodeOutcome) {
        self.sampler.update(outcome);
        if let Some(e) = self.sampler.trace_event(self.trace.len() as u64, outcome) {
            self.trace.push(e);
        }
    }
    fn state(&self) -> serde_json::Value {
        self.sampler.state()
    }
    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        self.sampler.restore(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HdcConfig, synthetic_specs};

    #[test]
    fn traces_every_known_outcome_and_keeps_the_inner_state() {
        let envs = synthetic_specs("t", &[(1, 3)]);
        let inner = HdcSampler::new(&envs, None, HdcConfig::default(), 3).unwrap();
        let mut traced = Traced::new(inner.clone());
        for _ in 0..5 {
            let task = traced.sample();
            traced.update(&EpisodeOutcome {
                task,
                success: true,
                episode_return: 1.0,
                steps: 1,
            });
        }
        assert_eq!(traced.trace.len(), 5);
        assert_eq!(traced.trace[4].step, 4);
        let mut fresh = inner;
        fresh.restore(&traced.state()).unwrap();
        assert_eq!(fresh.state(), traced.state());
    }
}
