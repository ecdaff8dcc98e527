//! Checkpoint IO: `checkpoint/state.json` (the run's counters, RNG, sampler state and every env
//! slot's episode so far) and the burn records it names, each checked against the declared
//! network before anything is allocated or loaded.

use std::path::{Path, PathBuf};

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::Optimizer;
use burn::record::{FullPrecisionSettings, NamedMpkBytesRecorder, Recorder};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use envdist_core::{ActionId, Rng, Task};
use serde::{Deserialize, Serialize};

use crate::adam::TrainerAdam;
use crate::config::TrainConfig;
use crate::error::TrainerError;
use crate::files::CHECKPOINT_STATE_FILE;
use crate::model::PolicyNet;

/// Schema version of `checkpoint/state.json`.
pub const CHECKPOINT_SCHEMA_VERSION: u32 = 1;

pub(crate) type Recorder_ = NamedMpkBytesRecorder<FullPrecisionSettings>;

/// Saved mid-episode state of one env slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SlotState {
    pub task: Task,
    pub actions: Vec<ActionId>,
    /// Whether the sampler wanted gradients from this episode.
    #[serde(default = "yes")]
    pub trains: bool,
}

fn yes() -> bool {
    true
}

/// `checkpoint/state.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CheckpointState {
    pub schema_version: u32,
    pub config: TrainConfig,
    pub update: u64,
    pub env_steps: u64,
    pub rng: Rng,
    pub sampler: serde_json::Value,
    pub slots: Vec<SlotState>,
    pub model_file: String,
    pub optimizer_file: String,
    /// The policy the run started from ([`START_FILE`], runs started from a policy), so that
    /// a resumed run measures its KL to the same reference as the run it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_file: Option<String>,
}

/// The file of a checkpoint holding the policy the run started from: it never changes during
/// a run, so it keeps one name.
pub(crate) const START_FILE: &str = "start.mpk";

pub(crate) fn read_state(dir: &Path) -> Result<CheckpointState, TrainerError> {
    let path = dir.join(CHECKPOINT_STATE_FILE);
    let state: CheckpointState =
        envdist_core::io::read_json(&path, Some(CHECKPOINT_SCHEMA_VERSION))?;
    state.config.validate().map_err(|e| match e {
        TrainerError::Config(v) => TrainerError::File(envdist_core::FileError::invalid(
            &path,
            format!("config.{}", v.field),
            v.expected,
            v.found,
        )),
        other => other,
    })?;
    let bad = |field: &str, expected: String, found: String| {
        TrainerError::File(envdist_core::FileError::invalid(
            &path, field, expected, found,
        ))
    };
    // The record files sit beside state.json (a name is never a path elsewhere) and exist:
    // state.json is written last, naming the files of a complete checkpoint.
    let mut sizes = [0u64; 3];
    let start_file = state.start_file.clone().unwrap_or_default();
    let files = [
        ("model_file", &state.model_file),
        ("optimizer_file", &state.optimizer_file),
        ("start_file", &start_file),
    ];
    let present = if state.start_file.is_some() { 3 } else { 2 };
    for (size, (field, name)) in sizes.iter_mut().zip(files).take(present) {
        let expected = || "a file in the checkpoint directory".to_string();
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad(field, expected(), format!("{name:?}")));
        }
        *size = std::fs::metadata(dir.join(name))
            .map_err(|e| bad(field, expected(), format!("{name:?} ({e})")))?
            .len();
    }
    if state.slots.len() > state.config.num_envs {
        return Err(bad(
            "slots",
            format!(
                "at most num_envs = {} episodes in progress",
                state.config.num_envs
            ),
            state.slots.len().to_string(),
        ));
    }
    // The network is built from `config.model` before its record is read: a config declaring
    // a network larger than the model file could hold is refused before allocating it.
    let params = state.config.model.num_params().unwrap_or(usize::MAX);
    for (k, (_, name)) in files.iter().enumerate().take(present) {
        if k != 1 && (params as u64).saturating_mul(4) > sizes[k] {
            return Err(bad(
                "config.model",
                format!("a network the {}-byte {name} can hold", sizes[k]),
                format!("{params} parameters (4 bytes each)"),
            ));
        }
    }
    Ok(state)
}

pub(crate) fn load_model<B: AutodiffBackend>(
    dir: &Path,
    state: &CheckpointState,
    device: &B::Device,
) -> Result<PolicyNet<B>, TrainerError> {
    load_net::<B>(
        &dir.join(&state.model_file),
        "a burn model record (the model_file of state.json)",
        state,
        device,
    )
}

/// A network of `state.config.model` from the record at `path` (`what` it should be, for the
/// error), its parameter shapes checked.
pub(crate) fn load_net<BB: Backend>(
    path: &Path,
    what: &str,
    state: &CheckpointState,
    device: &BB::Device,
) -> Result<PolicyNet<BB>, TrainerError> {
    let path: PathBuf = path.to_path_buf();
    let bytes = std::fs::read(&path).map_err(|source| envdist_core::FileError::Io {
        path: path.clone(),
        source,
    })?;
    let rec = Recorder_::default();
    let net = PolicyNet::<BB>::init(&state.config.model, state.config.seed, device);
    let expected = param_shapes(&net);
    let loaded = burn_load(&path, what, || {
        let record = Recorder::<BB>::load(&rec, bytes, device).map_err(|e| e.to_string())?;
        Ok(net.load_record(record))
    })?;
    // burn takes a record's tensors as they come: one of another shape would only fail (and
    // panic) in the first forward pass.
    let found = param_shapes(&loaded);
    if found != expected {
        return Err(envdist_core::FileError::invalid(
            &path,
            ".",
            format!("parameters of shapes {expected:?} (config.model of state.json)"),
            format!("{found:?}"),
        )
        .into());
    }
    Ok(loaded)
}

/// What the trainer's optimizer saves: Adam's moments per parameter id.
pub(crate) type AdamRecord<B> = <TrainerAdam<B> as Optimizer<PolicyNet<B>, B>>::Record;

/// The parameters of `net` whose Adam moments in `record` have another shape than theirs
/// (`id: found vs expected`). A moment of another rank panics in burn's conversion, which the
/// caller's [`burn_load`] reports as the file's error.
pub(crate) fn optimizer_shape_mismatches<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    record: &AdamRecord<B>,
) -> Vec<String> {
    struct Check<'a, B: AutodiffBackend> {
        record: &'a AdamRecord<B>,
        bad: Vec<String>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Check<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            let Some(r) = self.record.get(&param.id) else {
                return;
            };
            let want = param.val().dims();
            let m = r.clone().into_state::<D>().momentum;
            for found in [m.moment_1.dims(), m.moment_2.dims()] {
                if found != want {
                    self.bad
                        .push(format!("{}: {found:?} vs {want:?}", param.id));
                }
            }
        }
    }
    let mut check = Check {
        record,
        bad: Vec::new(),
    };
    net.visit(&mut check);
    check.bad
}

/// The shape of every parameter of `net`, in visiting order.
fn param_shapes<B: Backend, M: Module<B>>(net: &M) -> Vec<Vec<usize>> {
    struct Shapes(Vec<Vec<usize>>);
    impl<B: Backend> ModuleVisitor<B> for Shapes {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            self.0.push(param.val().dims().to_vec());
        }
    }
    let mut shapes = Shapes(Vec::new());
    net.visit(&mut shapes);
    shapes.0
}

/// Run one of burn's record loads, whose errors (and panics) are the file's. burn panics on
/// some malformed records instead of returning an error (an unreadable parameter id:
/// `ParamId::deserialize` documents it): caught here, at the one place a record enters, and
/// reported as the file's error like any other.
pub(crate) fn burn_load<T>(
    path: &Path,
    expected: &str,
    load: impl FnOnce() -> Result<T, String>,
) -> Result<T, TrainerError> {
    let found = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)) {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(e)) => e,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("a record burn cannot load ({why})")
        }
    };
    Err(envdist_core::FileError::invalid(path, ".", expected, found).into())
}
