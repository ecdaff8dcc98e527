//! The two default rollout policies: a noisy solver and a weaker persistent explorer.
//!
//! The paper profiles each environment with two different agents so that a profile does not
//! reflect one agent's habits. Our defaults stand in for them; any [`Policy`] (a trained
//! network, an LLM agent) can take either role.

use envdist_core::{ActionId, ActionMask, Policy, PolicyInput, Rng};

/// A uniformly random legal action (`wait` when nothing is legal, which a pure env treats as a
/// no-op rather than a failure).
fn random_legal(legal: ActionMask, rng: &mut Rng) -> ActionId {
    let n = legal.count();
    if n == 0 {
        return ActionId::WAIT;
    }
    let k = rng.index(n);
    legal.iter().nth(k).unwrap_or(ActionId::WAIT)
}

/// The env's own solver, replaced by a random legal action with probability `epsilon`.
#[derive(Debug, Clone)]
pub struct NoisyOracle {
    epsilon: f32,
    name: String,
}

impl NoisyOracle {
    /// A solver that errs with probability `epsilon` (clamped to `[0, 1]`).
    pub fn new(epsilon: f32) -> Self {
        let epsilon = if epsilon.is_finite() {
            epsilon.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Self {
            epsilon,
            name: format!("oracle-eps{epsilon:.2}"),
        }
    }

    /// The error probability.
    pub fn epsilon(&self) -> f32 {
        self.epsilon
    }
}

impl Policy for NoisyOracle {
    fn name(&self) -> &str {
        &self.name
    }

    fn wants_oracle(&self) -> bool {
        true
    }

    fn act(&mut self, input: &PolicyInput<'_>, rng: &mut Rng) -> ActionId {
        // Draw the coin every step so the random stream does not depend on whether the env
        // happened to have a solver action this step.
        let explore = rng.chance(self.epsilon);
        match input.oracle {
            Some(a) if !explore && input.legal.contains(a) => a,
            _ => random_legal(input.legal, rng),
        }
    }
}

/// A weaker exploratory agent: repeats its previous action with probability `persistence`
/// while it stays legal, otherwise picks a uniformly random legal action. Persistence makes it
/// walk corridors and push things further than a memoryless random agent would.
#[derive(Debug, Clone)]
pub struct Explorer {
    persistence: f32,
    last: Option<ActionId>,
    name: String,
}

impl Explorer {
    /// An explorer that keeps its last action with probability `persistence` (clamped).
    pub fn new(persistence: f32) -> Self {
        let persistence = if persistence.is_finite() {
            persistence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Self {
            persistence,
            last: None,
            name: format!("explorer-p{persistence:.2}"),
        }
    }

    /// The probability of repeating the previous action.
    pub fn persistence(&self) -> f32 {
        self.persistence
    }
}

impl Policy for Explorer {
    fn name(&self) -> &str {
        &self.name
    }

    fn act(&mut self, input: &PolicyInput<'_>, rng: &mut Rng) -> ActionId {
        let keep = rng.chance(self.persistence);
        let action = match self.last {
            Some(a) if keep && input.legal.contains(a) => a,
            _ => random_legal(input.legal, rng),
        };
        self.last = Some(action);
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::{EnvId, HarnessLevel, HarnessText, Observation, Rgb8Image, Task};

    fn input_parts() -> (Task, Observation) {
        let task = Task {
            env: EnvId::new("toy/a"),
            seed: 1,
            harness: HarnessLevel::H0,
            scale: 1,
        };
        let obs = Observation {
            image: Rgb8Image::new(1, 1),
            instruction: String::new(),
            harness: HarnessText::default(),
        };
        (task, obs)
    }

    #[test]
    fn oracle_without_noise_follows_the_solver_and_stays_legal() {
        let (task, obs) = input_parts();
        let legal = ActionMask::NONE.with(ActionId::UP).with(ActionId::LEFT);
        let mut p = NoisyOracle::new(0.0);
        let mut rng = Rng::seed_from_u64(3);
        let input = PolicyInput {
            task: &task,
            observation: &obs,
            legal,
            oracle: Some(ActionId::LEFT),
        };
        for _ in 0..50 {
            assert_eq!(p.act(&input, &mut rng), ActionId::LEFT);
        }
        let mut noisy = NoisyOracle::new(1.0);
        let mut seen_up = false;
        for _ in 0..50 {
            let a = noisy.act(&input, &mut rng);
            assert!(legal.contains(a));
            seen_up |= a == ActionId::UP;
        }
        assert!(seen_up);
        assert_eq!(p.name(), "oracle-eps0.00");
    }

    #[test]
    fn explorer_stays_legal_and_persists() {
        let (task, obs) = input_parts();
        let legal = ActionMask::moves_interact_wait();
        let input = PolicyInput {
            task: &task,
            observation: &obs,
            legal,
            oracle: None,
        };
        let mut p = Explorer::new(1.0);
        let mut rng = Rng::seed_from_u64(5);
        let first = p.act(&input, &mut rng);
        for _ in 0..20 {
            assert_eq!(p.act(&input, &mut rng), first);
        }
        let empty = PolicyInput {
            legal: ActionMask::NONE,
            ..input
        };
        assert_eq!(Explorer::new(0.0).act(&empty, &mut rng), ActionId::WAIT);
    }
}
