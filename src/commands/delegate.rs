//! `delegate`: commit the intent, then send.
//!
//! Order, which is what makes a crash anywhere recoverable:
//! 1. Validate everything (step name, URL, metadata, the token variable): a usage error leaves
//!    nothing journaled.
//! 2. Commit the intent (fresh UUIDv4 messageId and contextId) — crash point `after-intent`.
//! 3. Fetch the Agent Card, store it in `agents`, journal the chosen endpoint on the attempt.
//! 4. Send `SendMessage` (`returnImmediately: true`, `role: ROLE_USER`, our ids) — crash point
//!    `after-send`, before anything of the answer is journaled.
//! 5. Journal the task (or the direct reply, or the refusal).
//!
//! `--skill ID` picks the first registered agent advertising the skill (`bind_agent`, before
//! anything is committed); the step stays bound to the skill, so re-delegation can pick another.
//! Without `--token-env`, a registered agent's own credential variable is used.
//!
//! Idempotent per step: a re-run never creates a second intent. An `INTENT` attempt with no
//! endpoint journaled was never sent and is sent now; one with an endpoint is looked for first
//! (`recovery::lookup`) and resent with the SAME messageId only when the look proves nothing was
//! created, else it becomes `UNCERTAIN` (exit 4); after `resolve --as resend` it is sent once
//! without a look. A step with a known task is printed, exit 0.
//! Remote text is made inert before it reaches a terminal. Steps 3 to 5 are the shared send path
//! (`recovery::send`), which claims the attempt's lease first, so a `reconcile` or another
//! `delegate` working on the same step at once never sends it twice. `--plan` sends its new
//! steps through the batch form of that path (`recovery::send::Batch`, in `saga`).
//!
//! `--follow`: once the send is journaled and the step has a task, it is followed as `follow`
//! does (`commands::util::follow::follow_step`: events journaled before shown, the same output), and
//! the exit code is then `follow`'s: 0 terminal, 4 a question or LOST, 3 still running or
//! reconnects spent. A step without a task (REPLIED, REFUSED, UNCERTAIN, a send whose outcome is
//! unknown) is not followed and keeps the delegation's exit code. `--plan` with `--follow` is a
//! usage error (follow each step with `follow`, or let `reconcile --follow-for` follow them all).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde_json::{Value, json};

use crate::a2a::{
    A2aClient, A2aError, Credential, ErrorClass, ProtocolVersion, WireBinding, card_url_for,
    redact_url,
};
use crate::clock::rfc3339;
use crate::commands::report::SendSteps;
use crate::commands::report::records::{self, ActionRecord};
use crate::commands::util::hints::HintText as _;
use crate::context::Context;
use crate::crash::{self, Point};
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    Attempt, AttemptState, Binding, InspectFilter, IntentOutcome, Journal, NeedsHuman, NewIntent,
    PushConfig, Step, StepName, StepSpec, Target,
};
use crate::output::BrokenPipe;
use crate::recovery::decide;
use crate::recovery::follow::FollowOptions;
use crate::recovery::lookup;
use crate::recovery::push;
use crate::recovery::send::{Outgoing, Sender, Sent, Stage, card_failure_code};
use crate::sanitize::inert;

use super::util::flags::{given_credential, interface_choice};
use super::util::follow::{Followed, follow_step};
use super::util::records::{Chain, attempt_record};

/// Delegates a step to an agent: the intent is journaled first, then sent.
///
/// Idempotent per step: calling it again never creates a second intent; an attempt whose send
/// outcome is unknown is looked for on the agent first and resent (same messageId) only when
/// the look proves nothing was created.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover delegate trip-42/hotel --agent http://127.0.0.1:8001 \"book a room\"
  a2a-recover delegate trip-42/car --skill car --token-env CAR_TOKEN \"a car\"
  a2a-recover delegate trip-42/flight --agent http://127.0.0.1:8001 --follow \\
      \"book a flight\"
  a2a-recover delegate --plan trip.toml
  # the text from standard input:
  echo \"a long request\" | a2a-recover delegate trip-42/note --agent URL -")]
pub struct DelegateArgs {
    /// The step, `WORKFLOW/STEP` (a bare name means `default/NAME`).
    #[arg(required_unless_present = "plan", conflicts_with = "plan")]
    pub step: Option<String>,
    /// The message text; `-` reads it from standard input.
    #[arg(required_unless_present = "plan", conflicts_with = "plan", value_parser = crate::cli::text_arg)]
    pub text: Option<String>,
    /// The agent's base URL or Agent Card URL.
    #[arg(long, value_name = "URL", conflicts_with_all = ["skill", "plan"])]
    pub agent: Option<String>,
    /// Picks the first registered agent advertising this skill (`agents add`).
    #[arg(long, value_name = "ID", conflicts_with = "plan")]
    pub skill: Option<String>,
    /// The environment variable holding the agent's bearer token or API key (placed as its card
    /// asks; only its name is journaled).
    #[arg(long, value_name = "VAR", conflicts_with = "plan")]
    pub token_env: Option<String>,
    /// A command printing the agent's bearer token or API key on stdout, run without a shell
    /// when one is needed (the command is journaled, never what it prints).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["plan", "token_env"])]
    pub token_cmd: Option<String>,
    /// JSON object sent as the message's `metadata`.
    #[arg(long, value_name = "JSON", conflicts_with = "plan")]
    pub metadata: Option<String>,
    /// JSON object sent as one data part beside the text (structured input).
    #[arg(long, value_name = "JSON", conflicts_with = "plan")]
    pub data: Option<String>,
    /// Attempt budget for this step, across all agents.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,
    /// The step has a side effect that `compensate` must undo and verify.
    #[arg(
        long,
        requires = "compensation",
        requires = "verification",
        conflicts_with = "plan"
    )]
    pub effect: bool,
    /// Compensation: a message sent to the step's agent.
    #[arg(long, value_name = "TEXT", group = "compensation", requires = "effect")]
    pub compensate: Option<String>,
    /// Compensation: a command run with `sh -c`.
    #[arg(long, value_name = "CMD", group = "compensation", requires = "effect")]
    pub compensate_cmd: Option<String>,
    /// Verification: a command (exit 0 = exists, 1 = absent, else unknown).
    #[arg(long, value_name = "CMD", group = "verification", requires = "effect")]
    pub verify_cmd: Option<String>,
    /// Verification: a URL (2xx = exists, 404 = absent, else unknown).
    #[arg(long, value_name = "URL", group = "verification", requires = "effect")]
    pub verify_url: Option<String>,
    /// Follows the task after sending, as `follow` does.
    #[arg(long)]
    pub follow: bool,
    /// Delegates a whole workflow from a TOML plan file.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Sends credentials to an interface on another origin than the card's.
    #[arg(long)]
    pub allow_cross_origin: bool,
    /// How far the agent's clock may be behind ours when searching by time.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub clock_skew: Duration,
    /// Timeout for compensation and verification commands.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
    /// Forces the agent's binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from its card.
    #[arg(long, value_name = "BINDING", conflicts_with = "plan")]
    pub binding: Option<WireBinding>,
    /// Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card.
    #[arg(long, value_name = "VERSION", conflicts_with = "plan")]
    pub protocol: Option<ProtocolVersion>,
    /// How long an Agent Card that cannot be read or reached is waited out (from the attempt's
    /// first card failure) before the attempt needs a human.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub card_patience: Duration,
    /// Asks the agent to push each change of the task to URL (a running `listen`'s public
    /// base; the agent posts to `URL/push/CONFIG_ID`). Default: the agent's registration, else
    /// `A2A_RECOVER_PUSH_URL`.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
    /// Asks the agent for no pushes, whatever the plan, the registry or the environment say.
    #[arg(long, conflicts_with = "push")]
    pub no_push: bool,
}

/// A validated request.
#[derive(Debug)]
struct Request {
    spec: StepSpec,
    card_url: String,
    /// The credential the send will carry, checked before anything is committed; each send
    /// reads its attempt's journaled one ([`Delegation::outgoing`]).
    credential: Option<Credential>,
    clock_skew: Duration,
    card_patience: Duration,
    /// The push URL given (`--push`, a plan step's `push`); ignored with `no_push`.
    push: Option<String>,
    /// `--no-push`.
    no_push: bool,
}

/// Reads `--data`: one data part, a JSON object.
fn data_arg(args: &DelegateArgs) -> Result<Option<serde_json::Value>, CliError> {
    args.data
        .as_deref()
        .map(|json| super::util::data_object(json, "--data"))
        .transpose()
}

/// Validates the flags; nothing is journaled when this fails.
fn validate(args: &DelegateArgs) -> Result<Request, CliError> {
    let (Some(step), Some(text)) = (&args.step, &args.text) else {
        return Err(CliError::usage("a STEP and a TEXT are required"));
    };
    let name = StepName::parse(step).map_err(|e| {
        CliError::usage(e.to_string())
            .hint("write WORKFLOW/STEP (e.g. `trip-42/hotel`), or a bare STEP for `default/STEP`")
    })?;
    if text.trim().is_empty() {
        return Err(CliError::usage("the message TEXT is empty")
            .hint("give the request to send, e.g. \"book a room for two nights\""));
    }
    let (binding, card_url) =
        match (&args.agent, &args.skill) {
            (Some(agent), _) => {
                let card_url = card_url_for(agent).map_err(|e| {
                    let hint = e.hint_text().unwrap_or_default();
                    CliError::usage(format!("bad --agent: {e}")).hint(hint)
                })?;
                (Binding::Agent(card_url.clone()), card_url)
            }
            // The agent is chosen from the registry once the journal is open (`bind_agent`).
            (None, Some(skill)) => (Binding::Skill(skill_arg(skill)?), String::new()),
            (None, None) => {
                return Err(CliError::usage("`--agent URL` or `--skill ID` is required").hint(
                "pass the agent's base URL or Agent Card URL, or a skill of a registered agent \
                 (`a2a-recover agents list`)",
            ));
            }
        };
    let metadata = match &args.metadata {
        None => None,
        Some(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Some(m),
            Ok(_) => {
                return Err(CliError::usage("--metadata must be a JSON object")
                    .hint(r#"e.g. --metadata '{"trip": 42}'"#));
            }
            Err(e) => {
                return Err(
                    CliError::usage(format!("--metadata is not valid JSON: {e}"))
                        .hint(r#"e.g. --metadata '{"trip": 42}'"#),
                );
            }
        },
    };
    let mut spec = StepSpec {
        name,
        text: text.clone(),
        binding,
        token_env: args.token_env.clone(),
        token_cmd: args.token_cmd.clone(),
        metadata,
        max_attempts: args.max_attempts,
        allow_cross_origin: args.allow_cross_origin,
        interface: interface_choice(args.binding, args.protocol)?,
        effect: None,
        compensate: None,
        verify: None,
        cwd: None,
        data: data_arg(args)?,
    };
    saga::apply_effect_flags(args, &mut spec)?;
    let push = args.push.as_deref().map(push_arg).transpose()?;
    Ok(Request {
        spec,
        card_url,
        // Read or run by `run`, once everything else is checked.
        credential: None,
        clock_skew: args.clock_skew,
        card_patience: args.card_patience,
        push,
        no_push: args.no_push,
    })
}

/// Checks a push URL (`--push`, a plan step's `push`): usage error, exit 2.
fn push_arg(url: &str) -> Result<String, CliError> {
    crate::recovery::push::base_url(url).map_err(|e| {
        CliError::usage(format!("bad push URL: {e}"))
            .hint("give a running `listen`'s public base, e.g. https://hooks.example.com")
    })
}

/// Refuses a re-run whose definition differs from the journaled step.
fn check_same(journaled: &Step, req: &StepSpec) -> Result<(), CliError> {
    let j = &journaled.spec;
    let differs = if j.text != req.text {
        Some("text")
    } else if j.binding != req.binding {
        Some("agent")
    } else if j.token_env != req.token_env {
        Some("--token-env")
    } else if j.token_cmd != req.token_cmd {
        Some("--token-cmd")
    } else if j.metadata != req.metadata {
        Some("--metadata")
    } else {
        None
    };
    match differs {
        None => Ok(()),
        Some(what) => Err(CliError::usage(format!(
            "step `{}` is already journaled with a different {what}",
            j.name
        ))
        .hint(format!(
            "a journaled step keeps its definition; use a new step name, or see it with \
             `a2a-recover inspect {}`",
            j.name
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// --skill and the registry (`agents`)
// ---------------------------------------------------------------------------------------------

/// Checks a `--skill` id: non-empty, one line.
fn skill_arg(skill: &str) -> Result<String, CliError> {
    let id = skill.trim();
    if id.is_empty() || id.chars().any(char::is_control) {
        return Err(CliError::usage(format!("bad --skill `{}`", inert(skill)))
            .hint("give a skill id as registered agents list it (`a2a-recover agents list`)"));
    }
    Ok(id.to_owned())
}

/// The usage error of a `--skill` no registered agent advertises.
fn no_agent_with(skill: &str) -> CliError {
    CliError::usage(format!(
        "no registered agent advertises the skill `{}`",
        inert(skill)
    ))
    .hint(
        "register one with `a2a-recover agents add URL`; `a2a-recover agents list` shows each \
         agent's skills",
    )
}

/// Chooses the agent of a `--skill` step, and checks the credential its send will carry;
/// nothing is journaled here.
///
/// A new `--skill` step goes to the first registered agent advertising the skill
/// (`recovery::registry::pick_agent`); a re-run continues with the agent of the step's latest
/// attempt, wherever re-delegation took it. A new step sends with `--token-env` / `--token-cmd`,
/// else the registered agent's credential (`agents add --token-env`); a re-run sends with the
/// credential journaled on its latest attempt (the step's own only at the agent it was given
/// for, never at an agent re-delegation chose). An unset variable is a usage error before
/// anything is committed or sent.
async fn bind_agent(journal: &Journal, req: &mut Request) -> anyhow::Result<()> {
    let latest = journal
        .step(&req.spec.name)?
        .and_then(|record| record.latest().cloned());
    let mut registered = None;
    if let Binding::Skill(skill) = &req.spec.binding {
        if let Some(url) = latest.as_ref().and_then(|a| a.agent_url.clone()) {
            // A different binding is refused by `check_same` with the journaled step's words.
            req.card_url = url;
        } else {
            let agent = crate::recovery::registry::pick_agent(journal, skill, &[])?
                .ok_or_else(|| no_agent_with(skill))?;
            req.card_url.clone_from(&agent.card_url);
            registered = Some(agent);
        }
    }
    let (var, cmd) = if let Some(attempt) = &latest {
        attempt.token_source()
    } else if req.credential.is_some() {
        return Ok(());
    } else {
        let agent = match registered {
            Some(agent) => Some(agent),
            None => journal.agent(&req.card_url)?,
        };
        let (var, cmd) = agent
            .as_ref()
            .map(|a| crate::recovery::registry::credential_source(&req.spec, a))
            .unwrap_or_default();
        (var.map(str::to_owned), cmd.map(str::to_owned))
    };
    req.credential = credential_for(&req.card_url, var.as_deref(), cmd.as_deref()).await?;
    Ok(())
}

/// Reads (or runs the command for) the credential an agent's attempt carries; an unusable one
/// is a usage error naming the agent, never the token.
async fn credential_for(
    card_url: &str,
    var: Option<&str>,
    cmd: Option<&str>,
) -> Result<Option<Credential>, CliError> {
    if let Some(cmd) = cmd {
        Credential::from_cmd(cmd).await.map(Some).map_err(|e| {
            CliError::usage(format!(
                "{e}: the agent `{}` takes its token from it",
                agent_shown(card_url)
            ))
            .hint(e.hint_text().unwrap_or_default())
        })
    } else if let Some(var) = var {
        Credential::from_env(var).map(Some).map_err(|e| {
            CliError::usage(format!(
                "{e}: the agent `{}` takes its token from it",
                agent_shown(card_url)
            ))
            .hint(format!(
                "export `{var}` with the agent's bearer token, or pass --token-env VAR"
            ))
        })
    } else {
        Ok(None)
    }
}

/// Returns an agent's card URL shortened to its base URL for messages (redacted).
fn agent_shown(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    redact_url(&base)
}

/// Runs `delegate`.
pub(crate) async fn run(ctx: &Context, args: &DelegateArgs) -> anyhow::Result<u8> {
    if let Some(plan) = &args.plan {
        return saga::run_plan(ctx, args, plan).await;
    }
    let mut req = validate(args)?;
    req.credential = given_credential(args.token_env.as_deref(), args.token_cmd.as_deref()).await?;
    if let Binding::Skill(skill) = &req.spec.binding
        && !ctx.journal_exists()?
    {
        // No journal, no registry: refused before a journal is created.
        return Err(no_agent_with(skill).into());
    }
    let journal = ctx.open_journal_for_writing()?;
    saga::refuse_if_not_active(&journal, &req.spec.name.workflow)?;
    bind_agent(&journal, &mut req).await?;
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    ctx.out.begin("delegate")?;
    let mut d = Delegation {
        ctx,
        journal: &journal,
        client: &client,
        req: &req,
        outcomes: BTreeMap::new(),
        in_plan: false,
    };
    let code = d.delegate().await?;
    // An agent that asked to wait longer than we do: later passes skip it until then.
    crate::recovery::not_before::journal_fresh(&client, &journal)?;
    let followed = if args.follow {
        Box::pin(follow_after(ctx, &journal, &client, &req.spec.name)).await?
    } else {
        None
    };
    let code = followed.as_ref().map_or(code, |f| f.code);
    if ctx.out.is_json() {
        let mut record = json!({
            "type": "summary",
            "command": "delegate",
            "outcomes": d.outcomes,
            "exitCode": code,
        });
        if let Some(Value::Object(mut f)) = followed.map(|f| f.record) {
            f.remove("type");
            f.remove("command");
            record["follow"] = Value::Object(f);
        }
        ctx.out.record(&record)?;
    } else if let Some(f) = followed {
        ctx.out.line(&f.line)?;
    }
    Ok(code)
}

/// `--follow`: once the send is journaled, follows the step's task as `follow` does (its
/// events shown as they are journaled) and returns what that came to; `None` when the step
/// has no task to follow (a direct reply, a refusal, a send whose outcome is unknown), whose
/// exit code stays the delegation's.
async fn follow_after(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    name: &StepName,
) -> anyhow::Result<Option<Followed>> {
    let Some(record) = journal.step(name)? else {
        return Ok(None);
    };
    if !record.latest().is_some_and(|a| a.state.has_task()) {
        return Ok(None);
    }
    let opts = FollowOptions::for_idle_timeout(ctx.stream_idle_timeout());
    Ok(Some(
        follow_step(ctx, journal, client, &record, &opts).await?,
    ))
}

/// One delegation in progress.
struct Delegation<'a> {
    ctx: &'a Context,
    journal: &'a Journal,
    client: &'a A2aClient,
    req: &'a Request,
    outcomes: BTreeMap<String, u32>,
    /// One step of a `--plan`: with `-q`, its line is printed only when it needs more than
    /// the plan asked (exit code not 0).
    in_plan: bool,
}

impl Delegation<'_> {
    fn step(&self) -> &StepName {
        &self.req.spec.name
    }

    /// Prints an `action` record (JSON Lines only).
    fn action(
        &self,
        attempt: &Attempt,
        action: &str,
        outcome: &str,
        detail: &Value,
    ) -> Result<(), BrokenPipe> {
        if self.ctx.out.is_json() {
            let step = self.step();
            let record = ActionRecord::new(
                &step.workflow,
                &step.step,
                attempt.number,
                action,
                outcome,
                detail,
            );
            self.ctx.out.record(&record.to_value())?;
        }
        Ok(())
    }

    /// Prints the step's latest `attempt` record (JSON Lines only), as `inspect` shows it.
    fn row(&self) -> anyhow::Result<()> {
        if !self.ctx.out.is_json() {
            return Ok(());
        }
        let page = self.journal.inspect(&InspectFilter {
            target: Some(Target::Step(self.step().clone())),
            ..InspectFilter::default()
        })?;
        let chain = Chain::of(self.journal, &page.rows)?;
        if let Some(latest) = page.rows.iter().find(|r| r.is_latest) {
            self.ctx.out.record(&attempt_record(latest, &chain))?;
        }
        Ok(())
    }

    /// Prints the human result line and counts the final outcome.
    fn finish(&mut self, outcome: &str, line: &str, code: u8) -> anyhow::Result<u8> {
        *self.outcomes.entry(outcome.to_owned()).or_default() += 1;
        let quiet = self.in_plan && self.ctx.out.is_quiet() && code == exit::OK;
        if !self.ctx.out.is_json() && !quiet {
            self.ctx.out.line(line)?;
        }
        Ok(code)
    }

    /// Reports a remote failure on stderr with its hint.
    fn report(&self, err: A2aError) {
        let err = anyhow::Error::new(err);
        let classified = crate::error::classify(&err);
        self.ctx
            .out
            .error_report(&crate::error::render(&err, &classified.hints));
    }

    async fn delegate(&mut self) -> anyhow::Result<u8> {
        let intent = NewIntent {
            spec: self.req.spec.clone(),
            agent_url: Some(self.req.card_url.clone()),
            message_id: crate::sim_seam::new_uuid().to_string(),
            context_id: Some(crate::sim_seam::new_uuid().to_string()),
        };
        let outcome = self
            .journal
            .create_intents(std::slice::from_ref(&intent))
            .context("failed to commit the intent")?
            .remove(0);
        self.continue_with(outcome).await
    }

    /// Continues from what committing the intent did: sends a new intent, resumes an existing
    /// step (the plan path commits every intent first, then calls this per step).
    async fn continue_with(&mut self, outcome: IntentOutcome) -> anyhow::Result<u8> {
        match outcome {
            IntentOutcome::Created(attempt) => {
                self.action(
                    &attempt,
                    "intent",
                    AttemptState::Intent.as_str(),
                    &json!({"messageId": attempt.message_id, "contextId": attempt.context_id}),
                )?;
                crash::at(Point::AfterIntent, &self.step().to_string());
                self.leased(attempt, false).await
            }
            IntentOutcome::Existing(record) => {
                check_same(&record.step, &self.req.spec)?;
                saga::check_same_effect(&record.step, &self.req.spec)?;
                let latest = record
                    .latest()
                    .cloned()
                    .with_context(|| format!("step `{}` has no attempt", self.step()))?;
                self.resume(latest).await
            }
        }
    }

    /// Continues a journaled step.
    async fn resume(&mut self, attempt: Attempt) -> anyhow::Result<u8> {
        let step = self.step().to_string();
        let agent = agent_shown(attempt.agent_url.as_deref().unwrap_or_default());
        match attempt.state {
            AttemptState::Intent => self.leased(attempt, true).await,
            AttemptState::Uncertain => {
                self.action(
                    &attempt,
                    "existing",
                    "UNCERTAIN",
                    &json!({"error": attempt.error}),
                )?;
                self.row()?;
                let line = format!(
                    "{step} is UNCERTAIN: its send's outcome is unknown and the agent cannot be \
                     searched conclusively; nothing was resent. Decide with `a2a-recover \
                     resolve {step} --as resend|abandoned|done --reason \"…\"`."
                );
                self.finish("UNCERTAIN", &line, exit::NEEDS_HUMAN)
            }
            AttemptState::Refused => {
                self.action(
                    &attempt,
                    "existing",
                    "REFUSED",
                    &json!({"error": attempt.error}),
                )?;
                self.row()?;
                let line = format!(
                    "{step} was refused by {agent} (REFUSED): {}.",
                    inert(attempt.error.as_deref().unwrap_or("no detail"))
                );
                self.finish("REFUSED", &line, exit::NEEDS_HUMAN)
            }
            AttemptState::Replied => {
                self.action(&attempt, "existing", "REPLIED", &json!({}))?;
                self.row()?;
                let line = format!(
                    "{step} is already delegated to {agent}: it answered directly (REPLIED)."
                );
                self.finish("REPLIED", &line, exit::OK)
            }
            state => {
                let task = attempt.task_id.clone().unwrap_or_default();
                self.action(
                    &attempt,
                    "existing",
                    state.as_str(),
                    &json!({"taskId": task}),
                )?;
                self.row()?;
                let line = format!(
                    "{step} is already delegated to {agent} as task {} ({state}).",
                    inert(&task)
                );
                self.finish(state.as_str(), &line, exit::OK)
            }
        }
    }

    /// The message of an attempt: the step's text and metadata, with its predecessor's task
    /// and failure when it has one; the credential journaled on the attempt (chosen for its
    /// own agent when its intent was committed), never one given for another agent.
    async fn outgoing(&self, attempt: &Attempt) -> anyhow::Result<Outgoing> {
        let held = if self.req.no_push {
            None
        } else {
            self.journal.push_config(attempt.id)?
        };
        self.outgoing_held(attempt, held.as_ref()).await
    }

    /// [`Delegation::outgoing`] with the attempt's push config already read (`held`; a plan
    /// reads those of its new attempts in one statement).
    async fn outgoing_held(
        &self,
        attempt: &Attempt,
        held: Option<&PushConfig>,
    ) -> anyhow::Result<Outgoing> {
        let previous = match attempt.previous_attempt {
            Some(p) => Some(self.journal.attempt(p)?),
            None => None,
        };
        // Checked before anything was committed (`bind_agent`, the plan's checks); a token
        // command is not run again (its token is cached for the process).
        let credential = credential_for(
            attempt.agent_url.as_deref().unwrap_or(&self.req.card_url),
            attempt.token_env.as_deref(),
            attempt.token_cmd.as_deref(),
        )
        .await?;
        Ok(Outgoing {
            text: decide::previous_attempt_text(&self.req.spec.text, previous.as_ref()),
            metadata: decide::previous_attempt_metadata(
                self.req.spec.metadata.as_ref(),
                previous.as_ref(),
            ),
            data: self.req.spec.data.clone(),
            credential,
            allow_cross_origin: self.req.spec.allow_cross_origin,
            reference_task_ids: Vec::new(),
            interface: self.req.spec.interface,
            push: if self.req.no_push {
                None
            } else {
                push::base_with(self.journal, attempt, held, self.req.push.as_deref())?
            },
        })
    }

    /// Sends the attempt (or, on a re-run, resumes it) through the shared send path
    /// (`recovery::send`): under the attempt's lease, re-read after the claim, looked for first
    /// when it may have been sent. Two runs of the same step at once, or a run beside a
    /// `reconcile`, never both send.
    async fn leased(&mut self, attempt: Attempt, resume: bool) -> anyhow::Result<u8> {
        if resume && lookup::never_sent(&attempt) {
            self.action(&attempt, "look", "never-sent", &json!({}))?;
        }
        let out = self.outgoing(&attempt).await?;
        let step = self.step().clone();
        let sink = SendSteps::new(&self.ctx.out, HashMap::from([(attempt.id, &step)]));
        let sender = Sender {
            sink: &sink,
            journal: self.journal,
            client: self.client,
            clock: self.ctx.clock.as_ref(),
            clock_skew: self.req.clock_skew,
            lease_ttl: self.ctx.send_lease_ttl,
            sweeps: None,
            card_patience: self.req.card_patience,
        };
        let step = self.step().to_string();
        // An operator's `resolve --as resend` is honoured by the send path, under the lease.
        // The attempt as the intent's commit (or the step's read) returned it: the send path
        // reads it again only under its lease.
        let sent = sender.deliver_read(attempt, &out, &step).await?;
        self.sent(sent).await
    }

    /// Reports what the send path did.
    async fn sent(&mut self, sent: Sent) -> anyhow::Result<u8> {
        let step = self.step().to_string();
        let agent = agent_shown(&self.req.card_url);
        match sent {
            Sent::Busy(attempt, lease) => {
                self.action(&attempt, "claim", "held", &held_detail(&lease))?;
                let line = format!(
                    "{step} is being delegated by another a2a-recover (pid {} on {}); nothing \
                     was sent. Run the same command again later.",
                    lease.pid,
                    inert(&lease.host)
                );
                self.finish("INTENT", &line, exit::WORK_REMAINS)
            }
            // Another process settled it between our read and our claim: show it as it is.
            Sent::Settled(attempt) => Box::pin(self.resume(attempt)).await,
            Sent::Found(now) => {
                let task = now.task_id.clone().unwrap_or_default();
                self.action(
                    &now,
                    "look",
                    "found",
                    &json!({"taskId": task, "state": now.state.as_str()}),
                )?;
                let line = format!(
                    "found {step} on {agent} as task {} ({}); nothing was resent.",
                    inert(&task),
                    now.state
                );
                self.finish(now.state.as_str(), &line, exit::OK)
            }
            Sent::Uncertain(now, why) => {
                let reason = records::unprovable_words(&why);
                self.action(&now, "look", "unprovable", &json!({"reason": reason}))?;
                let line = format!(
                    "{step} is UNCERTAIN: {}; nothing was resent. Decide with `a2a-recover \
                     resolve {step} --as resend|abandoned|done --reason \"…\"`.",
                    inert(&reason)
                );
                self.finish("UNCERTAIN", &line, exit::NEEDS_HUMAN)
            }
            Sent::InFlight(_, until) => {
                let line = format!(
                    "{step} stays INTENT: {agent} holds no task for it yet, but its last send \
                     may still be in flight until {}; nothing was resent. Run the same command \
                     again after that.",
                    rfc3339(until)
                );
                self.finish("INTENT", &line, exit::WORK_REMAINS)
            }
            Sent::Failed {
                attempt,
                stage,
                error,
            } => self.failed(&attempt, stage, error),
            Sent::NeedsHuman {
                attempt,
                stage,
                error,
                why,
            } => self.needs_human(&attempt, stage, error, &why),
            Sent::Refused(attempt, error) => {
                self.action(
                    &attempt,
                    "send",
                    "REFUSED",
                    &json!({"error": error.summary()}),
                )?;
                self.report(error);
                let line = format!("{step} was refused by {agent} (REFUSED); nothing was created.");
                self.finish("REFUSED", &line, exit::NEEDS_HUMAN)
            }
            Sent::Task(now) => {
                let task_id = now.task_id.clone().unwrap_or_default();
                self.action(
                    &now,
                    "send",
                    now.state.as_str(),
                    &json!({"taskId": task_id, "contextId": now.context_id}),
                )?;
                let line = format!(
                    "delegated {step} to {agent} as task {} ({}).",
                    inert(&task_id),
                    now.state
                );
                self.finish(now.state.as_str(), &line, exit::OK)
            }
            Sent::Replied(now) => {
                self.action(
                    &now,
                    "send",
                    "REPLIED",
                    &json!({"contextId": now.context_id}),
                )?;
                let line = format!("delegated {step} to {agent}: it answered directly (REPLIED).");
                self.finish("REPLIED", &line, exit::OK)
            }
        }
    }

    /// Reports an attempt that stays `INTENT` but needs a human: its card unreachable for
    /// longer than the card patience (the first pass that reaches the agent sends it), or the
    /// send answered with more than `--max-response-size` (the next pass looks for its task).
    fn needs_human(
        &mut self,
        attempt: &Attempt,
        stage: Stage,
        error: A2aError,
        why: &NeedsHuman,
    ) -> anyhow::Result<u8> {
        let step = self.step().to_string();
        // The outcomes a failed card, look or send has always had: a send over the size cap
        // is one whose outcome is unknown.
        let outcome = if stage == Stage::Send {
            "unknown"
        } else {
            "error"
        };
        self.action(
            attempt,
            stage.as_str(),
            outcome,
            &json!({"error": error.summary(), "needsHuman": why.detail()}),
        )?;
        self.report(error);
        let first = if why.cause == NeedsHuman::CARD_UNREACHABLE {
            "Bring the agent back (the next `a2a-recover reconcile` sends it)"
        } else if why.cause == NeedsHuman::BAD_TASK_ID {
            "Ask the agent's operator about the task it created (nothing can read it, and \
             nothing is resent)"
        } else {
            "Raise --max-response-size if the agent's answers are this large (the next \
             `a2a-recover reconcile` looks for its task; nothing is resent)"
        };
        let line = format!(
            "{step} stays INTENT and needs a human: {}. {first}, or `a2a-recover resolve \
             {step} --as done|abandoned --reason \"…\"`.",
            inert(&why.reason)
        );
        self.finish("INTENT", &line, exit::NEEDS_HUMAN)
    }

    /// Reports a card fetch, look or send that failed: the attempt stays `INTENT`.
    fn failed(&mut self, attempt: &Attempt, stage: Stage, error: A2aError) -> anyhow::Result<u8> {
        let step = self.step().to_string();
        let agent = agent_shown(&self.req.card_url);
        match stage {
            Stage::Card => {
                self.action(attempt, "card", "error", &json!({"error": error.summary()}))?;
                // An unusable card is the agent answering garbage this pass: nothing was sent
                // and the attempt stays INTENT, so "run again later" (exit 3), as `reconcile`
                // says of the same card. (Only `agents add` exits 1 on an invalid card.)
                let code = card_failure_code(&error);
                self.report(error);
                let line = format!(
                    "{step} stays INTENT: the agent card could not be read; nothing was sent. {}",
                    again(code)
                );
                self.finish("INTENT", &line, code)
            }
            Stage::Look => {
                self.action(attempt, "look", "error", &json!({"error": error.summary()}))?;
                let code = error.exit_code();
                self.report(error);
                let line = format!(
                    "{step} stays INTENT: could not search {agent} for it; nothing was resent. {}",
                    again(code)
                );
                self.finish("INTENT", &line, code)
            }
            Stage::Send => {
                let (outcome, what) = if error.class() == ErrorClass::NotSent {
                    ("not-sent", "nothing was sent")
                } else {
                    (
                        "unknown",
                        "the send's outcome is unknown; it will be looked for before any resend",
                    )
                };
                self.action(attempt, "send", outcome, &json!({"error": error.summary()}))?;
                let code = error.exit_code();
                self.report(error);
                let line = format!("{step} stays INTENT: {what}. {}", again(code));
                self.finish("INTENT", &line, code)
            }
        }
    }
}

/// What to do after a failed card fetch, look or send: wait for a transient problem (exit 3),
/// fix any other first (the error and its hint are on stderr).
fn again(code: u8) -> &'static str {
    if code == exit::WORK_REMAINS {
        "Run the same command again later."
    } else {
        "Fix what the error says, then run the same command again."
    }
}

mod saga;

/// The detail of a `claim` action found `held`: who holds the lease, and until when.
fn held_detail(lease: &crate::journal::Lease) -> serde_json::Value {
    json!({"pid": lease.pid, "host": lease.host, "owner": lease.owner, "expiresAt": rfc3339(lease.expires_at)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_shown_by_base_url() {
        assert_eq!(
            agent_shown("http://127.0.0.1:8001/.well-known/agent-card.json"),
            "http://127.0.0.1:8001/"
        );
        assert_eq!(
            agent_shown("http://h/agents/card.json?key=s3cret"),
            "http://h/agents/card.json?key=REDACTED"
        );
    }
}
