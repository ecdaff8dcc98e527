//! `cargo xtask select`.

/// Arguments of `cargo xtask select`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = false)]
pub struct SelectArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run the command.
pub fn run(_args: SelectArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask select` is not yet implemented")
}
