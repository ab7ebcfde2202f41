//! Push configs deleted at their agents once their attempt ends: a pass's last, best-effort
//! step. Each config of an attempt that ended (COMPLETED, FAILED, CANCELED, REJECTED) is asked
//! to be deleted once per pass (`DeleteTaskPushNotificationConfig` on the attempt's binding,
//! with its credential, at most `concurrency` at once, at most [`PER_PASS`] per pass), and what
//! the agent answered is journaled so that it is asked once: deleted, gone (the agent knew
//! neither the task nor the config), refused (another error of the agent's), or unsupported
//! (the agent deletes no configs: it is never asked again). A request that was not sent or got
//! no answer is tried again next pass. Nothing here fails or holds up the pass: a failure is
//! logged and the config stays to delete.

use futures_util::StreamExt as _;

use crate::a2a::{A2aClient, A2aError, ErrorClass, ErrorKind};
use crate::journal::{AttemptId, Journal, PushTidied};
use crate::recovery::{follow, send};

/// The most configs one pass asks to delete; the rest wait for the next pass.
pub const PER_PASS: usize = 256;

/// Asks the agents of ended attempts to delete their push configs (only those of `workflows`,
/// unless it is empty), at most `concurrency` at once, and journals each answer; returns how
/// many answers were journaled. Never fails: what goes wrong is logged.
pub async fn tidy(
    journal: &Journal,
    client: &A2aClient,
    workflows: &[String],
    concurrency: usize,
) -> usize {
    let due = match journal.push_configs_to_tidy(workflows, PER_PASS) {
        Ok(due) => due,
        Err(e) => {
            tracing::warn!("could not read the push configs to delete: {e:#}");
            return 0;
        }
    };
    futures_util::stream::iter(due)
        .map(|(attempt, config_id)| async move {
            match delete_one(journal, client, attempt, &config_id).await {
                Ok(Some(outcome)) => match journal.record_push_tidied(attempt, outcome) {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(
                            attempt = attempt.0,
                            "could not journal the push config's deletion: {e:#}"
                        );
                        false
                    }
                },
                Ok(None) => false,
                Err(e) => {
                    tracing::debug!(
                        attempt = attempt.0,
                        "the push config was not deleted this pass: {e:#}"
                    );
                    false
                }
            }
        })
        .buffer_unordered(concurrency.max(1))
        .filter(|journaled| std::future::ready(*journaled))
        .count()
        .await
}

/// Asks the agent of `attempt` to delete config `config_id`; `None` when it is worth asking
/// again next pass.
async fn delete_one(
    journal: &Journal,
    client: &A2aClient,
    attempt: AttemptId,
    config_id: &str,
) -> anyhow::Result<Option<PushTidied>> {
    let a = journal.attempt(attempt)?;
    let Some(task_id) = a.task_id.as_deref() else {
        return Ok(None);
    };
    let Some(rec) = journal.step_by_id(a.step_id)? else {
        return Ok(None);
    };
    let wire = send::journaled_wire(journal, &a)?;
    let ep = follow::endpoint_of(
        &rec.step.spec.name,
        &a,
        rec.step.spec.allow_cross_origin,
        wire,
    )
    .await?;
    let answer = client.delete_push_config(&ep, task_id, config_id).await;
    let outcome = outcome_of(answer.as_ref().err());
    if let Err(e) = &answer {
        tracing::debug!(
            attempt = attempt.0,
            "the agent answered the push config's deletion with an error: {}",
            e.summary()
        );
    }
    Ok(outcome)
}

/// What an answer to a delete comes to (`None`: no answer worth journaling; ask again).
fn outcome_of(error: Option<&A2aError>) -> Option<PushTidied> {
    let Some(e) = error else {
        return Some(PushTidied::Deleted);
    };
    if e.is_task_not_found() {
        return Some(PushTidied::Gone);
    }
    if e.is_unsupported_operation()
        || e.kind() == Some(ErrorKind::PushNotificationNotSupported)
        || e.is_unimplemented_route()
    {
        return Some(PushTidied::Unsupported);
    }
    match e.class() {
        ErrorClass::NotSent | ErrorClass::Ambiguous => None,
        ErrorClass::Refused | ErrorClass::Remote => Some(PushTidied::Refused),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::a2a::RpcError;

    fn rpc(code: i64) -> A2aError {
        A2aError::Rpc {
            url: "http://127.0.0.1/".to_owned(),
            method: "DeleteTaskPushNotificationConfig",
            error: RpcError {
                code,
                message: String::new(),
                data: None,
            },
        }
    }

    fn http(status: u16, unattributed: bool) -> A2aError {
        A2aError::Http {
            url: "http://127.0.0.1/".to_owned(),
            method: "DeleteTaskPushNotificationConfig",
            status,
            retry_after: None,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed,
        }
    }

    #[test]
    fn each_answer_is_journaled_once_or_asked_again() {
        assert_eq!(outcome_of(None), Some(PushTidied::Deleted));
        assert_eq!(outcome_of(Some(&rpc(-32001))), Some(PushTidied::Gone));
        for unsupported in [-32003, -32004, -32601] {
            assert_eq!(
                outcome_of(Some(&rpc(unsupported))),
                Some(PushTidied::Unsupported),
                "{unsupported}"
            );
        }
        assert_eq!(
            outcome_of(Some(&http(405, false))),
            Some(PushTidied::Unsupported)
        );
        assert_eq!(
            outcome_of(Some(&http(501, false))),
            Some(PushTidied::Unsupported)
        );
        assert_eq!(outcome_of(Some(&rpc(-32602))), Some(PushTidied::Refused));
        assert_eq!(
            outcome_of(Some(&http(403, false))),
            Some(PushTidied::Refused)
        );
        // No answer worth keeping: the next pass asks again.
        assert_eq!(outcome_of(Some(&rpc(-32603))), None);
        assert_eq!(outcome_of(Some(&http(503, false))), None);
        let timeout = A2aError::Timeout {
            url: "http://127.0.0.1/".to_owned(),
            method: "DeleteTaskPushNotificationConfig",
            after: Duration::from_secs(1),
            tries: None,
        };
        assert_eq!(outcome_of(Some(&timeout)), None);
    }
}
