//! Every knob of the world, with its default and why. Build with `..Default::default()` and
//! check once with [`Validate`]; the generator and the learner only ever see checked values.

use envdist_core::{InvalidValue, Validate};
use serde::{Deserialize, Serialize};

/// The world's knobs. Three groups: the pool's structure (families, abilities, twins,
/// scales), the learner (how training on an environment moves success everywhere), and what
/// an experimenter observes (the annotator's profiles, the sampled gradients).
///
/// An environment's skill is a unit vector over the learner's parameters, split in shares
/// that sum to at most 1: `transfer` on the abilities it requires (shared with every
/// environment that requires them), `family_share` on its family's task (shared with its
/// family only, never annotated), `trunk` on one component shared by all, and the rest
/// private to the environment. Training on an environment moves another one by the inner
/// product of their vectors (the world's true transfer, which is also the cosine of their
/// exact gradients), less `interference` per unit of learning spent elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldConfig {
    /// Families (tasks). Default 16: enough that a selection of a sixth of the pool must
    /// leave families out, as the paper's 30 of 200 must.
    pub families: usize,
    /// Environments per family (variants: `classic`, themes, and the rule-inverted twin where
    /// the family has one). Default 4: a pool of 64 at the default families.
    pub variants: usize,
    /// Abilities in the annotator's vocabulary. Default 24: about the paper's 72 abilities
    /// over 200 environments, scaled to a pool of 64.
    pub abilities: usize,
    /// Fewest abilities a family requires. Default 2.
    pub min_family_abilities: usize,
    /// Most abilities a family requires. Default 4 (the record's environments carry 2-5
    /// meta-abilities).
    pub max_family_abilities: usize,
    /// Popularity skew of the abilities: a family draws ability `i` with weight
    /// `1 / (1 + i)^skew`. Default 1.0 (Zipf: a few abilities, such as navigation, are
    /// common; most are rare, as in any annotated pool).
    pub ability_skew: f32,
    /// Share of families with a rule-inverted twin (one variant with the same abilities and
    /// an opposed direction on some). Default 0.5 (the record's pool: 14 designed twin pairs
    /// over 24 families).
    pub twin_fraction: f32,
    /// Share of its family's abilities a twin inverts (at least one; the family's task is
    /// always inverted). Default 0.5: "an opposed direction on some".
    pub twin_inverted_share: f32,
    /// Scales run `1..=scale_max`. Default 5: HDC's two windows per level of three and two
    /// scales, and a middle scale (3) half-way, as evaluation's middle is.
    pub scale_max: u32,

    /// Share of an environment's skill carried by its annotated abilities: transfer along
    /// shared abilities, the premise of AES's coverage term. Default 0.5 (the premise holds:
    /// half of what an environment teaches is reusable wherever its abilities recur).
    pub transfer: f32,
    /// Share carried by its family's task (shared within the family, invisible to the
    /// annotator). Default 0.2: variants of one task share more than its named abilities.
    pub family_share: f32,
    /// Share carried by one trunk component common to every environment (positive transfer
    /// to everything). Default 0 (off): the record measures no general gain from a fine-tune.
    pub trunk: f32,
    /// Share of each ability (and of the family's task) that is directional: a twin moves it
    /// the opposite way. At 0 a twin is a harmless variant; at 1 its inverted abilities
    /// cancel the original's. Default 0.5 (the premise of the conflict term: multimodal rule
    /// variants are polarised).
    pub conflict: f32,
    /// Logit an environment loses, at most, to training that does not do its work (other
    /// families' episodes, less the share of its abilities they require): a finite learner
    /// drifts away from what it does not use (a linear kernel alone cannot make a fine-tune
    /// cost unrelated tasks on average). Default 0 (off).
    pub interference: f32,
    /// Unrelated episodes (each weighted by the share of the environment's work it did not
    /// do) after which an environment has lost 63% of `interference`: drift is bounded, as a KL
    /// penalty to the base bounds it (the record's arms trained 30 probes' worth of steps and
    /// ended 0.06-0.30 nats from the base). Default 800, one probe (the episodes one
    /// environment gets in a default arm of `xtask world-map`).
    pub interference_episodes: f32,
    /// Episodes on an environment's family (itself included) after which its drift is down to
    /// 37% (`exp(-episodes / protection_episodes)`).
    /// Default 80, a tenth of `interference_episodes`: training optimises what it plays, so
    /// practice restores what drift takes far faster than unrelated training erodes it (in the
    /// record an arm's trained environments gained more, +8.6 to +12.3, than a probe alone,
    /// +7.5, on as many steps each).
    pub protection_episodes: f32,
    /// Logit gained per episode at success `p`: `learning_rate * p * (1 - p)` along the
    /// environment's skill vector (the expected policy-gradient step of a binary reward, so
    /// returns diminish near 0 and 1 success). Default 0.01.
    pub learning_rate: f32,
    /// Episodes of practice on one environment after which a step on it is worth half the
    /// first: each step is divided by `1 + played / saturation` (diminishing returns of
    /// repeating one environment, on top of the `p (1 - p)` of success near 1). Default 800,
    /// the episodes each environment of a default selection gets (`xtask world-map`'s
    /// budget over its `k`): its last episode teaches half what its first did.
    pub saturation: f32,
    /// Mean base logit at H4 and the smallest scale. Default -1.0 (27% success).
    pub base_logit: f32,
    /// Standard deviation of a family's base logit. Default 1.5: some families near the
    /// floor, some solved most of the time, as in the record's base.
    pub family_spread: f32,
    /// Standard deviation of a variant's base logit around its family's. Default 0.5.
    pub variant_spread: f32,
    /// Logit lost from the smallest to the largest scale. Default 1.0.
    pub scale_difficulty: f32,
    /// Shape of that loss: at a fraction `f` of the way from the smallest scale to the
    /// largest, `scale_difficulty * f^scale_curve` is lost. Default 1 (linear); below 1 the
    /// first steps up in scale cost most.
    pub scale_curve: f32,
    /// Logit the full harness (H0) adds over bare pixels (H4), linear in the level. Default
    /// 0.5.
    pub scaffold: f32,
    /// Further logit lost at H4 only (`h4_scarcity * level / 4` at a level): how scarce
    /// reward is on bare pixels while the harness still gives signal. Default 0 (the
    /// record's base succeeds about half the time on bare single-turn images).
    pub h4_scarcity: f32,
    /// Share of what is learnt at a scaffolded level (H0-H3) that carries to H4; the rest
    /// becomes skill that helps only while the harness is there. Default 0.8.
    pub carry_over: f32,

    /// The annotator's noise: it misses each true ability with this probability and invents
    /// this many wrong ones per true one (on average). Default 0.1.
    pub annotator_noise: f32,
    /// Noise of an observed gradient, as its norm over the exact gradient's for an
    /// environment at 50% success (lower success: noisier, as a policy gradient's variance
    /// goes with `p (1 - p)` and its mean with `p (1 - p)` too). Default 0.5.
    pub gradient_noise: f32,
    /// Share of an observed gradient's signal that is the exact gradient; the rest is a fixed
    /// direction of the environment's own (the same in every draw: reliable, yet unrelated
    /// to transfer), as a real network's gradient holds directions that move nothing else a
    /// selection cares about. Default 1: the premise of the conflict term.
    pub gradient_relevance: f32,
    /// Episodes an observed gradient is taken from; an environment that none of them solves
    /// (or all of them) gives an exactly zero row, as a real estimator with a mean baseline
    /// does. Default 128 (the study's `gradients.rollouts_per_env`).
    pub gradient_episodes: u32,
}

impl Default for WorldConfig {
    fn default() -> Self {
        Self {
            families: 16,
            variants: 4,
            abilities: 24,
            min_family_abilities: 2,
            max_family_abilities: 4,
            ability_skew: 1.0,
            twin_fraction: 0.5,
            twin_inverted_share: 0.5,
            scale_max: 5,
            transfer: 0.5,
            family_share: 0.2,
            trunk: 0.0,
            conflict: 0.5,
            interference: 0.0,
            interference_episodes: 800.0,
            protection_episodes: 80.0,
            learning_rate: 0.01,
            saturation: 800.0,
            base_logit: -1.0,
            family_spread: 1.5,
            variant_spread: 0.5,
            scale_difficulty: 1.0,
            scale_curve: 1.0,
            scaffold: 0.5,
            h4_scarcity: 0.0,
            carry_over: 0.8,
            annotator_noise: 0.1,
            gradient_noise: 0.5,
            gradient_relevance: 1.0,
            gradient_episodes: 128,
        }
    }
}

/// The knobs a sweep may set by name (`transfer=0.3`), with their values as `f32`.
pub const KNOBS: [&str; 22] = [
    "transfer",
    "family_share",
    "trunk",
    "conflict",
    "interference",
    "interference_episodes",
    "protection_episodes",
    "learning_rate",
    "saturation",
    "base_logit",
    "family_spread",
    "variant_spread",
    "scale_difficulty",
    "scale_curve",
    "scaffold",
    "h4_scarcity",
    "carry_over",
    "annotator_noise",
    "gradient_noise",
    "gradient_relevance",
    "twin_fraction",
    "ability_skew",
];

impl WorldConfig {
    /// The knob `name` (one of [`KNOBS`]).
    fn knob_mut(&mut self, name: &str) -> Result<&mut f32, InvalidValue> {
        Ok(match name {
            "transfer" => &mut self.transfer,
            "family_share" => &mut self.family_share,
            "trunk" => &mut self.trunk,
            "conflict" => &mut self.conflict,
            "interference" => &mut self.interference,
            "interference_episodes" => &mut self.interference_episodes,
            "protection_episodes" => &mut self.protection_episodes,
            "learning_rate" => &mut self.learning_rate,
            "saturation" => &mut self.saturation,
            "base_logit" => &mut self.base_logit,
            "family_spread" => &mut self.family_spread,
            "variant_spread" => &mut self.variant_spread,
            "scale_difficulty" => &mut self.scale_difficulty,
            "scale_curve" => &mut self.scale_curve,
            "scaffold" => &mut self.scaffold,
            "h4_scarcity" => &mut self.h4_scarcity,
            "carry_over" => &mut self.carry_over,
            "annotator_noise" => &mut self.annotator_noise,
            "gradient_noise" => &mut self.gradient_noise,
            "gradient_relevance" => &mut self.gradient_relevance,
            "twin_fraction" => &mut self.twin_fraction,
            "ability_skew" => &mut self.ability_skew,
            _ => {
                return Err(InvalidValue::new(
                    "knob",
                    format!("one of {}", KNOBS.join(", ")),
                    format!("{name:?}"),
                ));
            }
        })
    }

    /// The value of the knob `name`.
    pub fn knob(&self, name: &str) -> Result<f32, InvalidValue> {
        self.clone().knob_mut(name).map(|v| *v)
    }

    /// This configuration with the knob `name` set to `value` (not validated: call
    /// [`Validate::validate`] after the last change).
    pub fn with_knob(mut self, name: &str, value: f32) -> Result<Self, InvalidValue> {
        *self.knob_mut(name)? = value;
        Ok(self)
    }

    /// The share of an environment's skill private to it: what the other shares leave.
    pub fn private_share(&self) -> f32 {
        (1.0 - self.transfer - self.family_share - self.trunk).max(0.0)
    }
}

fn finite(field: &str, v: f32) -> Result<(), InvalidValue> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(InvalidValue::new(field, "a finite number", v))
    }
}

fn unit(field: &str, v: f32) -> Result<(), InvalidValue> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(InvalidValue::new(field, "a number in [0, 1]", v))
    }
}

fn non_negative(field: &str, v: f32) -> Result<(), InvalidValue> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(InvalidValue::new(field, "a finite non-negative number", v))
    }
}

impl Validate for WorldConfig {
    fn validate(&self) -> Result<(), InvalidValue> {
        if self.families == 0 {
            return Err(InvalidValue::new("families", "at least 1", self.families));
        }
        if self.variants < 2 {
            return Err(InvalidValue::new(
                "variants",
                "at least 2 (a family and its twin)",
                self.variants,
            ));
        }
        if self.min_family_abilities == 0 {
            return Err(InvalidValue::new(
                "min_family_abilities",
                "at least 1",
                self.min_family_abilities,
            ));
        }
        if self.max_family_abilities < self.min_family_abilities {
            return Err(InvalidValue::new(
                "max_family_abilities",
                format!(
                    "at least min_family_abilities ({})",
                    self.min_family_abilities
                ),
                self.max_family_abilities,
            ));
        }
        if self.abilities < self.max_family_abilities {
            return Err(InvalidValue::new(
                "abilities",
                format!(
                    "at least max_family_abilities ({})",
                    self.max_family_abilities
                ),
                self.abilities,
            ));
        }
        if self.scale_max == 0 {
            return Err(InvalidValue::new("scale_max", "at least 1", self.scale_max));
        }
        if self.gradient_episodes < 2 {
            return Err(InvalidValue::new(
                "gradient_episodes",
                "at least 2 (two halves for the split-half reliability)",
                self.gradient_episodes,
            ));
        }
        for (name, v) in [
            ("twin_fraction", self.twin_fraction),
            ("twin_inverted_share", self.twin_inverted_share),
            ("transfer", self.transfer),
            ("family_share", self.family_share),
            ("trunk", self.trunk),
            ("conflict", self.conflict),
            ("carry_over", self.carry_over),
            ("gradient_relevance", self.gradient_relevance),
        ] {
            unit(name, v)?;
        }
        for (name, v) in [
            ("ability_skew", self.ability_skew),
            ("interference", self.interference),
            ("learning_rate", self.learning_rate),
            ("family_spread", self.family_spread),
            ("variant_spread", self.variant_spread),
            ("scale_difficulty", self.scale_difficulty),
            ("scaffold", self.scaffold),
            ("h4_scarcity", self.h4_scarcity),
            ("gradient_noise", self.gradient_noise),
        ] {
            non_negative(name, v)?;
        }
        finite("base_logit", self.base_logit)?;
        for (name, v) in [
            ("saturation", self.saturation),
            ("interference_episodes", self.interference_episodes),
            ("protection_episodes", self.protection_episodes),
            ("scale_curve", self.scale_curve),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(InvalidValue::new(
                    name,
                    "a finite positive number (a huge one to switch the effect off)",
                    v,
                ));
            }
        }
        if !(0.0..=10.0).contains(&self.annotator_noise) {
            return Err(InvalidValue::new(
                "annotator_noise",
                "a number in [0, 10] (misses are capped at certainty)",
                self.annotator_noise,
            ));
        }
        let shares = self.transfer + self.family_share + self.trunk;
        if shares > 1.0 + 1e-6 {
            return Err(InvalidValue::new(
                "transfer",
                format!(
                    "at most 1 - family_share - trunk = {} (the shares of a unit skill vector)",
                    1.0 - self.family_share - self.trunk
                ),
                self.transfer,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        WorldConfig::default().validate().unwrap();
        let e = WorldConfig {
            transfer: 0.9,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "transfer");
        assert!(e.expected.contains("0.8"), "{e}");
        let e = WorldConfig {
            conflict: f32::NAN,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "conflict");
        let e = WorldConfig::default()
            .with_knob("tranfer", 0.1)
            .unwrap_err();
        assert_eq!(e.field, "knob");
        assert!(e.found.contains("tranfer"));
        for knob in KNOBS {
            let c = WorldConfig::default().with_knob(knob, 0.125).unwrap();
            assert_eq!(c.knob(knob).unwrap(), 0.125, "{knob}");
        }
        let json: WorldConfig = serde_json::from_str(r#"{"transfer": 0.25}"#).unwrap();
        assert_eq!(json.transfer, 0.25);
        assert!(serde_json::from_str::<WorldConfig>(r#"{"transferr": 0.25}"#).is_err());
    }
}
