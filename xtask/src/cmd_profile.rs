//! `cargo xtask profile`.

/// Arguments of `cargo xtask profile`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = false)]
pub struct ProfileArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run the command.
pub fn run(_args: ProfileArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask profile` is not yet implemented")
}
