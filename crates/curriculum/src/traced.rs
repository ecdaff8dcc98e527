//! [`Traced`]: any sampler of this crate recording one [`TraceEvent`] per reported outcome of
//! a known environment ([`CurriculumSampler::trace_event`]), for curriculum-trace figures. Its
//! saved state holds the inner sampler's state and the trace so far,
//! `{"<kind>": state, "trace": [...]}`, so a run resumed from a checkpoint keeps its whole
//! trace. [`crate::SamplerConfig::build_with`] wraps a sampler in it when tracing is asked for.

use envdist_core::{
    EnvSpec, EpisodeOutcome, InvalidValue, OutcomeError, SamplerStateError, Task, TaskSampler,
};

use crate::HdcSampler;
use crate::curriculum::CurriculumSampler;
use crate::error::CurriculumError;
use crate::trace::{EnvSnapshot, TraceEvent};

/// A sampler and the trace of what it was told.
#[derive(Debug, Clone)]
pub struct Traced<S = HdcSampler> {
    /// The sampler.
    pub sampler: S,
    /// One event per outcome of a known environment, in order.
    pub trace: Vec<TraceEvent>,
}

impl<S> Traced<S> {
    /// Start tracing `sampler` (with an empty trace).
    pub fn new(sampler: S) -> Self {
        Self {
            sampler,
            trace: Vec::new(),
        }
    }
}

impl<S: CurriculumSampler> TaskSampler for Traced<S> {
    fn sample(&mut self) -> Task {
        self.sampler.sample()
    }

    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.sampler.check_outcome(outcome)
    }

    /// A refused outcome leaves no trace line.
    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.sampler.update(outcome)?;
        if let Some(e) = self.sampler.trace_event(self.trace.len() as u64, outcome) {
            self.trace.push(e);
        }
        Ok(())
    }

    fn state(&self) -> serde_json::Value {
        let mut state = serde_json::Map::new();
        state.insert(self.sampler.kind().into(), self.sampler.state());
        state.insert(
            "trace".into(),
            serde_json::to_value(&self.trace).unwrap_or_default(),
        );
        serde_json::Value::Object(state)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        let kind = self.sampler.kind();
        let (Some(inner), Some(trace)) = (state.get(kind), state.get("trace")) else {
            return Err(InvalidValue::new(
                ".",
                format!("a traced {kind} state with fields `{kind}` and `trace`"),
                "another object",
            )
            .into());
        };
        let trace: Vec<TraceEvent> = serde_json::from_value(trace.clone())
            .map_err(|e| InvalidValue::new("trace", "a list of trace events", e))?;
        self.sampler.restore(inner)?;
        self.trace = trace;
        Ok(())
    }

    fn trains_on(&self, task: &Task) -> bool {
        self.sampler.trains_on(task)
    }
}

impl<S: CurriculumSampler> CurriculumSampler for Traced<S> {
    fn kind(&self) -> &'static str {
        self.sampler.kind()
    }

    fn snapshot(&self) -> Vec<EnvSnapshot> {
        self.sampler.snapshot()
    }

    fn samples(&self) -> u64 {
        self.sampler.samples()
    }

    fn updates(&self) -> u64 {
        self.sampler.updates()
    }

    fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent> {
        self.sampler.trace_event(step, outcome)
    }

    fn trace(&self) -> &[TraceEvent] {
        &self.trace
    }

    /// The trace so far stays.
    fn retarget(&mut self, envs: &[EnvSpec]) -> Result<(), CurriculumError> {
        self.sampler.retarget(envs)
    }

    fn hdc(&self) -> Option<&HdcSampler> {
        self.sampler.hdc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HdcConfig, LadderConfig, LadderSampler, synthetic_specs};

    fn play(s: &mut dyn TaskSampler, n: usize) {
        for _ in 0..n {
            let task = s.sample();
            s.update(&EpisodeOutcome {
                task,
                success: true,
                episode_return: 1.0,
                steps: 1,
            })
            .unwrap();
        }
    }

    #[test]
    fn traces_every_known_outcome_and_resumes_with_its_trace() {
        let envs = synthetic_specs("t", &[(1, 3)]);
        let inner = HdcSampler::new(&envs, None, HdcConfig::default(), 3).unwrap();
        let mut traced = Traced::new(inner.clone());
        play(&mut traced, 5);
        assert_eq!(traced.trace.len(), 5);
        assert_eq!(traced.trace[4].step, 4);
        let mut fresh = Traced::new(inner);
        fresh.restore(&traced.state()).unwrap();
        assert_eq!(fresh.state(), traced.state());
        assert_eq!(fresh.trace, traced.trace);
        assert!(fresh.restore(&serde_json::json!({"x": 1})).is_err());
    }

    #[test]
    fn a_traced_rival_keeps_its_trace_in_its_state() {
        let envs = synthetic_specs("t", &[(1, 3), (2, 2)]);
        let config = LadderConfig::default();
        let mut traced = Traced::new(LadderSampler::new(&envs, config.clone(), 1).unwrap());
        play(&mut traced, 7);
        assert_eq!(traced.trace().len(), 7);
        let state = traced.state();
        assert!(state.get("ladder").is_some() && state.get("trace").is_some());
        let mut fresh = Traced::new(LadderSampler::new(&envs, config, 9).unwrap());
        fresh.restore(&state).unwrap();
        assert_eq!(fresh.trace(), traced.trace());
        assert_eq!(fresh.sample(), traced.sample());
    }
}
