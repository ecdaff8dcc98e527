//! Bet 2's first design: where is HDC's regime? A base evaluated greedily on every pool env at
//! its smallest, middle and largest scale, bare (H4) and with every text channel (H0, the
//! study's subgoal hints, which never name the action); a setting (env, scale) is in the
//! regime where bare-pixel reward is scarce and the scaffold's is not.
//! `cargo xtask bet scaffold-settings`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use envdist_core::{EnvId, HarnessLevel};
use envdist_envs::{Suite, SuiteConfig};
use envdist_trainer::PolicyModel;
use serde::{Deserialize, Serialize};

use super::BET_SCHEMA_VERSION;
use crate::config::{EvalConfig, ExperimentConfig, Preset};
use crate::error::Result;
use crate::stages::eval::evaluate_at;

/// The pre-registered regime: bare-pixel success at most this...
pub const REGIME_H4_MAX: f32 = 0.05;
/// ...and scaffolded success at least this.
pub const REGIME_H0_MIN: f32 = 0.20;
/// Settings a trained design needs, and the families they must span.
pub const MIN_SETTINGS: usize = 8;
/// See [`MIN_SETTINGS`].
pub const MIN_FAMILIES: usize = 2;

/// What the search evaluates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaffoldSearch {
    /// The base's checkpoint directory (a study run's `base/checkpoint`).
    pub base: PathBuf,
    /// Development instances per env, scale and level.
    pub episodes: u32,
}

/// One env at one scale.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setting {
    /// The environment.
    pub env: EnvId,
    /// Its family.
    pub family: String,
    /// The scale.
    pub scale: u32,
    /// Greedy success with every text channel.
    pub h0: f32,
    /// Greedy success on bare pixels.
    pub h4: f32,
}

impl Setting {
    /// Whether the setting is in the pre-registered regime.
    pub fn in_regime(&self) -> bool {
        self.h4 <= REGIME_H4_MAX && self.h0 >= REGIME_H0_MIN
    }
}

/// What the search found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaffoldResults {
    /// [`BET_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What was evaluated.
    pub search: ScaffoldSearch,
    /// Every setting, pool order then scale.
    pub settings: Vec<Setting>,
    /// Settings bare-pixel reward is scarce in (H4 at most [`REGIME_H4_MAX`]), whatever H0.
    pub scarce: usize,
    /// The settings in the regime.
    pub in_regime: Vec<Setting>,
    /// Families they span.
    pub families: usize,
    /// `go` (a trained design has settings to act on) or `no-go`.
    pub decision: String,
    /// Wall seconds.
    pub seconds: f64,
}

/// Evaluate the base and write results.json and REPORT.md into `out`.
pub fn run_scaffold_search(search: &ScaffoldSearch, out: &Path) -> Result<ScaffoldResults> {
    let started = Instant::now();
    let mut cfg = ExperimentConfig::preset(Preset::Cpu);
    cfg.protocol.split = crate::protocol::Split::Development;
    let suite = Arc::new(Suite::new(SuiteConfig {
        hint_style: cfg.suite.hint_style,
        ..SuiteConfig::with_canvas(cfg.suite.canvas)
    })?);
    let base = PolicyModel::load(&search.base, cfg.device)?;
    let pool: Vec<EnvId> = suite.pool_specs().into_iter().map(|s| s.id).collect();
    let eval = EvalConfig {
        episodes: search.episodes,
        ..cfg.evaluation()
    };
    let h0 = evaluate_at(&eval, &suite, &pool, &base, HarnessLevel::H0)?;
    let h4 = evaluate_at(&eval, &suite, &pool, &base, HarnessLevel::H4)?;
    let mut settings = Vec::new();
    for env in &pool {
        let Some(spec) = suite.spec(env) else {
            continue;
        };
        for (k, choice) in eval.scales.iter().enumerate() {
            settings.push(Setting {
                env: env.clone(),
                family: spec.family.clone(),
                scale: choice.for_spec(spec),
                h0: h0.per_env[env][k],
                h4: h4.per_env[env][k],
            });
        }
    }
    let in_regime: Vec<Setting> = settings.iter().filter(|s| s.in_regime()).cloned().collect();
    let mut families: Vec<&str> = in_regime.iter().map(|s| s.family.as_str()).collect();
    families.sort_unstable();
    families.dedup();
    let go = in_regime.len() >= MIN_SETTINGS && families.len() >= MIN_FAMILIES;
    let results = ScaffoldResults {
        schema_version: BET_SCHEMA_VERSION,
        search: search.clone(),
        scarce: settings.iter().filter(|s| s.h4 <= REGIME_H4_MAX).count(),
        families: families.len(),
        in_regime,
        settings,
        decision: if go { "go" } else { "no-go" }.into(),
        seconds: started.elapsed().as_secs_f64(),
    };
    envdist_core::io::write_json_atomic(out.join("results.json"), &results)?;
    envdist_core::io::write_atomic(out.join("REPORT.md"), report(&results).as_bytes())?;
    Ok(results)
}

/// A short markdown page: the counts, the decision and the settings nearest the regime.
fn report(r: &ScaffoldResults) -> String {
    let mut nearest: Vec<&Setting> = r
        .settings
        .iter()
        .filter(|s| s.h4 <= REGIME_H4_MAX)
        .collect();
    nearest.sort_by(|a, b| b.h0.total_cmp(&a.h0));
    let rows: String = nearest
        .iter()
        .take(10)
        .map(|s| {
            format!(
                "| {} | {} | {:.1} | {:.1} |\n",
                s.env,
                s.scale,
                100.0 * s.h0,
                100.0 * s.h4
            )
        })
        .collect();
    format!(
        "# Bet 2, design s1: {}\n\n\
         {} settings (pool env x smallest, middle, largest scale), {} development instances \
         each at H0 and H4; {:.0} s.\n\n\
         - bare-pixel reward scarce (H4 <= {:.0}%): {} settings\n\
         - in the regime (also H0 >= {:.0}%): {} settings from {} families (a trained design \
         needs {MIN_SETTINGS} from {MIN_FAMILIES})\n\n\
         The scarce settings with the most scaffolded reward:\n\n\
         | env | scale | H0 % | H4 % |\n|---|---|---|---|\n{rows}",
        r.decision,
        r.settings.len(),
        r.search.episodes,
        r.seconds,
        100.0 * REGIME_H4_MAX,
        r.scarce,
        100.0 * REGIME_H0_MIN,
        r.in_regime.len(),
        r.families,
    )
}

/// Where `cargo xtask bet scaffold-settings` writes by default.
pub fn default_out() -> PathBuf {
    PathBuf::from("runs/bet-scaffold-s1")
}
