//! `cargo xtask curriculum`.

/// Arguments of `cargo xtask curriculum`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = false)]
pub struct CurriculumArgs {
    /// Everything after the subcommand (not yet parsed: the command is not implemented).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// Run the command.
pub fn run(_args: CurriculumArgs) -> anyhow::Result<()> {
    anyhow::bail!("`cargo xtask curriculum` is not yet implemented")
}
