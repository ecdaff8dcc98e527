//! Saving and loading the engine's state as a checkpoint ([`crate::checkpoint`] holds the
//! format and the checks on what is read).

use std::path::Path;
use std::sync::Arc;

use burn::module::Module;
use burn::optim::Optimizer;
use burn::record::Recorder;
use burn::tensor::backend::AutodiffBackend;
use envdist_core::TaskSampler;
use envdist_core::env::EnvFactory;

use super::Core;
use crate::adam::adam;
use crate::backend::to_inner_device;
use crate::checkpoint::{
    AdamRecord, CHECKPOINT_SCHEMA_VERSION, CheckpointState, Recorder_, START_FILE, SlotState,
    burn_load, load_model, load_net, optimizer_shape_mismatches, read_state,
};
use crate::error::TrainerError;
use crate::files::CHECKPOINT_STATE_FILE;
use crate::play::{Slot, outcome};

impl<B: AutodiffBackend> Core<B> {
    /// Save a checkpoint into `dir`; `state.json` is written last.
    pub(crate) fn save(&self, dir: &Path, sampler: &dyn TaskSampler) -> Result<(), TrainerError> {
        let rec = Recorder_::default();
        let model_bytes = Recorder::<B>::record(&rec, self.model.clone().into_record(), ())
            .map_err(|e| TrainerError::Backend(e.to_string()))?;
        let optim_bytes = Recorder::<B>::record(&rec, self.optim.to_record(), ())
            .map_err(|e| TrainerError::Backend(e.to_string()))?;
        let model_file = format!("model-{:08}.mpk", self.update);
        let optimizer_file = format!("optimizer-{:08}.mpk", self.update);
        envdist_core::io::write_atomic(dir.join(&model_file), &model_bytes)?;
        envdist_core::io::write_atomic(dir.join(&optimizer_file), &optim_bytes)?;
        let start_file = match &self.start {
            Some(start) => {
                let bytes =
                    Recorder::<B::InnerBackend>::record(&rec, start.clone().into_record(), ())
                        .map_err(|e| TrainerError::Backend(e.to_string()))?;
                envdist_core::io::write_atomic(dir.join(START_FILE), &bytes)?;
                Some(START_FILE.to_string())
            }
            None => None,
        };
        let state = CheckpointState {
            schema_version: CHECKPOINT_SCHEMA_VERSION,
            config: self.cfg.clone(),
            update: self.update,
            env_steps: self.env_steps,
            rng: self.rng.clone(),
            sampler: sampler.state(),
            slots: self
                .slots
                .iter()
                .map(|s| SlotState {
                    task: s.task.clone(),
                    actions: s.actions.clone(),
                    trains: s.trains,
                })
                .collect(),
            model_file: model_file.clone(),
            optimizer_file: optimizer_file.clone(),
            start_file: start_file.clone(),
        };
        // state.json is written last and atomically: it names the files of a complete
        // checkpoint, so a crash mid-save leaves the previous checkpoint usable.
        envdist_core::io::write_json_atomic(dir.join(CHECKPOINT_STATE_FILE), &state)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let stale = ((name.starts_with("model-") || name.starts_with("optimizer-"))
                    && name.ends_with(".mpk")
                    && name != model_file
                    && name != optimizer_file)
                    || (name == START_FILE && start_file.is_none());
                if stale {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    /// The run saved in `dir`, on `device`; with `sampler`, its state and every env slot's
    /// episode in progress are restored too.
    pub(crate) fn load(
        dir: &Path,
        factory: Arc<dyn EnvFactory>,
        device: B::Device,
        sampler: Option<&mut dyn TaskSampler>,
    ) -> Result<Self, TrainerError> {
        let state = read_state(dir)?;
        let mut core = Self::new(state.config.clone(), factory, device);
        core.model = load_model::<B>(dir, &state, &core.device)?;
        if let Some(start) = &state.start_file {
            core.start = Some(load_net::<B::InnerBackend>(
                &dir.join(start),
                "a burn model record (the start_file of state.json)",
                &state,
                &to_inner_device::<B>(&core.device),
            )?);
        }
        let rec = Recorder_::default();
        let opt_path = dir.join(&state.optimizer_file);
        let bytes = std::fs::read(&opt_path).map_err(|source| envdist_core::FileError::Io {
            path: opt_path.clone(),
            source,
        })?;
        let device = core.device.clone();
        core.optim = burn_load(
            &opt_path,
            "a burn optimizer record (the optimizer_file of state.json)",
            || {
                let record: AdamRecord<B> =
                    Recorder::<B>::load(&rec, bytes, &device).map_err(|e| e.to_string())?;
                // burn takes the moments as they come: one of another shape than its parameter
                // would only panic in the first step.
                let bad = optimizer_shape_mismatches(&core.model, &record);
                if let Some(first) = bad.first() {
                    return Err(format!(
                        "Adam moments of the model's parameter shapes; {} of them differ, first {first}",
                        bad.len()
                    ));
                }
                Ok(adam().load_record(record))
            },
        )?;
        core.rng = state.rng.clone();
        core.update = state.update;
        core.env_steps = state.env_steps;
        if let Some(sampler) = sampler {
            // Both come from state.json: their errors name it and the field.
            let in_state = |field: String, expected: &str, e: String| {
                envdist_core::FileError::invalid(
                    dir.join(CHECKPOINT_STATE_FILE),
                    field,
                    expected,
                    e,
                )
            };
            sampler.restore(&state.sampler).map_err(|e| {
                in_state(
                    "sampler".into(),
                    "a state of the sampler being resumed",
                    e.0,
                )
            })?;
            for (i, s) in state.slots.iter().enumerate() {
                let mut slot = Slot::replay(
                    core.factory.as_ref(),
                    s.task.clone(),
                    &s.actions,
                    &core.cfg.model,
                )
                .map_err(|e| {
                    in_state(
                        format!("slots[{i}].task"),
                        "a task of the run's environments",
                        e.to_string(),
                    )
                })?;
                // An episode in progress must be one the sampler could have issued: its outcome
                // is reported to it later, and a refusal then would name no file.
                sampler.check_outcome(&outcome(&slot, false)).map_err(|e| {
                    in_state(
                        format!("slots[{i}].task"),
                        "a task the resumed sampler could have issued",
                        e.problem.to_string(),
                    )
                })?;
                slot.trains = s.trains;
                core.slots.push(slot);
            }
        }
        Ok(core)
    }
}
