//! The title, the command and commit that made the record, the machine, and the protocol.

use crate::report::{Inputs, Section};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let results = i.results;
    let c = &results.config;
    let mut s = Section::new(
        "header",
        1,
        format!("envdist experiment report (preset `{}`)", c.preset.name()),
    );
    s.text(format!(
        "Made by `{}` at commit `{}` (source hash `{}`); `config.json` beside this report \
         holds every field, and `cargo xtask experiment --config config.json --out NEW_DIR` at \
         that commit reproduces these numbers (the pipeline is deterministic). Compute time of \
         all stages {:.1} min on this machine (a stage loaded from the cache counts the time of \
         the run that computed it); this invocation took {:.1} min.",
        i.command,
        results.code.commit,
        results.code.source_hash,
        results.compute_seconds / 60.0,
        results.total_seconds / 60.0
    ));
    let m = &results.machine;
    s.text(format!(
        "Machine: {} ({}), L1d {}, {} worker threads. The numbers are bit-identical on any \
         x86-64 machine with FMA running this commit, at any thread count and vector width \
         (every matrix product contracts over at most 512 values, so `gemm`'s cache-dependent \
         blocking cannot change a sum, and each product's shape keeps it in `gemm`'s kernels \
         that sum each value in order, never in lanes; see ARCHITECTURE.md, Determinism).",
        if m.cpu.is_empty() {
            "unknown CPU"
        } else {
            &m.cpu
        },
        if m.simd.is_empty() {
            "no SIMD flags read".to_string()
        } else {
            m.simd.join(", ")
        },
        m.l1d
            .as_ref()
            .map_or("unknown".into(), |(size, ways)| format!(
                "{size} {ways}-way"
            )),
        m.threads
    ));
    s.text(format!(
        "**Protocol.** The base model is the solvers' behaviour cloned ({} demonstration steps at \
         harness levels and scales drawn uniformly, no RL): a stand-in for a pretrained VLM's \
         priors. Every arm trains from it for the same {} environment steps{}, {} training seeds \
         per arm, paired by seed (seed i draws the same random-k set and PPO stream in every \
         arm). Evaluation is greedy at H4 (image and task statement only), {} instances per \
         environment and scale at the {} scales, instances distinct per environment, on the {} \
         pool environments (ID) and {} held-out ones (OOD). Scores are success rates in points; \
         every interval is a 95% crossed bootstrap interval over training seeds and environments \
         ({} replicates: one environment draw applied to every seed and to both arms of a \
         comparison); \"smallest detectable\" is the true difference the run would detect four \
         times in five at the level its verdict uses (Holm's first step for a primary claim, \
         5% for an exploratory one). A claim is **equivalent** when its difference is shown to \
         lie within ±{} points (two one-sided tests; the margin is named before the run, \
         `analysis.equivalence_margin`).",
        c.base.samples,
        c.rl.total_env_steps,
        format_args!(
            " (PPO{}; the harness's hints in training: {})",
            if c.rl.kl_coef > 0.0 {
                format!(
                    " with a KL penalty to the base, `rl.kl_coef` {}",
                    c.rl.kl_coef
                )
            } else {
                String::new()
            },
            c.suite.hint_style
        ),
        c.seeds,
        c.eval.episodes,
        c.eval
            .scales
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        results.facts.pool_envs,
        results.facts.ood_envs,
        c.analysis.bootstrap,
        c.analysis.equivalence_margin,
    ));
    if results.analysis.is_none() {
        s.text("(no analysis: the base run is missing)");
    }
    Some(s)
}
