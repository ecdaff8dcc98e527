//! `cargo xtask world-map`: AES and HDC on skill worlds where their premises hold by
//! construction, over a grid of the knobs that decide whether they can work, centred on the
//! testbed calibrated to the cpu record (the library is `envdist_study::tools::world_map`;
//! docs/skill-world.md reads the map).
//!
//! ```text
//! cargo xtask world-map                                  # the committed map
//! cargo xtask world-map --seeds 4 --out /tmp/map         # a quicker look
//! cargo xtask world-map --record none --config map.json  # no calibration, another grid
//! ```

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use envdist_core::Validate;
use envdist_study::model::{EXPERIMENT_SCHEMA_VERSION, Results};
use envdist_study::tools::world_map::{self, Targets, WorldMapConfig};

use crate::progress::Terminal;

/// Arguments of `cargo xtask world-map`.
#[derive(Debug, clap::Args)]
pub struct WorldMapArgs {
    /// Write `results.json`, `REPORT.md` and `figures/` here.
    #[arg(long, default_value = "docs/experiments/skill-world")]
    out: PathBuf,
    /// The study record (`results.json`) the testbed is calibrated to, or `none`: the grid is
    /// then centred on the world's defaults and no testbed is placed on it. A `profiles.json`
    /// beside it sets the annotator's noise.
    #[arg(long, default_value = "docs/experiments/cpu/results.json")]
    record: String,
    /// A JSON object of the map's settings (`WorldMapConfig`: seeds, k, budget, planes,
    /// world, ...); fields left out take their defaults.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Worlds (paired seeds) per cell, overriding the configuration.
    #[arg(long)]
    seeds: Option<u32>,
    /// Print the default configuration as JSON and exit (a starting point for `--config`).
    #[arg(long)]
    print_config: bool,
}

/// Run `world-map`.
pub fn run(args: WorldMapArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    if args.print_config {
        println!(
            "{}",
            serde_json::to_string_pretty(&WorldMapConfig::default())?
        );
        return Ok(());
    }
    let mut cfg: WorldMapConfig = match &args.config {
        Some(path) => envdist_core::io::read_json(path, None)?,
        None => WorldMapConfig::default(),
    };
    if let Some(seeds) = args.seeds {
        cfg.seeds = seeds;
    }
    let cfg = cfg.checked().context("the world-map configuration")?;
    let targets = match args.record.as_str() {
        "none" => None,
        path => {
            let record: Results =
                envdist_core::io::read_json(path, Some(EXPERIMENT_SCHEMA_VERSION))?;
            // The pool's profiles sit beside a committed record (docs/experiments/*/).
            let beside = std::path::Path::new(path).with_file_name("profiles.json");
            let profiles = match beside.exists() {
                true => Some(envdist_core::ProfileSet::read(&beside)?),
                false => None,
            };
            Some(Targets::from_record(&record, path, profiles.as_ref())?)
        }
    };
    eprintln!(
        "envdist world-map: {} planes, {} worlds per cell, k = {}, {} episodes per arm, {} threads",
        cfg.planes.len(),
        cfg.seeds,
        cfg.k,
        cfg.budget,
        rayon::current_num_threads()
    );
    let command = std::iter::once("cargo xtask".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let map = world_map::run(&cfg, targets.as_ref(), &Terminal)?;
    let figures = world_map::write(&map, &args.out, &command)?;
    print!("{}", world_map::summary(&map));
    println!(
        "wrote {}/results.json, {}/REPORT.md and {} figures",
        args.out.display(),
        args.out.display(),
        figures.len()
    );
    eprintln!("done in {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
