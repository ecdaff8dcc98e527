//! Terminal progress for every command: indicatif bars with rate and ETA, and the
//! [`Terminal`] observer through which the study library reports its stages.

use std::time::Duration;

use envdist_study::observer::StageInfo;
use envdist_study::{Observer, Progress};
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar with rate and ETA, labelled `what`.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "  {what:<28} [{{bar:30}}] {{pos}}/{{len}} {{per_sec}} ETA {{eta}} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb
}

/// [`bar`], or nothing when `quiet` (JSON output).
pub fn bar_unless(quiet: bool, len: u64, what: &str) -> ProgressBar {
    if quiet {
        ProgressBar::hidden()
    } else {
        bar(len, what)
    }
}

/// A spinner with elapsed time, or nothing when `quiet` (JSON output).
pub fn spinner(msg: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn set(&self, position: u64) {
        self.0.set_position(position);
    }
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn message(&self, text: String) {
        self.0.set_message(text);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The study's events on stderr: one line per stage, a bar per long task.
pub struct Terminal;

impl Observer for Terminal {
    fn stage_done(&self, stage: &str, info: &StageInfo) {
        let how = if info.cached { "cached" } else { "done" };
        eprintln!("[{stage}] {how} ({:.1}s)", info.seconds);
    }
    fn stage_recomputed(&self, stage: &str, reason: &str) {
        eprintln!("  [{stage}] recomputing: {reason}");
    }
    fn progress(&self, label: &str, total: u64) -> Box<dyn Progress> {
        Box::new(Bar(bar(total, label)))
    }
    fn note(&self, text: &str) {
        eprintln!("{text}");
    }
}
