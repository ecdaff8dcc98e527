//! [`SuiteEnv`]: the one [`Env`] implementation; it wraps a family's game logic with the
//! variant's look, observation change and control mapping, the harness text, the horizon and
//! the reward scheme.

use std::sync::Arc;

use envdist_core::{
    ActionId, ActionMask, AnswerVocabulary, Env, EnvSpec, HarnessChannel, HarnessLevel,
    HarnessSchedule, HarnessText, Observation, Rgb8Image, Rng, Step, Task, Turn,
};

use crate::render::{Grid, HintStyle, Renderer, Theme};

/// How an episode stands after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Still going.
    Running,
    /// Solved: reward 1.
    Won,
    /// Failed by the rules (wrong answer, hazard, ...): reward 0.
    Lost,
}

/// A family's game logic. Games draw semantic cells; the wrapper does pixels, text levels,
/// the horizon and rewards, so a family is only its rules, its solver and its texts.
pub(crate) trait Game: Send {
    /// Start an episode at `scale` (already clamped into the family's range).
    fn reset(&mut self, rng: &mut Rng, scale: u32);
    /// Apply an action (already mapped through the variant's controls). Push ability tags.
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status;
    /// Legal actions now (in game coordinates).
    fn legal(&self) -> ActionMask;
    /// The solver's action now (in game coordinates).
    fn oracle(&mut self) -> ActionId;
    /// Draw the state.
    fn draw(&self, g: &mut Grid);
    /// Agent cell, for the egocentric crop.
    fn agent(&self) -> Option<(i32, i32)> {
        None
    }
    /// Text state channel.
    fn state_text(&self, out: &mut String);
    /// Game-specific hint of the [`HintStyle::Action`] style (single-turn: the answer's
    /// evidence; multi-turn: optional extra beyond the solver's next move, which the wrapper
    /// adds).
    fn hint(&mut self, _out: &mut String) {}
    /// The [`HintStyle::Subgoal`] hint: a subgoal (multi-turn) or what to look at and how
    /// (single-turn), short and computed from the state. It must never name an action (no
    /// direction word, `interact`, `wait` or `answer_k`) nor, single-turn, the answer, and
    /// must not be empty while the episode runs. No default on purpose: every family has
    /// something better than a generic line, and a default that fell back on [`Game::hint`]
    /// would leak the answer of a single-turn family that forgot to override it.
    fn subgoal(&mut self, out: &mut String);
    /// Rules channel (legend of the text observation included).
    fn rules(&self, out: &mut String);
    /// What the answer actions mean now, in the words the instruction and the rules use
    /// (single-turn families; multi-turn moves mean only their names). Read-only: declaring a
    /// vocabulary draws nothing and changes no observation.
    fn answers(&self, _out: &mut AnswerVocabulary) {}
    /// Step limit at `scale`.
    fn horizon(&self, scale: u32) -> u32;
}

/// Observation change of a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObsMod {
    /// Plain frame.
    Plain,
    /// Light per-pixel noise, fresh every step (deterministic from the seed).
    Noise,
    /// A checkered square a quarter of the canvas wide covers part of the frame, placed per
    /// episode.
    Occlude,
    /// Egocentric crop: a 5x5-cell window centred on the agent.
    Ego,
}

/// Everything that distinguishes one variant of a family.
#[derive(Debug, Clone)]
pub(crate) struct VariantCfg {
    pub theme: Theme,
    pub obs: ObsMod,
    /// Left and right are swapped (a mirrored-controls conflict twin).
    pub mirror: bool,
}

fn mirror(a: ActionId) -> ActionId {
    match a {
        ActionId::LEFT => ActionId::RIGHT,
        ActionId::RIGHT => ActionId::LEFT,
        other => other,
    }
}

fn mirror_mask(m: ActionMask) -> ActionMask {
    let l = m.contains(ActionId::LEFT);
    let r = m.contains(ActionId::RIGHT);
    let mut out = m.without(ActionId::LEFT).without(ActionId::RIGHT);
    if l {
        out = out.with(ActionId::RIGHT);
    }
    if r {
        out = out.with(ActionId::LEFT);
    }
    out
}

/// Compact result of one step, without the observation (used by [`crate::VecEnv`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StepInfo {
    /// Reward of the step.
    pub reward: f32,
    /// Ended by the rules.
    pub done: bool,
    /// Hit the horizon.
    pub truncated: bool,
    /// Ended solved.
    pub success: bool,
    /// Ability tags exercised.
    pub abilities: Vec<&'static str>,
    /// Legal actions now.
    pub legal: ActionMask,
}

/// One environment of the suite. Made by [`crate::Suite`]; implements [`Env`].
///
/// Out-of-range scales are clamped into the declared range (the [`Env`] trait cannot fail);
/// [`SuiteEnv::scale`] reports the scale actually played.
pub struct SuiteEnv {
    spec: Arc<EnvSpec>,
    variant: VariantCfg,
    game: Box<dyn Game>,
    schedule: HarnessSchedule,
    hint_style: HintStyle,
    grid: Grid,
    renderer: Renderer,
    img: Rgb8Image,
    rng: Rng,
    harness: HarnessLevel,
    scale: u32,
    steps: u32,
    horizon: u32,
    finished: bool,
    occlusion: (i32, i32),
    noise_state: u64,
    rules_cache: String,
    /// The solver's action for the current state (game coordinates), computed at most once
    /// per state: hints and an oracle policy both ask for it.
    oracle_cache: Option<ActionId>,
}

impl SuiteEnv {
    pub(crate) fn new(
        spec: Arc<EnvSpec>,
        variant: VariantCfg,
        game: Box<dyn Game>,
        canvas: u32,
        schedule: HarnessSchedule,
        hint_style: HintStyle,
    ) -> Self {
        let mut env = Self {
            spec,
            variant,
            game,
            schedule,
            hint_style,
            grid: Grid::new(),
            renderer: Renderer::default(),
            img: Rgb8Image::new(canvas, canvas),
            rng: Rng::seed_from_u64(0),
            harness: HarnessLevel::H0,
            scale: 0,
            steps: 0,
            horizon: 1,
            finished: true,
            occlusion: (0, 0),
            noise_state: 1,
            rules_cache: String::new(),
            oracle_cache: None,
        };
        let task = Task {
            env: env.spec.id.clone(),
            seed: 0,
            harness: HarnessLevel::H4,
            scale: env.spec.scale.min,
        };
        env.reset_fast(&task);
        env
    }

    /// The scale actually played (the task's scale clamped into the declared range).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// What the `hints` channel says (the suite's [`crate::SuiteConfig::hint_style`]).
    pub fn hint_style(&self) -> HintStyle {
        self.hint_style
    }

    /// Steps taken in this episode.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The step limit of this episode.
    pub fn horizon(&self) -> u32 {
        self.horizon
    }

    /// The current frame.
    pub fn frame(&self) -> &Rgb8Image {
        &self.img
    }

    /// Start an episode without building the text channels (the fast path of [`crate::VecEnv`]).
    pub fn reset_fast(&mut self, task: &Task) {
        let r = self.spec.scale;
        self.scale = task.scale.clamp(r.min, r.max);
        self.harness = task.harness;
        self.rng = Rng::derive(task.seed, 0x5eed);
        self.game.reset(&mut self.rng, self.scale);
        self.horizon = self.game.horizon(self.scale).max(1);
        self.steps = 0;
        self.finished = false;
        let canvas = self.img.width as i32;
        let side = canvas / 4;
        self.occlusion = (
            self.rng.below((canvas - side + 1) as u64) as i32,
            self.rng.below((canvas - side + 1) as u64) as i32,
        );
        self.noise_state = task.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        self.rules_cache.clear();
        self.oracle_cache = None;
        self.redraw();
    }

    /// Apply one action without building the observation (the fast path of [`crate::VecEnv`]).
    /// After the episode ended, further steps are no-ops with zero reward.
    pub fn step_fast(&mut self, action: ActionId) -> StepInfo {
        if self.finished {
            return StepInfo {
                reward: 0.0,
                done: true,
                truncated: false,
                success: false,
                abilities: Vec::new(),
                legal: ActionMask::NONE,
            };
        }
        let a = if self.variant.mirror {
            mirror(action)
        } else {
            action
        };
        self.oracle_cache = None;
        let mut tags = Vec::with_capacity(4);
        let status = if self.game.legal().contains(a) {
            self.game.step(a, &mut self.rng, &mut tags)
        } else {
            Status::Running
        };
        self.steps += 1;
        if !tags.is_empty() {
            match self.variant.obs {
                ObsMod::Plain => {}
                ObsMod::Noise => tags.push("noise-robust"),
                ObsMod::Occlude => tags.push("occlusion-robust"),
                ObsMod::Ego => tags.push("egocentric-view"),
            }
            if self.variant.mirror && a.delta().is_some() {
                tags.push("mirrored-control");
            }
        }
        let done = status != Status::Running;
        let truncated = !done && self.steps >= self.horizon;
        self.finished = done || truncated;
        let success = status == Status::Won;
        self.redraw();
        StepInfo {
            reward: if success { 1.0 } else { 0.0 },
            done,
            truncated,
            success,
            abilities: tags,
            legal: if self.finished {
                ActionMask::NONE
            } else {
                self.legal_actions()
            },
        }
    }

    fn redraw(&mut self) {
        self.game.draw(&mut self.grid);
        let theme = self.variant.theme;
        match (self.variant.obs, self.game.agent()) {
            (ObsMod::Ego, Some((ax, ay))) => {
                self.renderer
                    .render_window(&self.grid, &theme, &mut self.img, ax - 2, ay - 2, 5, 5)
            }
            _ => self.renderer.render(&self.grid, &theme, &mut self.img),
        }
        match self.variant.obs {
            ObsMod::Noise => {
                // xorshift64: cheap, and deterministic from the seed and the step count.
                let mut s = self.noise_state ^ (self.steps as u64).wrapping_mul(0x2545_F491);
                for chunk in self.img.data.chunks_mut(8) {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    for (i, b) in chunk.iter_mut().enumerate() {
                        let n = ((s >> (i * 8)) & 31) as i16 - 16;
                        *b = (*b as i16 + n).clamp(0, 255) as u8;
                    }
                }
            }
            ObsMod::Occlude => {
                // A 2-pixel checkerboard: unmistakably an occluder, never a wall or an object.
                let side = self.img.width as i32 / 4;
                let (x0, y0) = self.occlusion;
                for y in y0..y0 + side {
                    for x in x0..x0 + side {
                        let light = ((x - x0) / 2 + (y - y0) / 2) % 2 == 0;
                        let v = if light { 170 } else { 60 };
                        self.img.put(x, y, [v, v, v]);
                    }
                }
            }
            _ => {}
        }
    }

    /// The harness text of the current state at the episode's level; only the channels that
    /// survive the level are generated.
    pub fn harness_text(&mut self) -> HarnessText {
        let keep = |c| self.schedule.keeps(self.harness, c);
        let (ko, ks, kh, kr) = (
            keep(HarnessChannel::Observation),
            keep(HarnessChannel::State),
            keep(HarnessChannel::Hints),
            keep(HarnessChannel::Rules),
        );
        let mut text = HarnessText::default();
        if ko {
            let mut s = String::with_capacity(self.grid.w * (self.grid.h + 1));
            self.grid.text(&mut s);
            text.observation = Some(s);
        }
        if ks {
            let mut s = String::new();
            self.game.state_text(&mut s);
            if self.spec.turn == Turn::Multi {
                s.push_str(&format!("; step {} of {}", self.steps, self.horizon));
            }
            text.state = Some(s);
        }
        if kh {
            let mut s = String::new();
            if self.finished {
                s.push_str("the episode is over");
            } else if self.hint_style == HintStyle::Subgoal {
                // The subgoal does not depend on the solver's action; families that need the
                // solver's plan (a plan length) consult it themselves.
                self.game.subgoal(&mut s);
            } else if self.spec.turn == Turn::Multi {
                let a = self.oracle_action().unwrap_or(ActionId::WAIT);
                s.push_str("next action: ");
                s.push_str(&a.name());
                let mut extra = String::new();
                self.game.hint(&mut extra);
                if !extra.is_empty() {
                    s.push_str("; ");
                    s.push_str(&extra);
                }
            } else {
                self.game.hint(&mut s);
            }
            text.hints = Some(s);
        }
        if kr {
            if self.rules_cache.is_empty() {
                self.game.rules(&mut self.rules_cache);
                if self.variant.mirror {
                    self.rules_cache.push_str(
                        " Controls are mirrored: the action `left` moves right and `right` moves left.",
                    );
                }
                if self.variant.obs == ObsMod::Ego {
                    self.rules_cache.push_str(
                        " You see only the 5x5 cells around you; the text shows the whole grid.",
                    );
                }
            }
            text.rules = Some(self.rules_cache.clone());
        }
        text
    }

    fn observation(&mut self) -> Observation {
        Observation {
            image: self.img.clone(),
            instruction: self.spec.instruction.clone(),
            harness: self.harness_text(),
        }
    }
}

impl Env for SuiteEnv {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn reset(&mut self, task: &Task) -> Observation {
        self.reset_fast(task);
        self.observation()
    }

    fn step(&mut self, action: ActionId) -> Step {
        let info = self.step_fast(action);
        Step {
            observation: self.observation(),
            reward: info.reward,
            done: info.done,
            truncated: info.truncated,
            success: info.success,
            abilities: info.abilities,
            legal: info.legal,
        }
    }

    fn legal_actions(&self) -> ActionMask {
        if self.finished {
            return ActionMask::NONE;
        }
        let m = self.game.legal();
        if self.variant.mirror {
            mirror_mask(m)
        } else {
            m
        }
    }

    fn oracle_action(&mut self) -> Option<ActionId> {
        if self.finished {
            return None;
        }
        let a = match self.oracle_cache {
            Some(a) => a,
            None => {
                let a = self.game.oracle();
                self.oracle_cache = Some(a);
                a
            }
        };
        Some(if self.variant.mirror { mirror(a) } else { a })
    }

    /// The game's answers. Mirrored controls swap the moves, never an answer slot, so the
    /// vocabulary needs no mapping.
    fn answer_vocabulary(&self) -> AnswerVocabulary {
        let mut v = AnswerVocabulary::default();
        self.game.answers(&mut v);
        v
    }
}
