//! [`Traced`]: an [`HdcSampler`] that records one [`TraceEvent`] per reported outcome, for
//! curriculum-trace figures. Its saved state holds the inner sampler's state and the trace so
//! far, so a run resumed from a checkpoint keeps its whole trace.

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
        serde_json::json!({ "hdc": self.sampler.state(), "trace": self.trace })
    }
    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        let (Some(inner), Some(trace)) = (state.get("hdc"), state.get("trace")) else {
            return Err(SamplerStateError(
                "expected a traced HDC state with fields `hdc` and `trace`".into(),
            ));
        };
        let trace: Vec<TraceEvent> = serde_json::from_value(trace.clone())
            .map_err(|e| SamplerStateError(format!("field `trace`: {e}")))?;
        self.sampler.restore(inner)?;
        self.trace = trace;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HdcConfig, synthetic_specs};

    #[test]
    fn traces_every_known_outcome_and_resumes_with_its_trace() {
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
        let mut fresh = Traced::new(inner);
        fresh.restore(&traced.state()).unwrap();
        assert_eq!(fresh.state(), traced.state());
        assert_eq!(fresh.trace, traced.trace);
        assert!(fresh.restore(&serde_json::json!({"x": 1})).is_err());
    }
}
