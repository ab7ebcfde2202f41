//! Choosing an agent from the registry: `delegate --skill`, `resolve --as retry`, and
//! re-delegation after a FAILED or REJECTED attempt.
//!
//! The registry is the `agents` added with `a2a-recover agents add URL`, in registration order:
//! first added, first tried. An agent qualifies for a skill when its stored card lists a skill
//! with that exact `id`. Agents are identified by their Agent Card URL everywhere (the registry,
//! `Attempt::agent_url`, `exclude`), so the URLs compare as stored.
//!
//! # Re-delegation (for the reconcile pass)
//!
//! ```text
//! let Binding::Skill(skill) = &row.binding else { /* bound to one --agent: failed for good */ };
//! let record = journal.step(&row.step)?;                  // every attempt of the step
//! match pick_agent(&journal, skill, &tried_agents(&record))? {
//!     Some(agent) => journal.add_attempt(step_id, &NewAttempt {
//!         agent_url: Some(agent.card_url.clone()),
//!         message_id: fresh, context_id: Some(fresh), previous: Some(row.attempt.id),
//!     })?,                                                 // BudgetSpent: failed for good
//!     None => { /* no untried agent advertises the skill: failed for good */ }
//! }
//! ```
//!
//! The credential of an attempt is decided by the journal when its intent is committed, and
//! journaled on it (`Attempt::token_env`, `token_cmd`, `credential_source`): a step's own
//! `--token-env` / `--token-cmd` belongs to the agent it was given for (the step's first
//! attempt's), so a re-delegated attempt carries its new agent's registered credential, or none
//! (`journal::CredentialSource::choose`). [`credential_source`] says the same for a new step's
//! first agent, before anything is committed.

use crate::journal::{Agent, Journal, JournalError, StepRecord, StepSpec};

/// Returns the first registered agent, in registration order, whose card advertises `skill` and
/// whose card URL is not in `exclude`; `None` when there is none.
///
/// `exclude` holds card URLs, as in [`Agent::card_url`] and `Attempt::agent_url`: pass
/// [`tried_agents`] to re-delegate to an agent not yet tried for the step, or `&[]` for the first
/// delegation. Reads only.
pub fn pick_agent(
    journal: &Journal,
    skill: &str,
    exclude: &[String],
) -> Result<Option<Agent>, JournalError> {
    Ok(journal
        .agents_with_skill(skill)?
        .into_iter()
        .find(|a| !exclude.contains(&a.card_url)))
}

/// Returns the card URLs of every agent a step has been delegated to (each once, in attempt
/// order): the `exclude` list of a re-delegation.
pub fn tried_agents(record: &StepRecord) -> Vec<String> {
    let mut tried: Vec<String> = Vec::with_capacity(record.attempts.len());
    for url in record.attempts.iter().filter_map(|a| a.agent_url.as_ref()) {
        if !tried.contains(url) {
            tried.push(url.clone());
        }
    }
    tried
}

/// Returns where the credential for sending a new step `spec` to its first agent `agent` comes
/// from (`token_env`, `token_cmd`): the step's own `--token-env` / `--token-cmd`, else the
/// agent's registered one. Any later agent of the step (re-delegation) never gets the step's:
/// the journal chooses its registered one, or none.
pub fn credential_source<'a>(
    spec: &'a StepSpec,
    agent: &'a Agent,
) -> (Option<&'a str>, Option<&'a str>) {
    if spec.token_env.is_some() || spec.token_cmd.is_some() {
        (spec.token_env.as_deref(), spec.token_cmd.as_deref())
    } else if agent.registered.is_some() {
        (agent.token_env.as_deref(), agent.token_cmd.as_deref())
    } else {
        (None, None)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::journal::test_store::{Fresh, Kind};
    use crate::journal::{
        AgentCard, CredentialSource, IntentOutcome, NewAttempt, NewIntent, StepName,
    };

    fn card(url: &str, skills: &[&str]) -> AgentCard {
        AgentCard {
            binding: crate::a2a::ProtocolBinding::JsonRpcV1,
            card_url: url.to_owned(),
            interface_url: url.replace("/.well-known/agent-card.json", "/"),
            protocol_version: Some("1.0".to_owned()),
            tenant: None,
            card_json: "{}".to_owned(),
            skills: skills.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn url(port: u16) -> String {
        format!("http://127.0.0.1:{port}/.well-known/agent-card.json")
    }

    #[rstest]
    fn picks_in_registration_order_skipping_excluded_and_unregistered(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (_fresh, j) = Fresh::journal(kind);
        j.register_agent(&card(&url(1), &["car"]), None, None, false)
            .unwrap();
        j.register_agent(
            &card(&url(2), &["hotel", "car"]),
            Some("TOKEN_2"),
            None,
            false,
        )
        .unwrap();
        j.register_agent(&card(&url(3), &["car"]), None, None, false)
            .unwrap();
        // Only used through --agent: never picked.
        j.record_agent_card(&card(&url(4), &["car"])).unwrap();

        let pick =
            |skill, exclude: &[String]| pick_agent(&j, skill, exclude).unwrap().map(|a| a.card_url);
        assert_eq!(pick("car", &[]), Some(url(1)));
        assert_eq!(pick("hotel", &[]), Some(url(2)));
        assert_eq!(pick("car", &[url(1)]), Some(url(2)));
        assert_eq!(pick("car", &[url(1), url(2)]), Some(url(3)));
        assert_eq!(pick("car", &[url(1), url(2), url(3)]), None);
        assert_eq!(pick("flight", &[]), None);
        // A refresh keeps the order; a removal drops the agent from every pick.
        j.register_agent(&card(&url(1), &["car"]), None, None, false)
            .unwrap();
        assert_eq!(pick("car", &[]), Some(url(1)));
        assert!(j.unregister_agent(&url(1)).unwrap());
        assert_eq!(pick("car", &[]), Some(url(2)));
    }

    #[rstest]
    fn tried_agents_and_credentials_follow_the_journal(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = j
            .register_agent(&card(&url(1), &["car"]), Some("CAR_TOKEN"), None, false)
            .unwrap();
        let b = j
            .register_agent(&card(&url(2), &["car"]), None, None, false)
            .unwrap();
        let name = StepName::parse("trip/car").unwrap();
        let mut spec = StepSpec::to_agent(name.clone(), "a car", url(1));
        spec.binding = crate::journal::Binding::Skill("car".to_owned());
        let IntentOutcome::Created(first) = j
            .create_intents(&[NewIntent {
                spec: spec.clone(),
                agent_url: Some(url(1)),
                message_id: "m-1".to_owned(),
                context_id: None,
            }])
            .unwrap()
            .remove(0)
        else {
            panic!("the step existed");
        };
        // No --token-env: the attempt takes the registered agent's variable.
        assert_eq!(first.token_env.as_deref(), Some("CAR_TOKEN"));
        assert_eq!(credential_source(&spec, &a), (Some("CAR_TOKEN"), None));
        assert_eq!(credential_source(&spec, &b), (None, None));
        let second = j
            .add_attempt(
                first.step_id,
                &NewAttempt {
                    agent_url: Some(url(2)),
                    message_id: "m-2".to_owned(),
                    context_id: None,
                    previous: Some(first.id),
                },
            )
            .unwrap();
        assert_eq!(second.token_env, None, "agent 2 has no variable of its own");
        assert_eq!(first.credential_source, CredentialSource::Agent);
        assert_eq!(second.credential_source, CredentialSource::None);
        let record = j.step(&name).unwrap().unwrap();
        assert_eq!(tried_agents(&record), [url(1), url(2)]);
        assert_eq!(pick_agent(&j, "car", &tried_agents(&record)).unwrap(), None);
        // A step's own variable wins over the agent's.
        spec.token_env = Some("STEP_TOKEN".to_owned());
        assert_eq!(credential_source(&spec, &a), (Some("STEP_TOKEN"), None));
    }
}
