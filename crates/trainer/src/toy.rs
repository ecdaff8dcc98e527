//! A tiny go-to-goal grid, so the trainer can be tested (and its doc example run) without the
//! environment suite, which this crate must not depend on. Not part of any experiment pool.
//!
//! Variants: `toy/goal` (red agent, green goal), `toy/goal-theme` (same rules, blue agent and
//! yellow goal: a visual theme), `toy/goal-mirrored` (same pixels as `toy/goal`, mirrored
//! controls: its conflicting twin). Scale is the grid side (2..=4) drawn in 8-pixel cells on a
//! 32x32 canvas. Reward 1 on reaching the goal; the hint names the right action.

use envdist_core::{
    ActionId, ActionMask, Env, EnvId, EnvSpec, HarnessSchedule, HarnessText, Observation,
    Rgb8Image, Rng, ScaleRange, Split, Step, Task, Turn,
};

use envdist_core::env::{EnvFactory, UnknownEnv};

const CELL: i32 = 8;
const CANVAS: u32 = 32;

/// The toy environment.
#[derive(Debug, Clone)]
pub struct GoalGrid {
    spec: EnvSpec,
    mirrored: bool,
    colours: ([u8; 3], [u8; 3]),
    n: i32,
    agent: (i32, i32),
    goal: (i32, i32),
    task: Option<Task>,
    steps: u32,
}

fn spec(variant: &str) -> EnvSpec {
    EnvSpec {
        id: EnvId::new(format!("toy/{variant}")),
        family: "toy".into(),
        variant: variant.into(),
        turn: Turn::Multi,
        scale: ScaleRange { min: 2, max: 4 },
        split: Split::Pool,
        abilities: vec!["navigate".into()],
        conflict_twin: match variant {
            "goal" => Some(EnvId::new("toy/goal-mirrored")),
            "goal-mirrored" => Some(EnvId::new("toy/goal")),
            _ => None,
        },
        instruction: "Move the agent onto the goal.".into(),
        max_steps: 12,
    }
}

impl GoalGrid {
    /// The variant `goal`, `goal-theme` or `goal-mirrored`.
    pub fn new(variant: &str) -> Option<Self> {
        let (mirrored, colours) = match variant {
            "goal" => (false, ([220, 40, 40], [40, 200, 60])),
            "goal-theme" => (false, ([40, 80, 230], [230, 210, 40])),
            "goal-mirrored" => (true, ([220, 40, 40], [40, 200, 60])),
            _ => return None,
        };
        Some(Self {
            spec: spec(variant),
            mirrored,
            colours,
            n: 2,
            agent: (0, 0),
            goal: (1, 1),
            task: None,
            steps: 0,
        })
    }

    fn best_action(&self) -> ActionId {
        let (dx, dy) = (self.goal.0 - self.agent.0, self.goal.1 - self.agent.1);
        let a = if dx.abs() >= dy.abs() {
            if dx > 0 {
                ActionId::RIGHT
            } else {
                ActionId::LEFT
            }
        } else if dy > 0 {
            ActionId::DOWN
        } else {
            ActionId::UP
        };
        if self.mirrored { mirror(a) } else { a }
    }

    fn observe(&self) -> Observation {
        let mut img = Rgb8Image::new(CANVAS, CANVAS);
        img.fill([20, 20, 20]);
        img.fill_rect(0, 0, self.n * CELL, self.n * CELL, [90, 90, 90]);
        img.fill_rect(
            self.goal.0 * CELL,
            self.goal.1 * CELL,
            CELL,
            CELL,
            self.colours.1,
        );
        img.fill_rect(
            self.agent.0 * CELL + 1,
            self.agent.1 * CELL + 1,
            CELL - 2,
            CELL - 2,
            self.colours.0,
        );
        let mut grid = String::new();
        for y in 0..self.n {
            for x in 0..self.n {
                grid.push(if (x, y) == self.agent {
                    'A'
                } else if (x, y) == self.goal {
                    'G'
                } else {
                    '.'
                });
            }
            grid.push('\n');
        }
        let mut harness = HarnessText {
            observation: Some(grid),
            state: Some(format!(
                "agent at ({},{}) goal at ({},{})",
                self.agent.0, self.agent.1, self.goal.0, self.goal.1
            )),
            hints: Some(format!("press {}", self.best_action())),
            rules: Some(if self.mirrored {
                "controls are mirrored: up moves down, left moves right".into()
            } else {
                "up down left right move the agent".into()
            }),
        };
        if let Some(t) = &self.task {
            harness.apply_level(t.harness, &HarnessSchedule::default());
        }
        Observation {
            image: img,
            instruction: self.spec.instruction.clone(),
            harness,
        }
    }
}

fn mirror(a: ActionId) -> ActionId {
    match a {
        ActionId::UP => ActionId::DOWN,
        ActionId::DOWN => ActionId::UP,
        ActionId::LEFT => ActionId::RIGHT,
        ActionId::RIGHT => ActionId::LEFT,
        other => other,
    }
}

impl Env for GoalGrid {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn reset(&mut self, task: &Task) -> Observation {
        let mut rng = Rng::seed_from_u64(task.seed);
        self.n = task.scale.clamp(2, 4) as i32;
        let cells = (self.n * self.n) as u64;
        let a = rng.below(cells) as i32;
        let mut g = rng.below(cells - 1) as i32;
        if g >= a {
            g += 1;
        }
        self.agent = (a % self.n, a / self.n);
        self.goal = (g % self.n, g / self.n);
        self.task = Some(task.clone());
        self.steps = 0;
        self.observe()
    }

    fn step(&mut self, action: ActionId) -> Step {
        self.steps += 1;
        let a = if self.mirrored {
            mirror(action)
        } else {
            action
        };
        if let Some((dx, dy)) = a.delta() {
            let (x, y) = (self.agent.0 + dx, self.agent.1 + dy);
            if (0..self.n).contains(&x) && (0..self.n).contains(&y) {
                self.agent = (x, y);
            }
        }
        let success = self.agent == self.goal;
        Step {
            observation: self.observe(),
            reward: if success { 1.0 } else { 0.0 },
            done: success,
            truncated: !success && self.steps >= self.spec.max_steps,
            success,
            abilities: vec!["navigate"],
            legal: self.legal_actions(),
        }
    }

    fn legal_actions(&self) -> ActionMask {
        ActionMask::NONE
            .with(ActionId::UP)
            .with(ActionId::DOWN)
            .with(ActionId::LEFT)
            .with(ActionId::RIGHT)
    }

    fn oracle_action(&mut self) -> Option<ActionId> {
        Some(self.best_action())
    }
}

/// Makes the three toy variants.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToyFactory;

impl EnvFactory for ToyFactory {
    fn specs(&self) -> Vec<EnvSpec> {
        ["goal", "goal-theme", "goal-mirrored"]
            .iter()
            .map(|v| spec(v))
            .collect()
    }

    fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv> {
        id.as_str()
            .strip_prefix("toy/")
            .and_then(GoalGrid::new)
            .map(|g| Box::new(g) as Box<dyn Env>)
            .ok_or_else(|| UnknownEnv(id.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::HarnessLevel;

    #[test]
    fn oracle_solves_and_mirror_inverts_controls() {
        for variant in ["goal", "goal-mirrored", "goal-theme"] {
            let mut env = GoalGrid::new(variant).unwrap();
            for seed in 0..20 {
                let task = Task {
                    env: env.spec().id.clone(),
                    seed,
                    harness: HarnessLevel::H0,
                    scale: 4,
                };
                env.reset(&task);
                let mut solved = false;
                for _ in 0..12 {
                    let a = env.oracle_action().unwrap();
                    if env.step(a).success {
                        solved = true;
                        break;
                    }
                }
                assert!(solved, "{variant} seed {seed}");
            }
        }
        let task = |env: &str| Task {
            env: EnvId::new(env),
            seed: 3,
            harness: HarnessLevel::H4,
            scale: 3,
        };
        let mut a = GoalGrid::new("goal").unwrap();
        let mut b = GoalGrid::new("goal-mirrored").unwrap();
        let (oa, ob) = (
            a.reset(&task("toy/goal")),
            b.reset(&task("toy/goal-mirrored")),
        );
        assert_eq!(oa.image, ob.image, "twins share pixels");
        assert!(oa.harness.is_empty());
    }
}
