//! Mutation fuzzing of envdist's readers on the stable toolchain (feature `fuzz`, enabled only
//! by the crates' dev-dependencies: it is test code, kept here so that every crate's tests
//! share one engine without depending on each other).
//!
//! A [`Fuzz`] campaign feeds a reader its seed files (which must parse), the regression inputs
//! kept beside the test, then `ENVDIST_FUZZ_INPUTS` (or the test's default) mutants of the
//! seeds from the deterministic [`Mutator`]. The reader is a closure from bytes to `Ok` or an
//! error message. Every input must end in a value or an error, and that error must name the
//! file when the campaign names one. A failure is a panic, an error that does not name the
//! file, an input slower than `ENVDIST_FUZZ_SLOW_MS` (default 2,000 ms), a single allocation
//! larger than the campaign's limit (with the [`TrackingAllocator`] installed), or a hang
//! (an input still running after `ENVDIST_FUZZ_HANG_S`, default 60 s, which ends the process).
//! Failing inputs are written under the system temp dir (`envdist-fuzz/<reader>/`) so they can
//! be kept as regression inputs.
//!
//! ```
//! use envdist_core::fuzz::{Fuzz, TrackingAllocator};
//!
//! #[global_allocator]
//! static ALLOC: TrackingAllocator = TrackingAllocator;
//!
//! # fn main() {
//! let summary = Fuzz::new("u32 in JSON")
//!     .seed("one", b"1".to_vec())
//!     .default_inputs(200)
//!     .run(|bytes| {
//!         serde_json::from_slice::<u32>(bytes).map(drop).map_err(|e| e.to_string())
//!     });
//! summary.assert_clean();
//! assert_eq!(summary.panics, 0);
//! # }
//! ```

mod alloc;
mod mutate;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use alloc::{HARD_LIMIT, TrackingAllocator};
pub use mutate::{Mutant, Mutator};

/// Mutants per campaign when neither the test nor `ENVDIST_FUZZ_INPUTS` says.
pub const DEFAULT_INPUTS: usize = 1_000;

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// What went wrong with one input.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Which input: `seed <name>`, `regression <file>` or `mutant #<i>`.
    pub input: String,
    /// How it was made (the seed and the mutations), for a mutant.
    pub made: String,
    /// What went wrong.
    pub what: String,
    /// Where the input was written.
    pub saved: Option<PathBuf>,
}

/// The outcome of a campaign.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The reader fuzzed.
    pub reader: String,
    /// Inputs tried: seeds, regression inputs and mutants.
    pub inputs: usize,
    /// Inputs that parsed to a value.
    pub parsed: usize,
    /// Inputs refused with an error.
    pub refused: usize,
    /// Distinct error messages (numbers and quoted text masked) and how often each was seen.
    pub errors: BTreeMap<String, usize>,
    /// Inputs that panicked.
    pub panics: usize,
    /// Inputs slower than the limit.
    pub slow: usize,
    /// Inputs that allocated more than the limit at once.
    pub huge_allocations: usize,
    /// Largest single allocation of any input, in bytes (0 without the tracking allocator).
    pub largest_allocation: usize,
    /// Slowest input.
    pub slowest: Duration,
    /// Wall time of the campaign.
    pub elapsed: Duration,
    /// The first failures (at most 20 are kept).
    pub failures: Vec<Failure>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: {} inputs ({} parsed, {} refused), {} distinct errors, {} panics, {} slow, \
             {} huge allocations; slowest input {:.1} ms, largest allocation {} KiB, {:.1} s",
            self.reader,
            self.inputs,
            self.parsed,
            self.refused,
            self.errors.len(),
            self.panics,
            self.slow,
            self.huge_allocations,
            self.slowest.as_secs_f64() * 1e3,
            self.largest_allocation / 1024,
            self.elapsed.as_secs_f64(),
        )
    }
}

impl Summary {
    /// Print the summary (seen with `--nocapture`) and panic, listing the failures, if any
    /// input failed.
    pub fn assert_clean(&self) {
        eprintln!("{self}");
        if std::env::var_os("ENVDIST_FUZZ_ERRORS").is_some() {
            for (e, n) in &self.errors {
                eprintln!("  {n:>7}  {e}");
            }
        }
        if self.failures.is_empty() {
            return;
        }
        let list: Vec<String> = self
            .failures
            .iter()
            .map(|f| {
                format!(
                    "- {}{}: {}{}",
                    f.input,
                    if f.made.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", f.made)
                    },
                    f.what,
                    f.saved
                        .as_ref()
                        .map(|p| format!(" [saved: {}]", p.display()))
                        .unwrap_or_default()
                )
            })
            .collect();
        panic!("{self}\n{}", list.join("\n"));
    }
}

/// Mask what varies between errors of one kind: numbers, and text in double quotes.
fn error_shape(message: &str, file_name: Option<&str>) -> String {
    let message = match file_name {
        Some(name) => message.replace(name, "<file>"),
        None => message.to_string(),
    };
    let mut out = String::new();
    let mut in_quotes = false;
    let mut last_digit = false;
    for c in message.chars() {
        if c == '"' {
            in_quotes = !in_quotes;
            if in_quotes {
                out.push_str("\"…\"");
            }
            last_digit = false;
        } else if in_quotes {
        } else if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
        } else {
            out.push(c);
            last_digit = false;
        }
        if out.chars().count() >= 120 {
            out.push('…');
            break;
        }
    }
    out
}

thread_local! {
    /// Whether this thread is running an input (its panics are the campaign's to report).
    static IN_INPUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where this thread's last panic during an input happened.
    static PANICKED_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Install, once per process, a panic hook that keeps quiet about panics on a thread running a
/// fuzz input and remembers where they happened: the campaign reports a panic that escapes the
/// reader with that place, and one the reader catches itself (as the trainer catches burn's
/// on a malformed record) is not printed thousands of times. Other threads keep the hook
/// they had.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_INPUT.with(std::cell::Cell::get) {
                let at = info.location().map(|l| l.to_string()).unwrap_or_default();
                PANICKED_AT.with(|p| *p.borrow_mut() = Some(at));
            } else {
                previous(info);
            }
        }));
    });
}

/// The input being read, as the watchdog sees it.
struct Running {
    name: String,
    started: Instant,
    bytes: Arc<[u8]>,
}

/// A thread that ends the process when one input runs longer than `hang`: a reader stuck in
/// a loop never returns to the campaign, so only another thread can report it.
struct Watchdog {
    running: Arc<Mutex<Option<Running>>>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start(reader: &'static str, hang: Duration, out_dir: PathBuf) -> Self {
        let running: Arc<Mutex<Option<Running>>> = Arc::default();
        let done: Arc<AtomicBool> = Arc::default();
        let thread = {
            let (running, done) = (Arc::clone(&running), Arc::clone(&done));
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let guard = running.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(r) = guard.as_ref()
                        && r.started.elapsed() > hang
                    {
                        let path = save(&out_dir, &format!("hang-{}", tag(&r.name)), &r.bytes);
                        eprintln!(
                            "fuzz {reader}: {} has run for {:.0} s: a hang; input saved at {}",
                            r.name,
                            r.started.elapsed().as_secs_f64(),
                            path.map_or_else(
                                || "nowhere (write failed)".into(),
                                |p| p.display().to_string()
                            )
                        );
                        std::process::exit(101);
                    }
                }
            })
        };
        Self {
            running,
            done,
            thread: Some(thread),
        }
    }

    fn set(&self, running: Option<Running>) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = running;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One input of a campaign.
struct Input {
    /// `seed <name>`, `regression <file>` or `mutant #<i>`.
    name: String,
    /// How a mutant was made.
    made: String,
    bytes: Arc<[u8]>,
    /// The mutant's index (`usize::MAX` for seeds and regression inputs).
    index: usize,
    /// Seeds must parse.
    must_parse: bool,
}

/// A campaign's limits and running tally.
struct Tally {
    reader: &'static str,
    file_name: Option<String>,
    slow: Duration,
    alloc_limit: usize,
    keep: Option<usize>,
    out_dir: PathBuf,
    watchdog: Watchdog,
    summary: Summary,
}

impl Tally {
    fn try_input(&mut self, input: Input, read: &mut impl FnMut(&[u8]) -> Result<(), String>) {
        if self.keep == Some(input.index) {
            let _ = save(
                &self.out_dir,
                &format!("kept-{}", input.index),
                &input.bytes,
            );
        }
        self.watchdog.set(Some(Running {
            name: input.name.clone(),
            started: Instant::now(),
            bytes: Arc::clone(&input.bytes),
        }));
        alloc::arm(self.reader, input.index);
        PANICKED_AT.with(|p| p.borrow_mut().take());
        IN_INPUT.with(|f| f.set(true));
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| read(&input.bytes)));
        let took = start.elapsed();
        IN_INPUT.with(|f| f.set(false));
        let largest = alloc::disarm();
        self.watchdog.set(None);

        let s = &mut self.summary;
        s.inputs += 1;
        s.slowest = s.slowest.max(took);
        s.largest_allocation = s.largest_allocation.max(largest);
        let mut problems = Vec::new();
        match result {
            Ok(Ok(())) => s.parsed += 1,
            Ok(Err(message)) => {
                s.refused += 1;
                let shape = error_shape(&message, self.file_name.as_deref());
                *s.errors.entry(shape).or_default() += 1;
                if input.must_parse {
                    problems.push(format!("a seed must parse, but: {message}"));
                }
                if let Some(file) = &self.file_name
                    && !message.contains(file.as_str())
                {
                    problems.push(format!(
                        "the error does not name the file `{file}`: {message}"
                    ));
                }
            }
            Err(payload) => {
                s.panics += 1;
                let text = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let at = PANICKED_AT
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_default();
                problems.push(format!("panicked at {at}: {text}"));
            }
        }
        if took > self.slow {
            s.slow += 1;
            problems.push(format!(
                "took {:.0} ms (limit {} ms)",
                took.as_secs_f64() * 1e3,
                self.slow.as_millis()
            ));
        }
        if largest > self.alloc_limit {
            s.huge_allocations += 1;
            problems.push(format!(
                "allocated {largest} bytes at once (limit {})",
                self.alloc_limit
            ));
        }
        if !problems.is_empty() && s.failures.len() < 20 {
            s.failures.push(Failure {
                saved: save(&self.out_dir, &tag(&input.name), &input.bytes),
                input: input.name,
                made: input.made,
                what: problems.join("; "),
            });
        }
    }
}

/// An input's name as a file name.
fn tag(name: &str) -> String {
    name.replace([' ', '#', '/'], "")
}

/// A fuzz campaign against one reader (see the module docs).
pub struct Fuzz {
    reader: &'static str,
    seeds: Vec<(String, Vec<u8>)>,
    regressions: Vec<(String, Vec<u8>)>,
    default_inputs: usize,
    /// Set by [`Fuzz::exactly`]: `ENVDIST_FUZZ_INPUTS` does not apply.
    exact: bool,
    file_name: Option<String>,
    alloc_limit: Option<usize>,
    rng_seed: u64,
}

impl Fuzz {
    /// A campaign against `reader` (its name in summaries and failure paths).
    pub fn new(reader: &'static str) -> Self {
        Self {
            reader,
            seeds: Vec::new(),
            regressions: Vec::new(),
            default_inputs: DEFAULT_INPUTS,
            exact: false,
            file_name: None,
            alloc_limit: None,
            rng_seed: crate::hash::fnv1a(reader.as_bytes()),
        }
    }

    /// Add a seed: a real file of the reader's format, which must parse.
    pub fn seed(mut self, name: impl Into<String>, bytes: Vec<u8>) -> Self {
        self.seeds.push((name.into(), bytes));
        self
    }

    /// Add the regression inputs kept for this reader in `crate_dir` (the test's
    /// `env!("CARGO_MANIFEST_DIR")`), every file of `tests/fuzz-regressions/<reader>/`: each
    /// is run as it is, and used as a seed for mutants.
    pub fn regressions(mut self, crate_dir: impl AsRef<Path>) -> Self {
        let dir = crate_dir
            .as_ref()
            .join("tests/fuzz-regressions")
            .join(self.reader);
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.regressions.push((name, bytes));
        }
        self
    }

    /// Mutants to try when `ENVDIST_FUZZ_INPUTS` is not set.
    pub fn default_inputs(mut self, n: usize) -> Self {
        self.default_inputs = n;
        self
    }

    /// Exactly `n` mutants, whatever `ENVDIST_FUZZ_INPUTS` says (for tests of the engine
    /// itself, which the long run need not scale).
    pub fn exactly(mut self, n: usize) -> Self {
        self.default_inputs = n;
        self.exact = true;
        self
    }

    /// Every error must contain `name` (the file the reader was given).
    pub fn errors_name(mut self, name: impl Into<String>) -> Self {
        self.file_name = Some(name.into());
        self
    }

    /// Largest single allocation an input may cause (default: 64 MiB plus 16 times the
    /// largest seed).
    pub fn alloc_limit(mut self, bytes: usize) -> Self {
        self.alloc_limit = Some(bytes);
        self
    }

    /// Run the campaign on a file reader: each input is written to `path`, then `read` is
    /// given the path; every error must name the file.
    pub fn run_on_file(
        self,
        path: &Path,
        mut read: impl FnMut(&Path) -> Result<(), String>,
    ) -> Summary {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.errors_name(name).run(|bytes| {
            // A harness fault, not the reader's: reported as a failure of this input.
            std::fs::write(path, bytes)
                .unwrap_or_else(|e| panic!("fuzz harness: cannot write {}: {e}", path.display()));
            read(path)
        })
    }

    /// Run the campaign: seeds, regression inputs, then mutants, each through `read`.
    pub fn run(self, mut read: impl FnMut(&[u8]) -> Result<(), String>) -> Summary {
        assert!(!self.seeds.is_empty(), "fuzz {}: no seed", self.reader);
        let inputs = match env_number("ENVDIST_FUZZ_INPUTS") {
            Some(n) if !self.exact => n as usize,
            _ => self.default_inputs,
        };
        let largest_seed = self.seeds.iter().map(|(_, b)| b.len()).max().unwrap_or(0);
        let out_dir = std::env::temp_dir()
            .join("envdist-fuzz")
            .join(self.reader.replace(['/', ' '], "-"));
        let hang = Duration::from_secs(env_number("ENVDIST_FUZZ_HANG_S").unwrap_or(60));
        let tracked = alloc::installed();
        install_panic_hook();
        let mut tally = Tally {
            reader: self.reader,
            file_name: self.file_name.clone(),
            slow: Duration::from_millis(env_number("ENVDIST_FUZZ_SLOW_MS").unwrap_or(2_000)),
            alloc_limit: self.alloc_limit.unwrap_or((64 << 20) + 16 * largest_seed),
            keep: env_number("ENVDIST_FUZZ_KEEP").map(|k| k as usize),
            watchdog: Watchdog::start(self.reader, hang, out_dir.clone()),
            out_dir,
            summary: Summary {
                reader: self.reader.to_string(),
                ..Default::default()
            },
        };
        let t0 = Instant::now();
        let as_is = |kind: &str, (name, bytes): &(String, Vec<u8>)| Input {
            name: format!("{kind} {name}"),
            made: String::new(),
            bytes: bytes.as_slice().into(),
            index: usize::MAX,
            must_parse: kind == "seed",
        };
        for seed in &self.seeds {
            tally.try_input(as_is("seed", seed), &mut read);
        }
        for regression in &self.regressions {
            tally.try_input(as_is("regression", regression), &mut read);
        }
        let corpus: Vec<&(String, Vec<u8>)> = self.seeds.iter().chain(&self.regressions).collect();
        let mut mutator = Mutator::new(
            self.rng_seed,
            corpus.iter().map(|(_, b)| b.clone()).collect(),
        );
        for index in 0..inputs {
            let m = mutator.next_mutant();
            let from = if m.seed < self.seeds.len() {
                "seed"
            } else {
                "regression"
            };
            tally.try_input(
                Input {
                    name: format!("mutant #{index}"),
                    made: format!("{from} {}: {}", corpus[m.seed].0, m.steps.join("; ")),
                    bytes: m.bytes.into(),
                    index,
                    must_parse: false,
                },
                &mut read,
            );
        }
        let mut summary = tally.summary;
        summary.elapsed = t0.elapsed();
        if !tracked {
            summary.failures.push(Failure {
                input: "setup".into(),
                made: String::new(),
                what: "allocations are not tracked: declare `#[global_allocator] static ALLOC: \
                       envdist_core::fuzz::TrackingAllocator = envdist_core::fuzz::TrackingAllocator;` \
                       in the test binary"
                    .into(),
                saved: None,
            });
        }
        summary
    }
}

/// A fresh, empty directory for one campaign's files under the system temp dir.
pub fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

fn save(dir: &Path, name: &str, bytes: &[u8]) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).ok()?;
    let path = dir.join(format!("{name}.bin"));
    std::fs::write(&path, bytes).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOC: TrackingAllocator = TrackingAllocator;

    #[test]
    fn error_shapes_mask_numbers_and_quoted_text() {
        assert_eq!(
            error_shape(
                "/tmp/x/a.json line 12: field `k`: invalid type: string \"abc\", expected u32",
                Some("/tmp/x/a.json")
            ),
            "<file> line #: field `k`: invalid type: string \"…\", expected u#"
        );
    }

    #[test]
    fn a_panicking_reader_fails_the_campaign_and_names_the_input() {
        let s = Fuzz::new("panics on 7")
            .seed("one", b"1".to_vec())
            .exactly(300)
            .run(|b| {
                assert!(!b.contains(&b'7'), "saw a seven");
                Ok(())
            });
        assert!(s.panics > 0);
        assert!(
            s.failures
                .iter()
                .any(|f| f.what.contains("saw a seven") && f.input.starts_with("mutant #"))
        );
    }

    #[test]
    fn errors_must_name_the_file() {
        let s = Fuzz::new("nameless errors")
            .seed("one", b"1".to_vec())
            .errors_name("f.json")
            .exactly(50)
            .run(|b| {
                serde_json::from_slice::<u32>(b)
                    .map(drop)
                    .map_err(|e| e.to_string())
            });
        assert!(
            s.failures
                .iter()
                .any(|f| f.what.contains("does not name the file")),
            "{s}"
        );
    }
}
