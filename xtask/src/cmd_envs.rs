//! `cargo xtask envs`.

/// Arguments of `cargo xtask envs`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = false)]
pub struct EnvsArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run the command.
pub fn run(_args: EnvsArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask envs` is not yet implemented")
}
