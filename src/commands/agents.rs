//! `agents`: the registry of Agent Cards used by `--skill` and re-delegation.
//!
//! - `agents add URL [--token-env VAR]` fetches the card, validates it (a JSON-RPC interface
//!   for A2A 1.x, and skills with ids), and stores it: the card as received (name, interfaces,
//!   capabilities, skills with ids and tags), the chosen interface, the skill ids, the NAME of
//!   the credential variable (never its value) and the fetch time. Adding a registered agent
//!   again refreshes its card and keeps its place in the order (and its variable, unless a new
//!   one is given). An unreachable agent or an invalid card exits 1 and stores nothing: the card
//!   is fetched and checked before the journal is written (or even created).
//! - `agents list` shows the registry in the order agents are tried: first added, first tried.
//! - `agents remove URL` takes an agent out of the registry; attempts already journaled keep it.
//! - `agents probe URL [--send-test TEXT]` measures the agent's recovery profile
//!   (`recovery::probe`) and journals it on the agent's row (registered or not); `agents list`
//!   shows it. Without `--send-test` it creates no remote task. An unreachable agent or a card
//!   it cannot use exits 1 and stores nothing.
//!
//! Agents are keyed by their Agent Card URL (`card_url_for`): the base URL and the card URL name
//! the same agent. Card text is remote text: inert in tables, data in JSON.

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::a2a::{
    A2aClient, AgentCardInfo, Credential, Endpoint, InterfaceChoice, ProtocolVersion,
    WELL_KNOWN_CARD_PATH, WireBinding, card_url_for, redact_url,
};
use crate::clock::rfc3339;
use crate::commands::util::hints::HintText as _;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{self, Agent, AgentCard, AgentProfile, AgentPush, Journal, YesNo};
use crate::recovery::probe::{self, ProbeHow};
use crate::sanitize::inert;

use super::util::flags::{given_credential, interface_choice};
use super::util::records::health_fields;

/// Manages the registry of agents used by --skill and re-delegation.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover agents add http://127.0.0.1:8001 --token-env CAR_TOKEN
  a2a-recover agents list
  a2a-recover agents remove http://127.0.0.1:8001
  a2a-recover agents probe http://127.0.0.1:8001")]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,
}

/// The `agents` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Fetches, validates and stores an agent's card (again = refresh).
    #[command(after_help = "\
Examples:
  a2a-recover agents add http://127.0.0.1:8001
  a2a-recover agents add https://cars.example.com --token-env CAR_TOKEN")]
    Add {
        /// The agent's base URL or card URL.
        url: String,
        /// The environment variable holding its token or API key (only the name is stored).
        #[arg(long, value_name = "VAR")]
        token_env: Option<String>,
        /// A command printing its token or API key on stdout, run without a shell when one is
        /// needed (the command is stored, never what it prints).
        #[arg(long, value_name = "CMD", conflicts_with = "token_env")]
        token_cmd: Option<String>,
        /// This agent's own limit of requests in flight at once in a pass (instead of
        /// `reconcile --agent-concurrency`); kept by a refresh without it.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        concurrency: Option<u32>,
        /// This agent's own limit of requests per second in a pass (instead of `reconcile
        /// --agent-rate`); kept by a refresh without it.
        #[arg(long, value_name = "PER_SECOND", value_parser = super::util::flags::parse_rate)]
        rate: Option<f64>,
        /// Forces the binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from the card.
        #[arg(long, value_name = "BINDING")]
        binding: Option<WireBinding>,
        /// Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card.
        #[arg(long, value_name = "VERSION")]
        protocol: Option<ProtocolVersion>,
        /// Trusts the agent to de-duplicate by messageId: when its tasks cannot be searched
        /// (A2A v0.3 has no tasks/list), a send whose outcome is unknown is resent with the
        /// same messageId instead of waiting for a human.
        #[arg(long)]
        trust_dedup: bool,
        /// Asks the agent to push each change of its tasks to URL (a running `listen`'s public
        /// base) when a step is delegated to it without `--push` or `--no-push`.
        #[arg(long, value_name = "URL")]
        push: Option<String>,
        /// Lets a push from this agent make a step terminal, or record its question, without
        /// reading the task back first.
        #[arg(long)]
        trust_push: bool,
    },
    /// Lists registered agents in the order they are tried.
    #[command(after_help = "\
Examples:
  a2a-recover agents list
  a2a-recover agents list --format json")]
    List,
    /// Removes an agent from the registry.
    #[command(after_help = "\
Examples:
  a2a-recover agents remove http://127.0.0.1:8001")]
    Remove {
        /// The agent's URL as registered.
        url: String,
    },
    /// Measures and journals what recovery can rely on at an agent (creates no remote task
    /// unless --send-test is given).
    ///
    /// Reads the card and asks ListTasks and SubscribeToTask about a random context and task
    /// id: the bindings offered, whether ListTasks exists and honours its contextId and
    /// statusTimestampAfter filters, whether SubscribeToTask exists and the code it answers for
    /// a terminal task. `unknown` is never proof. The profile is journaled on the agent and
    /// shown by `agents list`; reconcile and delegate use it.
    #[command(after_help = "\
Examples:
  a2a-recover agents probe http://127.0.0.1:8001
  a2a-recover agents probe https://cars.example.com --token-env TOKEN -o json
  # creates one or two tasks on the agent:
  a2a-recover agents probe http://127.0.0.1:8001 --send-test ping")]
    Probe {
        /// The agent's base URL or card URL.
        url: String,
        /// The environment variable holding its token or API key (default: the one it was
        /// registered with).
        #[arg(long, value_name = "VAR")]
        token_env: Option<String>,
        /// A command printing its token or API key on stdout, run without a shell (default: the
        /// one it was registered with).
        #[arg(long, value_name = "CMD", conflicts_with = "token_env")]
        token_cmd: Option<String>,
        /// Also sends TEXT twice with one messageId and a fresh contextId (this creates one
        /// or two tasks): measures de-duplication by messageId, client context ids and
        /// history retention.
        #[arg(long, value_name = "TEXT")]
        send_test: Option<String>,
        /// Probes over this binding (`jsonrpc`, `http-json` or `grpc`) instead of the one the card
        /// would choose.
        #[arg(long, value_name = "BINDING")]
        binding: Option<WireBinding>,
        /// Probes over this A2A protocol version (`1.0` or `0.3`) instead of the one the card
        /// would choose.
        #[arg(long, value_name = "VERSION")]
        protocol: Option<ProtocolVersion>,
    },
}

/// Runs `agents`.
pub(crate) async fn run(ctx: &Context, args: &AgentsArgs) -> anyhow::Result<u8> {
    match &args.command {
        AgentsCommand::Add {
            url,
            token_env,
            token_cmd,
            concurrency,
            rate,
            binding,
            protocol,
            trust_dedup,
            push,
            trust_push,
        } => {
            let choice = interface_choice(*binding, *protocol)?;
            let limits = (*concurrency, *rate);
            let given = given_credential(token_env.as_deref(), token_cmd.as_deref()).await?;
            let push = AgentPush {
                url: push
                    .as_deref()
                    .map(crate::recovery::push::base_url)
                    .transpose()
                    .map_err(|e| CliError::usage(format!("bad --push: {e}")))?,
                trusted: *trust_push,
            };
            add(ctx, url, given, limits, choice, (*trust_dedup, push)).await
        }
        AgentsCommand::List => list(ctx),
        AgentsCommand::Remove { url } => remove(ctx, url),
        AgentsCommand::Probe {
            url,
            token_env,
            token_cmd,
            send_test,
            binding,
            protocol,
        } => {
            let choice = interface_choice(*binding, *protocol)?;
            let given = given_credential(token_env.as_deref(), token_cmd.as_deref()).await?;
            probe(ctx, url, given, send_test.as_deref(), choice).await
        }
    }
}

/// Returns the card URL for a URL given on the command line (a usage error if unusable).
fn card_url_arg(url: &str) -> Result<String, CliError> {
    card_url_for(url).map_err(|e| {
        let hint = e.hint_text().unwrap_or_default();
        CliError::usage(e.to_string()).hint(hint)
    })
}

/// Shows a card URL as the agent's base URL, redacted and inert.
fn shown(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    inert(&redact_url(&base))
}

/// Opens the journal only if it exists (reads must not create one); `write`: refuses one this
/// binary cannot write before any agent is asked anything.
fn existing_journal(ctx: &Context, write: bool) -> anyhow::Result<Option<Journal>> {
    if !ctx.journal_exists()? {
        return Ok(None);
    }
    if write {
        ctx.open_journal_for_writing().map(Some)
    } else {
        ctx.open_journal().map(Some)
    }
}

/// Returns the skill ids of a fetched card, or why the registry cannot use it.
fn skill_ids(info: &AgentCardInfo) -> Result<Vec<String>, String> {
    if info.card.skills.is_empty() {
        return Err("the card lists no skills, and the registry chooses agents by skill".into());
    }
    let mut ids: Vec<String> = Vec::with_capacity(info.card.skills.len());
    for (i, skill) in info.card.skills.iter().enumerate() {
        let id = skill.id.trim();
        if id.is_empty() {
            return Err(format!("skill {} of the card has an empty `id`", i + 1));
        }
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_owned());
        }
    }
    Ok(ids)
}

/// Returns the credential to talk to a known agent with: the one given, else the variable it
/// was registered with (a command runs on a blocking thread).
async fn credential(
    card_url: &str,
    given: Option<Credential>,
    registered: Option<&Agent>,
) -> Result<Option<Credential>, CliError> {
    let registered = registered.filter(|a| a.registered.is_some());
    let var = registered.and_then(|a| a.token_env.as_deref());
    let cmd = registered.and_then(|a| a.token_cmd.as_deref());
    match (given, var, cmd) {
        (Some(c), _, _) => Ok(Some(c)),
        (None, _, Some(cmd)) => Ok(Some(Credential::from_cmd(cmd).await.map_err(|e| {
            CliError::usage(format!(
                "{e}: `{}` was registered with --token-cmd",
                shown(card_url)
            ))
            .hint(e.hint_text().unwrap_or_default())
        })?)),
        (None, Some(var), None) => Ok(Some(Credential::from_env(var).map_err(|e| {
            CliError::usage(format!(
                "{e}: `{}` was registered with --token-env {var}",
                shown(card_url)
            ))
            .hint(format!(
                "export `{var}`, or give another variable with --token-env"
            ))
        })?)),
        (None, None, None) => Ok(None),
    }
}

async fn add(
    ctx: &Context,
    url: &str,
    given: Option<Credential>,
    limits: (Option<u32>, Option<f64>),
    choice: InterfaceChoice,
    (trust_dedup, push): (bool, AgentPush),
) -> anyhow::Result<u8> {
    let card_url = card_url_arg(url)?;
    let journal = existing_journal(ctx, true)?;
    let known = match &journal {
        Some(j) => j.agent(&card_url)?.filter(|a| a.registered.is_some()),
        None => None,
    };
    // A refresh without --token-env / --token-cmd keeps the credential the agent was
    // registered with.
    let credential = credential(&card_url, given, known.as_ref()).await?;
    ctx.out.begin("agents add")?;
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    // Exit 1 whatever the wire error, with its hint.
    let not_stored = |e: CliError| {
        anyhow::Error::new(e).context(format!(
            "`{}` was not registered; nothing was stored",
            shown(&card_url)
        ))
    };
    let wire_failure = |e: crate::a2a::A2aError| {
        let hint = e.hint_text();
        let mut failure = CliError::failure(e.to_string());
        failure.hint = hint;
        not_stored(failure)
    };
    let info = client
        .fetch_card(&card_url, credential.as_ref())
        .await
        .map_err(wire_failure)?;
    let chosen = info.choose(choice).map_err(wire_failure)?;
    let skills = skill_ids(&info).map_err(|why| {
        not_stored(
            CliError::failure(format!(
                "the agent card at `{}` is not usable: {why}",
                inert(&redact_url(&card_url))
            ))
            .hint("the agent must list its skills, each with an `id`, for --skill to find it"),
        )
    })?;
    let journal = match journal {
        Some(j) => j,
        None => ctx.open_journal_for_writing()?,
    };
    let token_var = credential.as_ref().and_then(Credential::env_var);
    let token_cmd = credential.as_ref().and_then(Credential::command);
    let agent = journal
        .register_agent(
            &AgentCard {
                card_url: card_url.clone(),
                interface_url: chosen.interface_url.clone(),
                protocol_version: Some(chosen.binding.version().as_str().to_owned()),
                binding: chosen.binding,
                tenant: chosen.tenant.clone(),
                card_json: info.raw.to_string(),
                skills,
            },
            token_var,
            token_cmd,
            trust_dedup,
        )
        .context("failed to store the agent card")?;
    store_limits(&journal, &card_url, limits)?;
    journal
        .set_agent_push(&card_url, &push)
        .context("failed to store the agent's push registration")?;
    let registered_at = journal.registered_at(&card_url)?;
    if ctx.out.is_json() {
        let health = journal.agent_health(&card_url)?;
        ctx.out
            .record(&agent_record(&agent, registered_at, health.as_ref()))?;
        return Ok(exit::OK);
    }
    let registry = journal.registered_agents()?;
    let position = registry
        .iter()
        .position(|a| a.card_url == agent.card_url)
        .map_or(0, |i| i + 1);
    let verb = if known.is_some() {
        "refreshed"
    } else {
        "registered"
    };
    let view = CardView::of(&agent);
    let skills: Vec<&str> = view.skills.iter().map(|s| s.id.as_str()).collect();
    ctx.out.line(&format!(
        "{verb} {} ({}) with skills {}; {} of {} in the registry (first added, first tried).",
        inert(&view.name),
        shown(&agent.card_url),
        inert(&skills.join(", ")),
        ordinal(position),
        registry.len(),
    ))?;
    Ok(exit::OK)
}

/// Stores the agent's own request limits given to `agents add`; a refresh without
/// `--concurrency` / `--rate` keeps the ones it had.
fn store_limits(
    journal: &Journal,
    card_url: &str,
    (concurrency, rate): (Option<u32>, Option<f64>),
) -> anyhow::Result<()> {
    if concurrency.is_some() || rate.is_some() {
        let (old_c, old_r) = journal.limits_of_agent(card_url)?;
        journal.set_agent_limits(card_url, concurrency.or(old_c), rate.or(old_r))?;
    }
    Ok(())
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn list(ctx: &Context) -> anyhow::Result<u8> {
    ctx.out.begin("agents list")?;
    let agents = match existing_journal(ctx, false)? {
        Some(j) => j
            .registered_agents()?
            .into_iter()
            .map(|a| {
                let at = j.registered_at(&a.card_url)?;
                let health = j.agent_health(&a.card_url)?;
                Ok((a, at, health))
            })
            .collect::<Result<Vec<_>, journal::JournalError>>()?,
        None => Vec::new(),
    };
    if ctx.out.is_json() {
        for (agent, at, health) in &agents {
            ctx.out.record(&agent_record(agent, *at, health.as_ref()))?;
        }
        return Ok(exit::OK);
    }
    if agents.is_empty() {
        ctx.out
            .status("no agents are registered; add one with `a2a-recover agents add URL`.");
        return Ok(exit::OK);
    }
    let now = ctx.display_clock.now();
    let mut table = crate::output::table(
        &ctx.out,
        vec![
            "#",
            "NAME",
            "AGENT",
            "SKILLS",
            "TOKEN ENV",
            "CONTEXT IDS",
            "PROFILE",
            "FETCHED",
        ],
    );
    for (i, (agent, _, _)) in agents.iter().enumerate() {
        let view = CardView::of(agent);
        let skills: Vec<&str> = view.skills.iter().map(|s| s.id.as_str()).collect();
        table.add_row(vec![
            (i + 1).to_string(),
            inert(&view.name),
            shown(&agent.card_url),
            inert(&skills.join(", ")),
            match (&agent.token_env, &agent.token_cmd) {
                (_, Some(cmd)) => format!("$ {}", inert(cmd)),
                (Some(var), None) => var.clone(),
                (None, None) => "-".to_owned(),
            },
            match agent.accepts_context_id {
                None => "unknown",
                Some(true) => "accepted",
                Some(false) => "refused",
            }
            .to_owned(),
            profile_cell(agent.profile.as_ref()),
            agent.fetched_at.map_or_else(
                || "-".to_owned(),
                |t| format!("{} ago", crate::output::age(now, t)),
            ),
        ]);
    }
    ctx.out
        .line(&crate::output::render_table(&ctx.out, &table))?;
    Ok(exit::OK)
}

async fn probe(
    ctx: &Context,
    url: &str,
    given: Option<Credential>,
    send_test: Option<&str>,
    choice: InterfaceChoice,
) -> anyhow::Result<u8> {
    let card_url = card_url_arg(url)?;
    if send_test.is_some_and(|t| t.trim().is_empty()) {
        return Err(CliError::usage("--send-test: the text is empty")
            .hint("give the text of a harmless request the agent can answer, e.g. `ping`")
            .into());
    }
    let journal = existing_journal(ctx, true)?;
    let known = match &journal {
        Some(j) => j.agent(&card_url)?,
        None => None,
    };
    let credential = credential(&card_url, given, known.as_ref()).await?;
    ctx.out.begin("agents probe")?;
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    let not_probed = |e: crate::a2a::A2aError| {
        let mut failure = CliError::failure(e.to_string());
        failure.hint = e.hint_text();
        anyhow::Error::new(failure).context(format!(
            "`{}` was not probed; nothing was stored",
            shown(&card_url)
        ))
    };
    let info = client
        .fetch_card(&card_url, credential.as_ref())
        .await
        .map_err(not_probed)?;
    let chosen = info.choose(choice).map_err(not_probed)?;
    let endpoint = Endpoint {
        url: chosen.interface_url,
        tenant: chosen.tenant,
        binding: chosen.binding,
        ..Endpoint::from_card(&info, credential, false)
    };
    let probed = probe::probe(&ProbeHow {
        client: &client,
        card: &info,
        endpoint: &endpoint,
        accepts_context_id: known.as_ref().and_then(|a| a.accepts_context_id),
        send_test,
        now: ctx.clock.now(),
    })
    .await;
    let journal = match journal {
        Some(j) => j,
        None => ctx.open_journal()?,
    };
    journal
        .record_agent_profile(&card_url, &probed.profile, probed.accepts_context_id)
        .context("failed to journal the agent's profile")?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "probe",
            "url": card_url,
            "name": info.card.name,
            "interfaceUrl": endpoint.url,
            "profile": probe::profile_json(&probed.profile),
            "testTasks": probed.test_tasks,
            "notes": probed.notes,
        }))?;
        return Ok(exit::OK);
    }
    for note in &probed.notes {
        ctx.out.status(&format!("note: {}", inert(note)));
    }
    let p = &probed.profile;
    let lines = profile_lines(p);
    ctx.out.line(&format!(
        "probed {} ({}); the profile is journaled{}.",
        inert(&info.card.name),
        shown(&card_url),
        if probed.test_tasks.is_empty() {
            String::new()
        } else {
            format!(
                "; the test created task(s) {}",
                inert(&probed.test_tasks.join(", "))
            )
        }
    ))?;
    for (name, value) in lines {
        ctx.out.line(&format!("  {name:<17} {value}"))?;
    }
    Ok(exit::OK)
}

/// The profile as `(field, value)` lines for people; remote text made inert.
fn profile_lines(p: &AgentProfile) -> Vec<(&'static str, String)> {
    let bindings: Vec<String> = p
        .bindings
        .iter()
        .map(|b| {
            let how = match (b.chosen, b.spoken) {
                (true, _) => " (chosen)",
                (false, true) => "",
                (false, false) => " (not spoken)",
            };
            inert(&format!("{} {}{how}", b.binding, b.protocol_version))
        })
        .collect();
    let code = |c: &Option<String>| c.as_deref().map_or_else(|| "-".to_owned(), inert);
    let measured = |v: Option<YesNo>| {
        v.map_or_else(
            || {
                if p.send_test {
                    "unknown".to_owned()
                } else {
                    "not measured (give --send-test TEXT)".to_owned()
                }
            },
            |v| v.as_str().to_owned(),
        )
    };
    vec![
        ("bindings", bindings.join(", ")),
        ("listTasks", p.list_tasks.as_str().to_owned()),
        ("timestampFilter", p.timestamp_filter.as_str().to_owned()),
        (
            "subscribe",
            format!(
                "{} (unknown task: {}; terminal task: {})",
                p.subscribe.as_str(),
                code(&p.unknown_task_subscribe_code),
                code(&p.terminal_subscribe_code)
            ),
        ),
        ("clientContextId", p.client_context_id.as_str().to_owned()),
        ("dedup", measured(p.dedup)),
        ("historyKept", measured(p.history_kept)),
        ("probedAt", rfc3339(p.probed_at)),
    ]
}

/// The profile in one cell of `agents list`.
fn profile_cell(p: Option<&AgentProfile>) -> String {
    let Some(p) = p else {
        return "-".to_owned();
    };
    format!(
        "list {}, dedup {}",
        p.list_tasks.as_str(),
        p.dedup.map_or("-", YesNo::as_str)
    )
}

fn remove(ctx: &Context, url: &str) -> anyhow::Result<u8> {
    let card_url = card_url_arg(url)?;
    let unknown = || {
        CliError::usage(format!("`{}` is not in the registry", shown(&card_url)))
            .hint("`a2a-recover agents list` shows the registered agents")
    };
    let Some(journal) = existing_journal(ctx, true)? else {
        return Err(unknown().into());
    };
    ctx.out.begin("agents remove")?;
    if !journal.unregister_agent(&card_url)? {
        return Err(unknown().into());
    }
    if !ctx.out.is_json() {
        ctx.out.line(&format!(
            "removed {} from the registry; steps already delegated to it keep it.",
            shown(&card_url)
        ))?;
    }
    Ok(exit::OK)
}

/// One skill of a stored card.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SkillView {
    id: String,
    name: Option<String>,
    tags: Vec<String>,
}

/// What a stored card says, read from the raw JSON as received.
#[derive(Debug, Clone, PartialEq)]
struct CardView {
    name: String,
    skills: Vec<SkillView>,
    capabilities: Value,
}

impl CardView {
    fn of(agent: &Agent) -> Self {
        let card = agent
            .card_json
            .as_deref()
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
            .unwrap_or(Value::Null);
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let skills = card
            .get("skills")
            .and_then(Value::as_array)
            .map(|skills| {
                skills
                    .iter()
                    .filter_map(|s| {
                        Some(SkillView {
                            id: text(s, "id").filter(|id| !id.trim().is_empty())?,
                            name: text(s, "name"),
                            tags: s
                                .get("tags")
                                .and_then(Value::as_array)
                                .map(|t| t.iter().filter_map(Value::as_str).map(str::to_owned))
                                .into_iter()
                                .flatten()
                                .collect(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            name: text(&card, "name").unwrap_or_default(),
            skills,
            capabilities: card
                .get("capabilities")
                .filter(|c| c.is_object())
                .cloned()
                .unwrap_or_else(|| json!({})),
        }
    }
}

/// The `agent` record, camelCase; card text kept as data.
fn agent_record(
    agent: &Agent,
    registered_at: Option<DateTime<Utc>>,
    health: Option<&journal::AgentHealth>,
) -> Value {
    let view = CardView::of(agent);
    let mut record = json!({
        "type": "agent",
        "url": agent.card_url,
        "name": view.name,
        "interfaceUrl": agent.interface_url,
        "protocolVersion": agent.protocol_version,
        "binding": agent.binding.map(|b| b.wire().card_name()),
        "tenant": agent.tenant,
        "trustDedup": agent.trust_dedup,
        "skills": view.skills.iter().map(|s| json!({
            "id": s.id,
            "name": s.name,
            "tags": s.tags,
        })).collect::<Vec<_>>(),
        "capabilities": view.capabilities,
        "tokenEnv": agent.token_env,
        "tokenCmd": agent.token_cmd,
        "acceptsContextId": agent.accepts_context_id,
        "order": agent.registered,
        "registeredAt": registered_at.map(rfc3339),
        "fetchedAt": agent.fetched_at.map(rfc3339),
        "profile": agent.profile.as_ref().map(probe::profile_json),
    });
    if let Some(m) = record.as_object_mut() {
        m.extend(health_fields(health));
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
                "111th"
            ]
        );
    }

    #[test]
    fn stored_cards_are_read_leniently() {
        let agent = |card: &str| Agent {
            binding: None,
            trust_dedup: false,
            id: journal::AgentId(1),
            card_url: "http://a.example/.well-known/agent-card.json".to_owned(),
            interface_url: None,
            protocol_version: None,
            tenant: None,
            token_env: None,
            token_cmd: None,
            card_json: Some(card.to_owned()),
            skills: Vec::new(),
            accepts_context_id: None,
            push_url: None,
            registered: Some(1),
            fetched_at: None,
            profile: None,
        };
        let view = CardView::of(&agent(
            r#"{"name":"Hotel","capabilities":{"streaming":true},
                "skills":[{"id":"hotel","name":"Hotel booking"},{"id":"","name":"x"},
                          {"id":"car","tags":["cars",1]}]}"#,
        ));
        assert_eq!(view.name, "Hotel");
        assert_eq!(view.capabilities, json!({"streaming": true}));
        assert_eq!(
            view.skills,
            [
                SkillView {
                    id: "hotel".into(),
                    name: Some("Hotel booking".into()),
                    tags: vec![]
                },
                SkillView {
                    id: "car".into(),
                    name: None,
                    tags: vec!["cars".into()]
                },
            ]
        );
        let broken = CardView::of(&agent("not json"));
        assert_eq!((broken.name.as_str(), broken.skills.len()), ("", 0));
    }
}
