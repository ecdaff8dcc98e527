//! `cargo xtask experiment`.

/// Arguments of `cargo xtask experiment`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = false)]
pub struct ExperimentArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run the command.
pub fn run(_args: ExperimentArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask experiment` is not yet implemented")
}
