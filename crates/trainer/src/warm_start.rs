//! Starting a training run from an existing policy (e.g. the experiment's warm-up model), so
//! that every arm of a study continues from the same base weights with a fresh optimizer.

use envdist_core::InvalidValue;
use std::sync::Arc;

use envdist_core::env::EnvFactory;

use crate::trainer::Core;
use crate::{ModelInner, PolicyModel, TrainConfig, Trainer, TrainerError, TrainerInner};

impl Trainer {
    /// A fresh run (new optimizer state, step counters at zero) whose network starts from
    /// `policy`'s weights, on `policy`'s device. `cfg.model` must equal the policy's shape.
    pub fn from_policy(
        cfg: TrainConfig,
        factory: Arc<dyn EnvFactory>,
        policy: &PolicyModel,
    ) -> Result<Self, TrainerError> {
        cfg.validate()?;
        if &cfg.model != policy.config() {
            return Err(TrainerError::Config(InvalidValue::new(
                "model",
                format!("the starting policy's shape {:?}", policy.config()),
                format!("{:?}", cfg.model),
            )));
        }
        let inner = match &policy.inner {
            ModelInner::Cpu(net) => {
                let mut core = Core::new(cfg, factory, Default::default());
                core.model = net.clone();
                TrainerInner::Cpu(Box::new(core))
            }
            #[cfg(feature = "cuda")]
            ModelInner::Cuda(net, device) => {
                let mut core = Core::new(cfg, factory, device.clone());
                core.model = net.clone();
                TrainerInner::Cuda(Box::new(core))
            }
        };
        Ok(Self { inner })
    }
}
