//! One solver episode written out for a person to look at: a PNG per frame, `contact.png` (the
//! first frames side by side), `episode.json` (every step with its harness text) and
//! `episode.md` (the same as readable text).

use std::path::Path;

use envdist_core::env::{EnvFactory, UnknownEnv};
use envdist_core::{ActionId, ActionMask, HarnessText, Observation, Rgb8Image, Step, Task};
use serde::{Deserialize, Serialize};

use super::InspectError;
use crate::{Suite, save_png};

/// Schema version of `episode.json`.
pub const EPISODE_SCHEMA_VERSION: u32 = 1;

/// Frames the contact sheet shows at most.
const CONTACT_FRAMES: usize = 12;

/// One step of a rendered episode (step 0 is the reset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeStep {
    /// Step number, 0 for the observation after reset.
    pub step: u32,
    /// The solver's action that led here (`None` at step 0).
    pub action: Option<ActionId>,
    /// Reward of that action.
    pub reward: f32,
    /// The episode ended by the rules.
    pub done: bool,
    /// The episode hit its step limit.
    pub truncated: bool,
    /// The episode ended solved.
    pub success: bool,
    /// Ability tags the action exercised.
    pub abilities: Vec<String>,
    /// Legal actions now, by name.
    pub legal: Vec<String>,
    /// The frame's file name in the output directory (`frame_NNN.png`).
    pub frame: String,
    /// The harness text channels at the task's level.
    pub harness: HarnessText,
}

/// `episode.json`: the task and every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeFile {
    /// Always [`EPISODE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The episode, replayable.
    pub task: Task,
    /// The environment's instruction.
    pub instruction: String,
    /// Step 0 (reset) and one entry per solver action.
    pub steps: Vec<EpisodeStep>,
}

/// What [`render_episode`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderSummary {
    /// Solver actions taken.
    pub steps: u32,
    /// The episode ended solved.
    pub solved: bool,
    /// Frames written (`steps + 1`).
    pub frames: usize,
}

/// Play the solver on `task` and write the episode into `out_dir`: `frame_NNN.png` per step,
/// `contact.png`, `episode.json` and `episode.md`. An unknown environment or a scale outside
/// its range is refused before anything is written.
pub fn render_episode(
    suite: &Suite,
    task: &Task,
    out_dir: &Path,
) -> Result<RenderSummary, InspectError> {
    let spec = suite
        .spec(&task.env)
        .ok_or_else(|| UnknownEnv(task.env.clone()))?;
    spec.scale.check(&task.env, task.scale)?;
    let mut env = suite.make(&task.env)?;
    let obs = env.reset(task);
    let mut frames = vec![obs.image.clone()];
    let mut steps = vec![record(0, None, None, &obs, env.legal_actions(), out_dir)?];
    let mut n = 0;
    let mut solved = false;
    while let Some(a) = env.oracle_action() {
        n += 1;
        let s = env.step(a);
        frames.push(s.observation.image.clone());
        steps.push(record(
            n,
            Some(a),
            Some(&s),
            &s.observation,
            s.legal,
            out_dir,
        )?);
        if s.done || s.truncated {
            solved = s.success;
            break;
        }
    }
    let file = EpisodeFile {
        schema_version: EPISODE_SCHEMA_VERSION,
        task: task.clone(),
        instruction: spec.instruction.clone(),
        steps,
    };
    envdist_core::io::write_json_atomic(out_dir.join("episode.json"), &file)?;
    if let Some(sheet) = contact_sheet(&frames) {
        save_png(&sheet, out_dir.join("contact.png"))?;
    }
    envdist_core::io::write_atomic(
        out_dir.join("episode.md"),
        episode_markdown(&file).as_bytes(),
    )?;
    Ok(RenderSummary {
        steps: n,
        solved,
        frames: frames.len(),
    })
}

/// Write step `n`'s frame and describe the step (`s` is `None` for the reset).
fn record(
    n: u32,
    action: Option<ActionId>,
    s: Option<&Step>,
    obs: &Observation,
    legal: ActionMask,
    out_dir: &Path,
) -> Result<EpisodeStep, InspectError> {
    let frame = format!("frame_{n:03}.png");
    save_png(&obs.image, out_dir.join(&frame))?;
    Ok(EpisodeStep {
        step: n,
        action,
        reward: s.map_or(0.0, |s| s.reward),
        done: s.is_some_and(|s| s.done),
        truncated: s.is_some_and(|s| s.truncated),
        success: s.is_some_and(|s| s.success),
        abilities: s.map_or_else(Vec::new, |s| {
            s.abilities.iter().map(|a| a.to_string()).collect()
        }),
        legal: legal.iter().map(|a| a.name()).collect(),
        frame,
        harness: obs.harness.clone(),
    })
}

/// `episode.md`: a heading with the task, then each step's action, reward, frame, the harness
/// channels present at its level and its ability tags.
pub fn episode_markdown(file: &EpisodeFile) -> String {
    let t = &file.task;
    let mut md = format!(
        "# {} seed {} scale {} {}\n\ninstruction: {}\n\n",
        t.env, t.seed, t.scale, t.harness, file.instruction
    );
    for s in &file.steps {
        md.push_str(&format!(
            "## step {} action {} -> reward {} ({})\n",
            s.step,
            s.action.map_or("-".into(), |a| a.name()),
            s.reward,
            s.frame
        ));
        for (name, text) in [
            ("observation", &s.harness.observation),
            ("state", &s.harness.state),
            ("hints", &s.harness.hints),
            ("rules", &s.harness.rules),
        ] {
            if let Some(t) = text {
                md.push_str(&format!("{name}:\n```\n{t}\n```\n"));
            }
        }
        if !s.abilities.is_empty() {
            md.push_str(&format!("abilities: {}\n", s.abilities.join(", ")));
        }
        md.push('\n');
    }
    md
}

/// Up to 12 frames side by side, scaled up to at least 128 pixels tall, separated by a white
/// line: one picture to look at a whole episode. `None` without frames.
pub fn contact_sheet(frames: &[Rgb8Image]) -> Option<Rgb8Image> {
    let frames = &frames[..frames.len().min(CONTACT_FRAMES)];
    let first = frames.first()?;
    let zoom = 128u32.div_ceil(first.height).max(1);
    let (fw, fh) = (first.width * zoom, first.height * zoom);
    let mut sheet = Rgb8Image::new((fw + 2) * frames.len() as u32, fh);
    sheet.fill([255, 255, 255]);
    for (k, f) in frames.iter().enumerate() {
        let x0 = k as u32 * (fw + 2);
        for y in 0..fh {
            for x in 0..fw {
                sheet.put((x0 + x) as i32, y as i32, f.get(x / zoom, y / zoom));
            }
        }
    }
    Some(sheet)
}

#[cfg(test)]
mod tests {
    use envdist_core::{EnvId, HarnessLevel};

    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("envdist-inspect-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn maze(scale: u32) -> Task {
        Task {
            env: EnvId::new("maze/classic"),
            seed: 3,
            harness: HarnessLevel::H0,
            scale,
        }
    }

    #[test]
    fn a_solved_episode_writes_every_frame_and_both_texts() {
        let dir = temp("render");
        let suite = Suite::with_canvas(32).unwrap();
        let summary = render_episode(&suite, &maze(2), &dir).unwrap();
        assert!(summary.solved && summary.steps >= 1);
        assert_eq!(summary.frames, summary.steps as usize + 1);
        for n in 0..summary.frames {
            assert!(dir.join(format!("frame_{n:03}.png")).exists(), "frame {n}");
        }
        let file: EpisodeFile =
            envdist_core::io::read_json(dir.join("episode.json"), Some(EPISODE_SCHEMA_VERSION))
                .unwrap();
        assert_eq!(file.steps.len(), summary.frames);
        assert_eq!(file.steps[0].action, None);
        assert!(file.steps.last().unwrap().success);
        let md = std::fs::read_to_string(dir.join("episode.md")).unwrap();
        assert_eq!(md, episode_markdown(&file));
        assert!(md.starts_with("# maze/classic seed 3 scale 2 H0\n"), "{md}");
        assert!(md.contains("hints:\n```\nnext action:"), "{md}");
        let sheet = std::fs::read(dir.join("contact.png")).unwrap();
        assert!(sheet.starts_with(b"\x89PNG"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_scales_and_unknown_envs_are_refused_before_writing() {
        let dir = temp("render-bad");
        let suite = Suite::with_canvas(16).unwrap();
        let e = render_episode(&suite, &maze(99), &dir).unwrap_err();
        assert!(
            matches!(&e, InspectError::Invalid(v) if v.field == "scale"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("1..=5 (inclusive; the scale range of maze/classic)"),
            "{e}"
        );
        let unknown = Task {
            env: EnvId::new("nope/x"),
            ..maze(1)
        };
        let e = render_episode(&suite, &unknown, &dir).unwrap_err();
        assert!(e.to_string().contains("nope/x"), "{e}");
        assert!(!dir.exists());
    }

    #[test]
    fn the_contact_sheet_zooms_to_128_rows_and_keeps_12_frames() {
        let mut frame = Rgb8Image::new(32, 32);
        frame.fill([10, 20, 30]);
        assert!(contact_sheet(&[]).is_none());
        let sheet = contact_sheet(&vec![frame; 20]).unwrap();
        assert_eq!((sheet.width, sheet.height), (12 * (128 + 2), 128));
        assert_eq!(sheet.get(0, 0), [10, 20, 30]);
        assert_eq!(sheet.get(128, 0), [255, 255, 255]);
    }
}
