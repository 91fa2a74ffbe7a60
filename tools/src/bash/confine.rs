//! The kernel confinement of one shell (see `baton_engine::confine`).

use std::path::Path;
use std::sync::Arc;

use baton_engine::confine::{Approval, Confinement, FloorState};
use baton_engine::sandbox::Prepared;
use baton_engine::ToolContext;

/// The sandbox the shell of this call enters, if any. `report` is the file
/// the wrapper writes the final directory to: created here, so that the
/// floor can grant writing that one file. An error is the text of a
/// refusal: the command is not run unconfined instead.
pub(crate) fn sandbox_for(
    ctx: &ToolContext,
    report: Option<&Path>,
) -> Result<Option<Arc<Prepared>>, String> {
    if ctx.approval != Approval::ReadOnlyJudgement {
        return Ok(None);
    }
    let confinement = Confinement::of(&ctx.services);
    match confinement.floor() {
        FloorState::Waived => Ok(None),
        FloorState::Unavailable(why) => Err(format!(
            "The command was judged read-only, but the OS sandbox that must confine such commands is unavailable ({why}), so it was not run."
        )),
        FloorState::Enforced => {
            let mut files = Vec::new();
            if let Some(report) = report {
                if std::fs::File::create(report).is_ok() {
                    files.push(report.to_path_buf());
                }
            }
            confinement
                .prepare_floor(&ctx.context, &files)
                .map(Some)
                .map_err(|e| {
                    format!("The command was judged read-only, but the OS sandbox that must confine it could not be prepared ({e}), so it was not run.")
                })
        }
    }
}
