//! Whose credential an attempt carries: a step's own credential stays with the agent it was
//! given for (its first attempt's); every other agent of the step gets its registered
//! credential, or none. Chosen when the intent is committed (both stores), and repaired by
//! migration 15 on attempts an older binary journaled with the step's credential.

use serde_json::Value;

use super::*;

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/.well-known/agent-card.json")
}

fn card(port: u16) -> AgentCard {
    AgentCard {
        binding: crate::model::ProtocolBinding::JsonRpcV1,
        card_url: url(port),
        interface_url: format!("http://127.0.0.1:{port}/"),
        protocol_version: Some("1.0".to_owned()),
        tenant: None,
        card_json: "{}".to_owned(),
        skills: vec!["car".to_owned()],
    }
}

/// Registers agents 1 (no credential), 2 (`TOKB`) and 3 (no credential) with skill `car`, and
/// delegates `trip/car` with the step's own `TOKA` to agent 1; returns attempt 1.
fn delegated(j: &Journal, max_attempts: u32) -> Attempt {
    j.register_agent(&card(1), None, None, false).unwrap();
    j.register_agent(&card(2), Some("TOKB"), None, false)
        .unwrap();
    j.register_agent(&card(3), None, None, false).unwrap();
    let mut spec = StepSpec::to_agent(StepName::parse("trip/car").unwrap(), "a car", url(1));
    spec.binding = Binding::Skill("car".to_owned());
    spec.token_env = Some("TOKA".to_owned());
    spec.max_attempts = max_attempts;
    match j
        .create_intents(&[NewIntent {
            spec,
            agent_url: Some(url(1)),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: None,
        }])
        .unwrap()
        .remove(0)
    {
        IntentOutcome::Created(a) => a,
        IntentOutcome::Existing(_) => panic!("the step existed"),
    }
}

fn next(j: &Journal, first: &Attempt, port: u16) -> Attempt {
    j.add_attempt(
        first.step_id,
        &NewAttempt {
            agent_url: Some(url(port)),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: None,
            previous: Some(first.id),
        },
    )
    .unwrap()
}

fn sources(j: &Journal) -> Vec<(Option<String>, CredentialSource)> {
    j.step(&StepName::parse("trip/car").unwrap())
        .unwrap()
        .unwrap()
        .attempts
        .into_iter()
        .map(|a| (a.token_env, a.credential_source))
        .collect()
}

#[rstest]
fn a_steps_own_credential_goes_only_to_the_agent_it_was_given_for(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (_fresh, j) = Fresh::journal(kind);
    let first = delegated(&j, 4);
    next(&j, &first, 2);
    next(&j, &first, 3);
    // Back at the agent it was given for (`resolve --as retry` of a step bound there).
    next(&j, &first, 1);
    let tok = |s: &str| Some(s.to_owned());
    assert_eq!(
        sources(&j),
        [
            (tok("TOKA"), CredentialSource::Step),
            (tok("TOKB"), CredentialSource::Agent),
            (None, CredentialSource::None),
            (tok("TOKA"), CredentialSource::Step),
        ]
    );
    // Each intent event names the source, never a token.
    let said: Vec<Value> = j
        .events_of_step(&StepName::parse("trip/car").unwrap())
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "intent")
        .map(|e| e.detail.unwrap()["credentialSource"].clone())
        .collect();
    assert_eq!(said, ["step", "agent", "none", "step"]);
}

/// A journal of version 14 whose re-delegated attempts carry the step's credential (what an
/// older binary journaled) is repaired when it is opened: those attempts carry their agents'
/// registered credentials, or none, and every attempt says whose.
#[rstest]
fn migration_15_takes_a_steps_credential_back_from_other_agents(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    {
        let j = fresh.open();
        let first = delegated(&j, 3);
        next(&j, &first, 2);
        next(&j, &first, 3);
        // As an older binary left it: the step's variable on every attempt, no source column
        // (and none of the later migrations' columns).
        let old = "UPDATE attempts SET token_env = 'TOKA';
                   ALTER TABLE attempts DROP COLUMN credential_source;
                   ALTER TABLE replies DROP COLUMN data_json;
                   ALTER TABLE replies DROP COLUMN error_kind;
                   DROP TABLE agent_not_before;
                   ALTER TABLE agents DROP COLUMN last_success_at;
                   ALTER TABLE agents DROP COLUMN last_failure_at;
                   ALTER TABLE agents DROP COLUMN failing_since;
                   ALTER TABLE steps DROP COLUMN data_json;

                   DROP TABLE push_tokens;
                   DROP TABLE push_configs;
                   DROP TABLE push_listeners;
                   ALTER TABLE agents DROP COLUMN push_url;
                   ALTER TABLE agents DROP COLUMN trust_push;
                   ALTER TABLE agents DROP COLUMN push_delete_unsupported_at;";
        downgrade(&j, kind, old, 14);
    }
    let j = fresh.open();
    assert_eq!(
        sources(&j),
        [
            (Some("TOKA".to_owned()), CredentialSource::Step),
            (Some("TOKB".to_owned()), CredentialSource::Agent),
            (None, CredentialSource::None),
        ]
    );
}
