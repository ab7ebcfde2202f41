//! `scripted-agent`: the in-crate scripted A2A v1.0 agent, served on loopback.
//!
//! Prints `listening on http://127.0.0.1:PORT/` once the port is bound (with `--format json`, a
//! `begin` record and a `listening` record with `url`), then serves until SIGINT or SIGTERM.

use std::time::Duration;

use clap::Args;
use serde_json::json;

use crate::context::Context;
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::scripted_agent::{
    AgentConfig, ApiKey, Bends, DropMode, FailMode, PushFault, QuestionIn, ScriptedAgent,
    ServedBinding,
};

/// Runs a scripted A2A v1.0 agent on loopback, for drills, the demo, tests and benchmarks.
#[derive(Debug, Args)]
#[command(after_help = crate::scripted_agent::scenarios_help())]
pub struct ScriptedAgentArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Runs this scenario for every new task, whatever the message says.
    #[arg(long, value_name = "S")]
    pub scenario: Option<String>,
    /// A skill id on the card; repeat for more [default: echo].
    #[arg(long = "skill", value_name = "ID")]
    pub skills: Vec<String>,
    /// Returns the existing task for a resend with a known messageId (neither SDK does this).
    #[arg(long)]
    pub dedup: bool,
    /// Forgets terminal tasks this long after they finish (GetTask then answers -32001).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub forget_after: Option<Duration>,
    /// Refuses client-chosen context ids for new tasks (-32602 naming message.contextId).
    #[arg(long)]
    pub refuse_context_id: bool,
    /// Answers ListTasks with -32601, like an agent without it.
    #[arg(long)]
    pub no_list_tasks: bool,
    /// ListTasks ignores its contextId and statusTimestampAfter filters.
    #[arg(long)]
    pub list_ignores_filters: bool,
    /// Files every new task under a contextId of its own, ignoring the client's.
    #[arg(long)]
    pub replace_context_id: bool,
    /// Probability (0 to 1) that a message send answers HTTP 503 with Retry-After: 1.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub fail_rate: f64,
    /// The first N message sends answer HTTP 503, then --fail-rate applies.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fail_first: u32,
    /// Whether a failing send is refused before processing or processed and then refused.
    #[arg(long, value_enum, default_value_t = FailMode::Before)]
    pub fail_mode: FailMode,
    /// Cuts every SSE stream after K events.
    #[arg(long, value_name = "K")]
    pub drop_stream_after: Option<u32>,
    /// How a stream is cut: a clean end of the body, or an aborted connection.
    #[arg(long, value_enum, default_value_t = DropMode::Eof)]
    pub drop_mode: DropMode,
    /// Duration of one `work` step.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "100ms")]
    pub tick: Duration,
    /// Declares no streaming on the card and refuses streaming methods (-32004).
    #[arg(long)]
    pub no_streaming: bool,
    /// Declares push notifications on the card and pushes each change of a task to the push
    /// config its send carried (`http://` URLs).
    #[arg(long)]
    pub push: bool,
    /// Makes the pushes go wrong on purpose; repeat for more (implies --push).
    #[arg(long, value_enum, value_name = "FAULT")]
    pub push_fault: Vec<PushFault>,
    /// The card's name.
    #[arg(long, default_value = "scripted-agent")]
    pub name: String,
    /// Seed for --fail-rate, so a run can be repeated.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The A2A v1.0 binding served and offered on the card: JSON-RPC at `/`, HTTP+JSON
    /// (`/message:send`, `/tasks/{id}`, …), or gRPC on the same port (offered as
    /// `127.0.0.1:PORT`).
    #[arg(long, value_enum, default_value_t = ServedBinding::Jsonrpc)]
    pub binding: ServedBinding,
    /// Also serves gRPC (A2A v1.0) on the same port and offers it on the card after the
    /// --binding interface.
    #[arg(long)]
    pub grpc: bool,
    /// A tenant on the card's interface (over HTTP+JSON, the first segment of every path).
    #[arg(long, value_name = "NAME")]
    pub tenant: Option<String>,
    /// Sends status timestamps without a UTC offset, as some frameworks do.
    #[arg(long)]
    pub naive_timestamps: bool,
    /// Where the question of an interrupted task goes.
    #[arg(long, value_enum, value_name = "WHERE", default_value_t = QuestionIn::Status)]
    pub question_in: QuestionIn,
    /// Sends tasks without artifacts; their text is in the history instead.
    #[arg(long)]
    pub history_only: bool,
    /// Answers a reply to a question with a new task in the same context.
    #[arg(long)]
    pub reply_new_task: bool,
    /// Ignores returnImmediately: SendMessage answers once the task stops.
    #[arg(long)]
    pub block_send: bool,
    /// Takes only structured answers: asks `Agent requires input:` then `- rooms: QUESTION`,
    /// refuses a text reply (-32602) and accepts a data part `{"rooms": "…"}`.
    #[arg(long)]
    pub structured_answers: bool,
    /// Answers every JSON-RPC request this long after it arrived (a slow agent).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "0s")]
    pub delay: Duration,
    /// Never answers a JSON-RPC request (a hung agent); the card is still served.
    #[arg(long)]
    pub black_hole: bool,
    /// Answers HTTP 429 with Retry-After: 1 once N requests were served in the last second.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,
    /// The A2A protocol version served: `1.0`, or `0.3` (a v0.3 card, v0.3 method names and
    /// payloads, no tasks/list).
    #[arg(long, value_name = "VERSION", default_value = "1.0")]
    pub protocol: crate::a2a::ProtocolVersion,
    /// Answers HTTP 401 to every A2A request without `Authorization: Bearer TOKEN` (the card
    /// stays public).
    #[arg(long, value_name = "TOKEN")]
    pub require_token: Option<String>,
    /// Publishes an apiKey security scheme naming this header on the card, and answers HTTP
    /// 401 to every A2A request without the key of `--api-key-env` in it.
    #[arg(
        long,
        value_name = "NAME",
        group = "api_key_location",
        requires = "api_key_env"
    )]
    pub api_key_header: Option<String>,
    /// As `--api-key-header`, with the key in this query parameter.
    #[arg(
        long,
        value_name = "NAME",
        group = "api_key_location",
        requires = "api_key_env"
    )]
    pub api_key_query: Option<String>,
    /// As `--api-key-header`, with the key in this cookie.
    #[arg(
        long,
        value_name = "NAME",
        group = "api_key_location",
        requires = "api_key_env"
    )]
    pub api_key_cookie: Option<String>,
    /// The environment variable holding the API key expected (with `--api-key-header`,
    /// `--api-key-query` or `--api-key-cookie`).
    #[arg(long, value_name = "VAR", requires = "api_key_location")]
    pub api_key_env: Option<String>,
}

impl ScriptedAgentArgs {
    /// Validates the flags into an agent configuration.
    pub fn config(&self) -> Result<AgentConfig, CliError> {
        if !(0.0..=1.0).contains(&self.fail_rate) {
            return Err(CliError::usage(format!(
                "--fail-rate {} is not a probability",
                self.fail_rate
            ))
            .hint("give a number from 0 (never) to 1 (always), e.g. `--fail-rate 0.2`"));
        }
        if self.tick.is_zero() {
            return Err(CliError::usage("--tick must be more than zero")
                .hint("give a duration such as `--tick 20ms`"));
        }
        let grpc = self.grpc || self.binding == ServedBinding::Grpc;
        if grpc && self.protocol == crate::a2a::ProtocolVersion::V0_3 {
            return Err(
                CliError::usage("the scripted agent serves gRPC in A2A v1.0 only")
                    .hint("drop `--protocol 0.3`, or serve JSON-RPC with `--binding jsonrpc`"),
            );
        }
        if grpc && self.naive_timestamps {
            return Err(CliError::usage(
                "--naive-timestamps cannot be carried over gRPC (its timestamps are binary)",
            )
            .hint("drop `--naive-timestamps`, or serve JSON-RPC or HTTP+JSON alone"));
        }
        let require_api_key = self.api_key()?;
        Ok(AgentConfig {
            name: self.name.clone(),
            scenario: self.scenario.clone(),
            skills: if self.skills.is_empty() {
                AgentConfig::default().skills
            } else {
                self.skills.clone()
            },
            dedup: self.dedup,
            forget_after: self.forget_after,
            refuse_context_id: self.refuse_context_id,
            no_list_tasks: self.no_list_tasks,
            list_ignores_filters: self.list_ignores_filters,
            replace_context_id: self.replace_context_id,
            fail_rate: self.fail_rate,
            fail_first: self.fail_first,
            fail_mode: self.fail_mode,
            drop_stream_after: self.drop_stream_after,
            drop_mode: self.drop_mode,
            tick: self.tick,
            no_streaming: self.no_streaming,
            push: self.push || !self.push_fault.is_empty(),
            push_faults: self.push_fault.clone(),
            seed: self.seed,
            binding: self.binding,
            grpc: self.grpc,
            tenant: self.tenant.clone().filter(|t| !t.is_empty()),
            bends: Bends {
                naive_timestamps: self.naive_timestamps,
                question_in: self.question_in,
                history_only: self.history_only,
                reply_new_task: self.reply_new_task,
                block_send: self.block_send,
                structured_answers: self.structured_answers,
            },
            delay: self.delay,
            black_hole: self.black_hole,
            rate_limit: self.rate_limit,
            protocol_v03: self.protocol == crate::a2a::ProtocolVersion::V0_3,
            require_token: self.require_token.clone(),
            require_api_key,
        })
    }

    /// The API key required, read from `--api-key-env`'s variable.
    fn api_key(&self) -> Result<Option<ApiKey>, CliError> {
        use crate::scripted_agent::KeyLocation as L;
        let located = [
            (L::Header, &self.api_key_header),
            (L::Query, &self.api_key_query),
            (L::Cookie, &self.api_key_cookie),
        ]
        .into_iter()
        .find_map(|(location, name)| name.clone().map(|name| (location, name)));
        let (Some((location, name)), Some(var)) = (located, &self.api_key_env) else {
            return Ok(None);
        };
        let key = std::env::var(var)
            .ok()
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty())
            .ok_or_else(|| {
                CliError::usage(format!("--api-key-env: the variable `{var}` is not set"))
                    .hint(format!("export {var}=… with the key the agent expects"))
            })?;
        if name.trim().is_empty() {
            return Err(CliError::usage("the API key's name is empty").hint(
                "name the header, query parameter or cookie, e.g. `--api-key-header X-API-Key`",
            ));
        }
        Ok(Some(ApiKey {
            location,
            name,
            key,
        }))
    }
}

/// Runs `scripted-agent`.
pub(crate) async fn run(ctx: &Context, args: &ScriptedAgentArgs) -> anyhow::Result<u8> {
    let cfg = args.config()?;
    let agent = ScriptedAgent::start(cfg, args.port).await.map_err(|e| {
        CliError::failure(format!("cannot listen on `127.0.0.1:{}`: {e}", args.port))
            .hint("pick another --port, or `--port 0` for a free one")
    })?;
    let url = agent.url();
    if ctx.out.is_json() {
        ctx.out.begin("scripted-agent")?;
        ctx.out.record(&json!({"type": "listening", "url": url}))?;
    } else {
        ctx.out.line(&format!("listening on {url}"))?;
    }
    ctx.out.status(&format!(
        "stats: GET {url}_scripted/stats; stop with Ctrl-C."
    ));
    // Serves until lib::main drops this future on SIGINT or SIGTERM; dropping `agent` then
    // stops the server.
    let _agent = agent;
    Ok(std::future::pending::<u8>().await)
}
