//! `reply`: answer a pending question on the same task id.
//!
//! Order: the step's latest attempt must be INPUT_REQUIRED or AUTH_REQUIRED (else exit 2 naming
//! its state); the reply's messageId is committed first (`replies`, state `INTENT`); then it is
//! sent with the task's `taskId` and `contextId` under the attempt's lease (`recovery::send`),
//! with the crash points `after-intent` and `after-send`. Exit 0 once the reply is journaled as
//! delivered (and the task's new state applied), 3 when its outcome is unknown — the next
//! `reconcile` looks for its messageId in the task's history before sending it again, with the
//! same messageId — and 4 when the agent refuses it.
//!
//! Running `reply` again with the same text while a reply is undelivered resends nothing
//! blindly: it leaves the decision to `reconcile`, which looks first.

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use crate::a2a::{A2aClient, A2aError, Credential, ErrorKind, redact_url};
use crate::commands::report::records::ActionRecord;
use crate::commands::util::hints::HintText as _;
use crate::context::Context;
use crate::crash::{self, Point};
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    Attempt, AttemptState, Journal, NewReply, ReplyState, StepName, StepRecord, WorkflowState,
};
use crate::recovery::send::{Outgoing, ReplySent, Sender};
use crate::sanitize::inert;

/// Answers the pending question of an INPUT_REQUIRED (or resumes an AUTH_REQUIRED) step.
///
/// The reply's messageId is journaled first, then sent on the same task.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover reply trip-42/hotel \"one room\"
  a2a-recover reply trip-42/hotel - < answer.txt   # the text from stdin
  # a data part, for agents that take only structured answers:
  a2a-recover reply trip-42/hotel --data '{\"rooms\": \"one\"}'")]
pub struct ReplyArgs {
    /// The step, `WORKFLOW/STEP`.
    pub step: String,
    /// The answer; `-` reads it from standard input.
    #[arg(value_parser = crate::cli::text_arg, required_unless_present_any = ["data", "data_file"],
          conflicts_with_all = ["data", "data_file"])]
    pub text: Option<String>,
    /// Sends the answer as one data part: a JSON object (`{"rooms": "one"}`).
    #[arg(long, value_name = "JSON", conflicts_with = "data_file")]
    pub data: Option<String>,
    /// Sends the answer as one data part read from a file of JSON (`-` reads standard input).
    #[arg(long, value_name = "PATH")]
    pub data_file: Option<std::path::PathBuf>,
}

/// The answer a `reply` sends: text, or one data part (a JSON object).
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    text: String,
    data: Option<serde_json::Value>,
}

impl Answer {
    /// Reads the answer from the arguments: the text, `--data` or `--data-file`.
    fn of(args: &ReplyArgs) -> Result<Self, CliError> {
        let json = match (&args.text, &args.data, &args.data_file) {
            (Some(text), _, _) => {
                if text.trim().is_empty() {
                    return Err(CliError::usage("the reply TEXT is empty")
                        .hint("give the answer to send, e.g. \"two rooms\""));
                }
                return Ok(Self {
                    text: text.clone(),
                    data: None,
                });
            }
            (None, Some(json), _) => json.clone(),
            (None, None, Some(path)) if path.as_os_str() == "-" => crate::cli::text_arg("-")
                .map_err(|e| CliError::usage(format!("--data-file: {e}")))?,
            (None, None, Some(path)) => {
                read_bounded(path).map_err(|e| CliError::usage(format!("--data-file: {e}")))?
            }
            (None, None, None) => {
                return Err(CliError::usage(
                    "the reply needs TEXT, --data or --data-file",
                ));
            }
        };
        Ok(Self {
            text: String::new(),
            data: Some(super::util::data_object(&json, "the reply's data")?),
        })
    }

    /// Whether a journaled reply carried this answer.
    fn is(&self, reply: &crate::journal::Reply) -> bool {
        reply.text == self.text && reply.data == self.data
    }
}

/// Reads a file of at most 16 MiB, as text.
fn read_bounded(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read as _;
    const LIMIT: u64 = 16 * 1024 * 1024;
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut text = String::new();
    file.take(LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    if text.len() as u64 > LIMIT {
        return Err(format!("`{}` is larger than 16 MiB", path.display()));
    }
    Ok(text)
}

/// Runs `reply`.
pub(crate) async fn run(ctx: &Context, args: &ReplyArgs) -> anyhow::Result<u8> {
    let name = StepName::parse(&args.step).map_err(|e| {
        CliError::usage(e.to_string())
            .hint("write WORKFLOW/STEP (e.g. `trip-42/hotel`), or a bare STEP for `default/STEP`")
    })?;
    let answer = Answer::of(args)?;
    if let Some(code) = already_delivered(ctx, &name, &answer)? {
        return Ok(code);
    }
    let (journal, rec, attempt) = pending_question(ctx, &name)?;
    let out = outgoing(&answer, &rec, &attempt).await?;
    ctx.out.begin("reply")?;
    // An undelivered reply is never resent blindly: the same text is the same reply, and
    // `reconcile` looks for it first; another text must wait for that.
    if let Some(pending) = journal
        .replies(attempt.id)?
        .into_iter()
        .find(|r| r.state == ReplyState::Intent)
    {
        if !answer.is(&pending) {
            return Err(CliError::usage(format!(
                "step `{name}` already has a reply whose delivery is unknown"
            ))
            .hint(format!(
                "run `a2a-recover reconcile {}` first: it finds out whether that reply \
                 arrived, and sends it again (same messageId) only if it did not",
                name.workflow
            ))
            .into());
        }
        return report(
            ctx,
            &name,
            attempt.number,
            "pending",
            "unknown",
            &json!({"messageId": pending.message_id}),
            &format!(
                "{name}: this reply was journaled before and its delivery is unknown; \
                 `a2a-recover reconcile {}` looks for it and resends it only if it is missing.",
                name.workflow
            ),
            exit::WORK_REMAINS,
        );
    }
    let reply = journal.create_reply(
        attempt.id,
        &NewReply {
            message_id: crate::sim_seam::new_uuid().to_string(),
            text: answer.text.clone(),
            data: answer.data.clone(),
            answers: attempt.status_timestamp.clone(),
        },
    )?;
    let step = name.to_string();
    crash::at(Point::AfterIntent, &step);
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    let sender = Sender {
        sink: &crate::recovery::Unheard,
        journal: &journal,
        client: &client,
        clock: ctx.clock.as_ref(),
        clock_skew: std::time::Duration::ZERO,
        lease_ttl: ctx.send_lease_ttl,
        sweeps: None,
        card_patience: crate::recovery::send::DEFAULT_CARD_PATIENCE,
    };
    let sent = sender.deliver_reply(&reply, &out, &step).await?;
    report_sent(ctx, &name, &attempt, (&reply.message_id, &answer), sent)
}

/// `reply` again with the text already delivered to the step's latest attempt (a script or an
/// operator repeating themselves): exit 0, nothing sent, instead of "no pending question".
/// Returns `None` when that is not the case (the caller goes on as usual).
fn already_delivered(
    ctx: &Context,
    name: &StepName,
    answer: &Answer,
) -> anyhow::Result<Option<u8>> {
    if !ctx.journal_exists()? {
        return Ok(None);
    }
    let journal = ctx.open_journal()?;
    let Some(attempt) = journal.step(name)?.and_then(|rec| rec.latest().cloned()) else {
        return Ok(None);
    };
    if matches!(
        attempt.state,
        AttemptState::InputRequired | AttemptState::AuthRequired
    ) {
        return Ok(None);
    }
    let Some(reply) = journal
        .replies(attempt.id)?
        .into_iter()
        .rev()
        .find(|r| r.state == ReplyState::Delivered && answer.is(r))
    else {
        return Ok(None);
    };
    ctx.out.begin("reply")?;
    report(
        ctx,
        name,
        attempt.number,
        "DELIVERED",
        "already-delivered",
        &json!({"messageId": reply.message_id}),
        &format!(
            "{name}: this answer was already delivered (attempt {} is now {}); nothing was sent.",
            attempt.number, attempt.state
        ),
        exit::OK,
    )
    .map(Some)
}

/// Opens the journal and returns the step and its latest attempt, refusing unless that attempt
/// waits on a question and its workflow is still `ACTIVE`.
fn pending_question(
    ctx: &Context,
    name: &StepName,
) -> anyhow::Result<(Journal, StepRecord, Attempt)> {
    ctx.require_journal()?;
    let journal = ctx.open_journal_for_writing()?;
    let Some(rec) = journal.step(name)? else {
        let hint = "list the journaled steps with `a2a-recover inspect --pending`";
        return Err(super::util::unknown_step(&journal, name, hint)?.into());
    };
    let attempt = rec
        .latest()
        .cloned()
        .with_context(|| format!("step `{name}` has no attempt"))?;
    if !matches!(
        attempt.state,
        AttemptState::InputRequired | AttemptState::AuthRequired
    ) {
        return Err(CliError::usage(format!(
            "step `{name}` has no pending question: it is {}",
            attempt.state
        ))
        .hint(format!(
            "only an INPUT_REQUIRED or AUTH_REQUIRED step takes a reply; see it with \
             `a2a-recover inspect {name}`"
        ))
        .into());
    }
    if rec.step.workflow_state != WorkflowState::Active {
        return Err(CliError::usage(format!(
            "workflow `{}` is {}: nothing is sent to its agents any more",
            name.workflow, rec.step.workflow_state
        ))
        .hint(format!(
            "a workflow being compensated takes no replies; `a2a-recover compensate {}` cancels \
             the task, or settle the question with `a2a-recover resolve {name} --as \
             done|abandoned --reason \"…\"`",
            name.workflow
        ))
        .into());
    }
    Ok((journal, rec, attempt))
}

/// Builds the reply's message, with the credential of the attempt it answers.
async fn outgoing(
    answer: &Answer,
    rec: &StepRecord,
    attempt: &Attempt,
) -> anyhow::Result<Outgoing> {
    let spec = &rec.step.spec;
    let credential =
        Credential::resolve(attempt.token_env.as_deref(), attempt.token_cmd.as_deref())
            .await
            .map_err(|e| {
                let hint = e.hint_text().unwrap_or_default();
                CliError::usage(format!("the step's credential: {e}")).hint(hint)
            })?;
    Ok(Outgoing {
        text: answer.text.clone(),
        metadata: None,
        // The reply's data part goes with the journaled reply (`deliver_reply`).
        data: None,
        credential,
        allow_cross_origin: spec.allow_cross_origin,
        reference_task_ids: Vec::new(),
        push: None,
        interface: spec.interface,
    })
}

/// Returns the remedy for a text reply refused as invalid parameters (`-32602`): some agents
/// take only a structured answer, a data part shaped like their question (`reply --data`).
fn structured_hint(name: &StepName, answer: &Answer, e: &A2aError) -> Option<String> {
    (answer.data.is_none() && e.kind() == Some(ErrorKind::InvalidParams)).then(|| {
        format!(
            "the agent may take only a structured answer, a data part shaped like its \
             question; answer with --data:\n  a2a-recover reply {} --data '{{\"FIELD\": \"VALUE\"}}'",
            inert(&name.to_string())
        )
    })
}

/// Reports what the reply's send did.
#[expect(
    clippy::too_many_lines,
    reason = "a table: one arm per send outcome, each with its own record and line"
)]
fn report_sent(
    ctx: &Context,
    name: &StepName,
    attempt: &Attempt,
    (message_id, answer): (&str, &Answer),
    sent: ReplySent,
) -> anyhow::Result<u8> {
    let id = json!({"messageId": message_id});
    match sent {
        ReplySent::Delivered(now) => {
            let mut detail = id;
            detail["state"] = json!(now.state.as_str());
            detail["taskId"] = json!(now.task_id);
            let line = match &now.continuation_task_id {
                Some(next) => {
                    detail["continuationTaskId"] = json!(next);
                    format!(
                        "replied to {name}; the agent answered with a new task {} ({}), which \
                         continues task {}.",
                        inert(next),
                        now.state,
                        inert(now.task_id.as_deref().unwrap_or_default()),
                    )
                }
                None => format!(
                    "replied to {name} on task {} ({}).",
                    inert(now.task_id.as_deref().unwrap_or_default()),
                    now.state
                ),
            };
            report(
                ctx,
                name,
                now.number,
                "DELIVERED",
                now.state.as_str(),
                &detail,
                &line,
                exit::OK,
            )
        }
        ReplySent::Refused(e) => {
            let mut detail = id;
            detail["error"] = json!(e.summary());
            let mut line = format!(
                "{name}: the agent refused the reply: {}. Nothing was delivered.",
                e.summary()
            );
            if let Some(hint) = structured_hint(name, answer, &e) {
                line = format!("{line}\nhint: {hint}");
                detail["hint"] = json!(hint);
            }
            report(
                ctx,
                name,
                attempt.number,
                "REFUSED",
                "REFUSED",
                &detail,
                &line,
                exit::NEEDS_HUMAN,
            )
        }
        ReplySent::Failed(e) if e.is_bad_task_id() => {
            let mut detail = id;
            detail["error"] = json!(e.summary());
            let line = format!(
                "{name}: the agent took the reply but answered with a task no URL can name ({}); \
                 the reply is UNCERTAIN and is never sent again: ask the agent's operator.",
                e.summary()
            );
            report(
                ctx,
                name,
                attempt.number,
                "UNCERTAIN",
                "UNCERTAIN",
                &detail,
                &line,
                exit::NEEDS_HUMAN,
            )
        }
        ReplySent::Failed(e) => {
            let mut detail = id;
            detail["error"] = json!(e.summary());
            let line = format!(
                "{name}: the reply's delivery is unknown ({}); `a2a-recover reconcile {}` looks \
                 for it in the task's history and resends it (same messageId) only if missing.",
                e.summary(),
                name.workflow
            );
            let code = if e.is_bad_setup() {
                exit::USAGE
            } else {
                exit::WORK_REMAINS
            };
            report(
                ctx,
                name,
                attempt.number,
                "INTENT",
                "unknown",
                &detail,
                &line,
                code,
            )
        }
        ReplySent::Moved(e, to) => {
            let mut detail = id;
            detail["error"] = json!(e.summary());
            detail["interfaceMoved"] = json!(true);
            let line = format!(
                "{name}: the reply was not delivered: the agent no longer serves the task where \
                 it was sent and now offers `{}` ({} {}). The reply is journaled; `a2a-recover \
                 reconcile {}` looks for it there and sends it (same messageId) only if missing.",
                inert(&redact_url(&to.url)),
                to.binding.wire().card_name(),
                to.binding.version().as_str(),
                name.workflow
            );
            report(
                ctx,
                name,
                attempt.number,
                "INTENT",
                "interface-moved",
                &detail,
                &line,
                exit::WORK_REMAINS,
            )
        }
        ReplySent::Gone(reason) => {
            let mut detail = id;
            detail["error"] = json!(reason);
            let line = format!(
                "{name}: the reply was not delivered: {}. The step needs a human (see \
                 `a2a-recover inspect --pending`).",
                inert(&reason)
            );
            report(
                ctx,
                name,
                attempt.number,
                "INTENT",
                "interface-gone",
                &detail,
                &line,
                exit::NEEDS_HUMAN,
            )
        }
        ReplySent::Busy(lease) => {
            let line = format!(
                "{name}: another a2a-recover (pid {} on {}) is sending on this task right now; \
                 the reply is journaled and `a2a-recover reconcile {}` will deliver it.",
                lease.pid,
                inert(&lease.host),
                name.workflow
            );
            report(
                ctx,
                name,
                attempt.number,
                "INTENT",
                "busy",
                &id,
                &line,
                exit::WORK_REMAINS,
            )
        }
        ReplySent::Settled(r) => {
            let line = format!("{name}: the reply is already {}.", r.state.as_str());
            let code = if r.state == ReplyState::Delivered {
                exit::OK
            } else {
                exit::NEEDS_HUMAN
            };
            report(
                ctx,
                name,
                attempt.number,
                r.state.as_str(),
                "settled",
                &id,
                &line,
                code,
            )
        }
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one record, spelled out at each call"
)]
fn report(
    ctx: &Context,
    name: &StepName,
    attempt: u32,
    reply_state: &str,
    outcome: &str,
    detail: &serde_json::Value,
    line: &str,
    code: u8,
) -> anyhow::Result<u8> {
    if ctx.out.is_json() {
        let record = ActionRecord::new(
            &name.workflow,
            &name.step,
            attempt,
            "reply",
            outcome,
            detail,
        )
        .with_reply_state(reply_state);
        ctx.out.record(&record.to_value())?;
        ctx.out.record(&json!({
            "type": "summary",
            "command": "reply",
            "outcomes": {outcome: 1},
            "exitCode": code,
        }))?;
    } else {
        ctx.out.line(line)?;
    }
    Ok(code)
}
