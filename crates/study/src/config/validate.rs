//! The configuration checked once, before any stage runs, naming the offending field: each
//! embedded configuration by its own rules, then the study's own fields and the rules across
//! sections.

use envdist_core::{InvalidValue, Validate};
use envdist_trainer::ScaleChoice;

use super::{EXPERIMENT_SCHEMA_VERSION, ExperimentConfig, Split};
use crate::model::Arm;

fn at_least(field: &str, min: u64, found: u64, why: &str) -> Result<(), InvalidValue> {
    if found >= min {
        return Ok(());
    }
    let expected = match why {
        "" => format!("at least {min}"),
        why => format!("at least {min} ({why})"),
    };
    Err(InvalidValue::new(field, expected, found))
}

/// A trainer configuration's error as a field of the study's configuration: the trainer names
/// `TrainConfig`'s fields bare (`epochs`) and `GradientConfig`'s under `gradients.`.
fn trainer_field(section: &'static str) -> impl Fn(envdist_trainer::TrainerError) -> InvalidValue {
    move |e| match e {
        envdist_trainer::TrainerError::Config(v) if v.field.starts_with(section) => v,
        envdist_trainer::TrainerError::Config(v) => v.within(section),
        other => InvalidValue::new(section, "a valid configuration", other),
    }
}

impl Validate for ExperimentConfig {
    /// Check the whole configuration once, naming the offending field: the embedded
    /// configurations by their own rules (their fields named under their section), then the
    /// study's own fields and the rules across sections.
    fn validate(&self) -> Result<(), InvalidValue> {
        let fail = |field: &str, expected: &str, found: String| {
            Err(InvalidValue::new(field, expected, found))
        };
        if self.schema_version != EXPERIMENT_SCHEMA_VERSION {
            return fail(
                "schema_version",
                &EXPERIMENT_SCHEMA_VERSION.to_string(),
                self.schema_version.to_string(),
            );
        }
        self.rl.validate().map_err(trainer_field("rl"))?;
        self.gradients
            .validate()
            .map_err(trainer_field("gradients"))?;
        self.selection
            .validate_fields()
            .map_err(|v| v.within("selection"))?;
        self.hdc.validate().map_err(|e| match e {
            envdist_curriculum::CurriculumError::Config(v) => v.within("hdc"),
            other => InvalidValue::new("hdc", "a valid HDC config", other),
        })?;

        at_least("seeds", 1, self.seeds.into(), "")?;
        if self.protocol.split == Split::Development
            && self.seeds > crate::protocol::CONFIRMATORY_SEED_BASE
        {
            return fail(
                "seeds",
                &format!(
                    "at most {} in a development run (the confirmatory seeds start there)",
                    crate::protocol::CONFIRMATORY_SEED_BASE
                ),
                self.seeds.to_string(),
            );
        }
        if !(16..=128).contains(&self.suite.canvas) {
            return fail("suite.canvas", "16..=128", self.suite.canvas.to_string());
        }
        at_least("pool.size", 2, self.pool.size as u64, "")?;
        let trajectories = self.profiles.trajectories.into();
        at_least("profiles.trajectories", 2, trajectories, "half per policy")?;
        if !(self.base.critic_lr.is_finite() && self.base.critic_lr > 0.0) {
            return fail(
                "base.critic_lr",
                "a positive learning rate",
                self.base.critic_lr.to_string(),
            );
        }
        at_least("base.samples", 256, self.base.samples, "one minibatch")?;
        let halves = self.gradients.rollouts_per_env as u64;
        at_least("gradients.rollouts_per_env", 2, halves, "two halves")?;
        at_least("rl.total_env_steps", 1, self.rl.total_env_steps, "")?;
        at_least("eval.episodes", 1, self.eval.episodes.into(), "")?;
        if self.eval.instances != 0 {
            return fail(
                "eval.instances",
                "0 (the instance stream follows protocol.split)",
                self.eval.instances.to_string(),
            );
        }
        if self.eval.scales.is_empty()
            || self
                .eval
                .scales
                .iter()
                .any(|s| !matches!(s, ScaleChoice::Min | ScaleChoice::Mid | ScaleChoice::Max))
        {
            return fail(
                "eval.scales",
                "a non-empty list of `min`, `mid`, `max`",
                format!("{:?}", self.eval.scales),
            );
        }
        let replicates = self.analysis.bootstrap.into();
        at_least("analysis.bootstrap", 100, replicates, "replicates")?;
        at_least(
            "analysis.rerun_factor",
            1,
            self.analysis.rerun_factor.into(),
            "",
        )?;
        for (field, v) in [
            (
                "analysis.equivalence_margin",
                self.analysis.equivalence_margin,
            ),
            ("analysis.detect_points", self.analysis.detect_points),
        ]
        .into_iter()
        .chain(
            self.analysis
                .margins
                .values()
                .map(|m| ("analysis.margins", *m)),
        ) {
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return fail(field, "points in (0, 100]", v.to_string());
            }
        }
        let t = &self.transfer;
        if (t.probes > 0 || t.matrix_probes > 0) && (t.steps == 0 || t.eval_episodes == 0) {
            return fail(
                "transfer",
                "steps >= 1 and eval_episodes >= 1 when probes or matrix_probes > 0",
                format!("{t:?}"),
            );
        }
        if t.matrix_probes > 0 && t.strata == 0 {
            return fail("transfer.strata", "at least 1", "0".into());
        }
        if t.matrix_probes == 0 && self.arms.contains(&Arm::AesTransfer) {
            return fail(
                "transfer.matrix_probes",
                "at least 1 when `arms` has aes-transfer (it selects with the transfer matrix)",
                "0".into(),
            );
        }
        if self.arms.contains(&Arm::AesTransfer) {
            if t.aes_transfer_probes < 2 || t.aes_transfer_probes > t.matrix_probes {
                return fail(
                    "transfer.aes_transfer_probes",
                    &format!(
                        "2 to transfer.matrix_probes ({}) when `arms` has aes-transfer (a \
                         response needs two probes to have a direction)",
                        t.matrix_probes
                    ),
                    t.aes_transfer_probes.to_string(),
                );
            }
            if self.aes_transfer_charge() >= self.rl.total_env_steps {
                return fail(
                    "transfer.aes_transfer_probes",
                    &format!(
                        "fewer than rl.total_env_steps / transfer.steps ({} / {}): its probes' \
                         steps are charged to aes-transfer's budget and must leave some to train",
                        self.rl.total_env_steps, t.steps
                    ),
                    t.aes_transfer_probes.to_string(),
                );
            }
        }
        if t.harness_probes > t.matrix_probes {
            return fail(
                "transfer.harness_probes",
                &format!("at most transfer.matrix_probes ({})", t.matrix_probes),
                t.harness_probes.to_string(),
            );
        }
        if self.online.every_steps == 0 || self.online.episodes < 2 || self.online.dim == 0 {
            return fail(
                "online",
                "every_steps >= 1, episodes >= 2, dim >= 1",
                format!("{:?}", self.online),
            );
        }

        // Rules across sections.
        if self.selection.k > self.pool.size {
            return fail(
                "selection.k",
                &format!("1..={} (pool.size)", self.pool.size),
                self.selection.k.to_string(),
            );
        }
        if !self.arms.iter().any(|a| a.is_base()) {
            return fail(
                "arms",
                "a list containing `base` (every gain is over it)",
                format!("{:?}", self.arms),
            );
        }
        if let Some(s) = self
            .scaling_sizes
            .iter()
            .find(|s| **s == 0 || **s > self.pool.size)
        {
            return fail(
                "scaling_sizes",
                &format!("sizes in 1..={}", self.pool.size),
                s.to_string(),
            );
        }
        Ok(())
    }
}
