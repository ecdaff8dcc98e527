//! A tiny environment family for unit tests: walk right along a line to the goal.
//! `toy/walk` moves right on `right`; its conflict twin `toy/mirror` moves right on `left`.

use envdist_core::env::{EnvFactory, UnknownEnv};
use envdist_core::{
    ActionId, ActionMask, Env, EnvId, EnvSpec, HarnessText, Observation, Rgb8Image, ScaleRange,
    Split, Step, Task, Turn,
};

pub struct Walk {
    spec: EnvSpec,
    mirrored: bool,
    pos: u32,
    len: u32,
    steps: u32,
}

pub fn spec(variant: &str, twin: &str) -> EnvSpec {
    EnvSpec {
        id: EnvId::new(format!("toy/{variant}")),
        family: "toy".into(),
        variant: variant.into(),
        turn: Turn::Multi,
        scale: ScaleRange { min: 3, max: 7 },
        split: Split::Pool,
        abilities: vec!["navigate".into(), "reach-goal".into(), "idle".into()],
        conflict_twin: Some(EnvId::new(format!("toy/{twin}"))),
        instruction: "Reach the right end.".into(),
        max_steps: 12,
    }
}

impl Walk {
    fn observation(&self) -> Observation {
        Observation {
            image: Rgb8Image::new(2, 2),
            instruction: self.spec.instruction.clone(),
            harness: HarnessText::default(),
        }
    }

    fn forward(&self) -> ActionId {
        if self.mirrored {
            ActionId::LEFT
        } else {
            ActionId::RIGHT
        }
    }
}

impl Env for Walk {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn reset(&mut self, task: &Task) -> Observation {
        self.len = task.scale;
        self.pos = (task.seed % 2) as u32;
        self.steps = 0;
        self.observation()
    }

    fn step(&mut self, action: ActionId) -> Step {
        self.steps += 1;
        let mut abilities = vec![];
        if action == self.forward() {
            self.pos += 1;
            abilities.push("navigate");
        } else {
            abilities.push("idle");
        }
        let done = self.pos + 1 >= self.len;
        if done {
            abilities.push("reach-goal");
        }
        Step {
            observation: self.observation(),
            reward: if done { 1.0 } else { 0.0 },
            done,
            truncated: !done && self.steps >= self.spec.max_steps,
            success: done,
            abilities,
            legal: self.legal_actions(),
        }
    }

    fn legal_actions(&self) -> ActionMask {
        ActionMask::NONE
            .with(ActionId::LEFT)
            .with(ActionId::RIGHT)
            .with(ActionId::WAIT)
    }

    fn oracle_action(&mut self) -> Option<ActionId> {
        Some(self.forward())
    }
}

pub struct ToyFactory;

impl EnvFactory for ToyFactory {
    fn specs(&self) -> Vec<EnvSpec> {
        vec![spec("walk", "mirror"), spec("mirror", "walk")]
    }

    fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv> {
        let mirrored = match id.as_str() {
            "toy/walk" => false,
            "toy/mirror" => true,
            other => return Err(UnknownEnv(EnvId::new(other))),
        };
        let spec = if mirrored {
            spec("mirror", "walk")
        } else {
            spec("walk", "mirror")
        };
        Ok(Box::new(Walk {
            spec,
            mirrored,
            pos: 0,
            len: 3,
            steps: 0,
        }))
    }
}
