//! Flags and answers more than one command reads: a request rate, a forced interface, a given
//! credential, and the operator's "no" to a confirmation.

use crate::a2a::{Credential, InterfaceChoice, ProtocolVersion, WireBinding};
use crate::commands::util::hints::HintText as _;
use crate::error::CliError;

/// The error when the operator answers no: nothing was changed (exit 1, as `apt` and
/// `terraform apply` do).
pub(crate) fn declined() -> CliError {
    CliError::failure("not confirmed; nothing was changed")
        .hint("answer `y` to go on, or pass --yes in a script")
}

/// Reads a request rate: a positive number of requests per second (`50`, `0.5`).
pub(crate) fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "`{s}` is not a positive number of requests per second (e.g. `50` or `0.5`)"
        )),
    }
}

/// Checks a forced `--binding` / `--protocol` (usage error, exit 2, for a pair no binding
/// implements): `delegate` and `agents add`.
pub(crate) fn interface_choice(
    binding: Option<WireBinding>,
    protocol: Option<ProtocolVersion>,
) -> Result<InterfaceChoice, CliError> {
    InterfaceChoice { binding, protocol }
        .check()
        .map_err(|e| CliError::usage(e).hint("drop --binding / --protocol to let the card decide"))
}

/// Reads the credential of `--token-env VAR` or runs `--token-cmd CMD` (a usage error when
/// either is unusable; nothing is sent). The command runs on a blocking thread.
pub(crate) async fn given_credential(
    token_env: Option<&str>,
    token_cmd: Option<&str>,
) -> Result<Option<Credential>, CliError> {
    Credential::resolve(token_env, token_cmd)
        .await
        .map_err(|e| {
            let hint = e.hint_text().unwrap_or_default();
            match token_cmd {
                Some(_) => CliError::usage(format!("--token-cmd: {e}")).hint(hint),
                None => CliError::usage(format!("--token-env: {e}")).hint(format!(
                    "export `{}` with the agent's bearer token, or drop --token-env",
                    token_env.unwrap_or_default()
                )),
            }
        })
}
