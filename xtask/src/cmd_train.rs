//! `cargo xtask train` and `cargo xtask gradients`.

/// Arguments of `cargo xtask train`.
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Arguments of `cargo xtask gradients`.
#[derive(Debug, clap::Args)]
pub struct GradientsArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run `train`.
pub fn run(_args: TrainArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask train` is not yet implemented")
}

/// Run `gradients`.
pub fn run_gradients(_args: GradientsArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask gradients` is not yet implemented")
}
