//! How the study reports progress: an [`Observer`] the caller passes in. The library draws
//! nothing itself; xtask turns the events into indicatif bars, tests and the Python binding can
//! ignore them ([`Silent`]) or record them.

/// Whether a stage ran or came from the cache, and how long it took when it ran.
#[derive(Debug, Clone, Copy)]
pub struct StageInfo {
    /// Loaded from cache.
    pub cached: bool,
    /// Seconds the stage took when it was computed (now or in the run that cached it).
    pub seconds: f64,
}

/// A unit of long work with a known size (rollouts over environments, env steps of an arm).
pub trait Progress: Send + Sync {
    /// Absolute position.
    fn set(&self, position: u64);
    /// Advance by `n`.
    fn inc(&self, n: u64);
    /// A short status next to the bar (`success 0.42`).
    fn message(&self, text: String);
    /// The work is done (or abandoned); the bar may go away.
    fn finish(&self);
}

/// What the study tells its caller while it runs. Every method has a do-nothing default.
pub trait Observer: Sync {
    /// A stage finished (computed now or taken from the cache).
    fn stage_done(&self, _stage: &str, _info: &StageInfo) {}
    /// A stage found a cache entry it cannot use and recomputes (`reason` says why).
    fn stage_recomputed(&self, _stage: &str, _reason: &str) {}
    /// Long work of `total` units, called `label`, starts.
    fn progress(&self, _label: &str, _total: u64) -> Box<dyn Progress> {
        Box::new(NoProgress)
    }
    /// A line worth showing (a figure that could not be drawn, a relaxation of a constraint).
    fn note(&self, _text: &str) {}
}

/// Ignores every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {}

/// A [`Progress`] that ignores every update.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn set(&self, _position: u64) {}
    fn inc(&self, _n: u64) {}
    fn message(&self, _text: String) {}
    fn finish(&self) {}
}

/// Every stage event as text lines, in order (tests).
#[derive(Debug, Default)]
pub struct Recorder {
    events: std::sync::Mutex<Vec<(String, bool)>>,
}

impl Recorder {
    /// Stages in the order they finished, each with whether it came from the cache.
    pub fn stages(&self) -> Vec<(String, bool)> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The stages that were computed (not taken from the cache).
    pub fn computed(&self) -> Vec<String> {
        self.stages()
            .into_iter()
            .filter(|(_, cached)| !cached)
            .map(|(s, _)| s)
            .collect()
    }
}

impl Observer for Recorder {
    fn stage_done(&self, stage: &str, info: &StageInfo) {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((stage.to_string(), info.cached));
    }
}
