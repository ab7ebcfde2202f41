//! Observations and the one pure transition function: what an observation does to an
//! attempt's state, exhaustively tested over every (state, observation) pair.

use chrono::{DateTime, Utc};

use super::AttemptState;
use crate::model::RemoteState;

/// How an incoming status timestamp compares with the one held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Freshness {
    /// Strictly newer than the held one.
    Newer,
    /// Equal to the held one.
    Same,
    /// Strictly older than the held one: ignored.
    Older,
    /// One side has no timestamp: cannot tell, so it is applied (stream events come in order).
    Unknown,
}

impl Freshness {
    /// Compares an incoming timestamp with the held one.
    pub fn of(held: Option<DateTime<Utc>>, incoming: Option<DateTime<Utc>>) -> Self {
        match (held, incoming) {
            (Some(h), Some(i)) if i > h => Self::Newer,
            (Some(h), Some(i)) if i < h => Self::Older,
            (Some(_), Some(_)) => Self::Same,
            _ => Self::Unknown,
        }
    }
}

/// Something learned about an attempt, fed to [`transition`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Observation {
    /// The remote task reports `state` (a send's answer, GetTask, ListTasks, a stream snapshot
    /// or status update), with its timestamp compared to the held one.
    Remote {
        /// The reported state.
        state: RemoteState,
        /// The timestamp against the held one.
        freshness: Freshness,
    },
    /// A task id became known without its state.
    TaskCreated,
    /// The send was answered by a direct Message (no task).
    DirectReply,
    /// The agent definitively refused the send.
    Refused,
    /// A look could not prove whether the send created anything.
    Unprovable,
    /// The agent answered TaskNotFound for the journaled task.
    NotFound,
    /// The operator decided to resend an `UNCERTAIN` attempt (`resolve --as resend`).
    Resend,
}

impl Observation {
    /// Every observation, with every freshness for remote ones (for exhaustive tests).
    pub fn all() -> Vec<Self> {
        let mut v = Vec::new();
        for state in RemoteState::ALL {
            for freshness in [
                Freshness::Newer,
                Freshness::Same,
                Freshness::Older,
                Freshness::Unknown,
            ] {
                v.push(Self::Remote { state, freshness });
            }
        }
        v.extend([
            Self::TaskCreated,
            Self::DirectReply,
            Self::Refused,
            Self::Unprovable,
            Self::NotFound,
            Self::Resend,
        ]);
        v
    }
}

/// An observation that cannot apply to an attempt in its state: a bug in the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{observation:?} does not apply to an attempt in state {from}")]
pub struct TransitionError {
    /// The attempt's state.
    pub from: AttemptState,
    /// The observation.
    pub observation: Observation,
}

/// Returns the attempt's next state for an observation: `Ok(None)` when nothing changes.
///
/// Pure; the journal calls it for every change. Rules:
/// - `INTENT` goes to `SENT`, a remote state, `REPLIED`, `REFUSED` or `UNCERTAIN`.
/// - A status strictly older than the one held is ignored, except a terminal one while the
///   held state is not terminal (agents' clocks step back); a remote terminal state never
///   changes again (a later report, even terminal, is ignored: the first terminal wins).
/// - `TaskNotFound` on a recorded, unfinished task makes it `LOST`; a later status revives it.
/// - `UNCERTAIN` can still be settled by a conclusive observation, and goes back to `INTENT`
///   only on the operator's `resend`.
/// - Send outcomes (`DirectReply`, `Refused`, `Unprovable`) on an attempt whose send is
///   already settled are errors, except the same outcome again (idempotent).
#[expect(
    clippy::match_same_arms,
    reason = "one arm per rule reads as the table it is"
)]
pub fn transition(
    from: AttemptState,
    obs: &Observation,
) -> Result<Option<AttemptState>, TransitionError> {
    use AttemptState as S;
    use Observation as O;
    let err = || TransitionError {
        from,
        observation: *obs,
    };
    let to = |s: AttemptState| if s == from { None } else { Some(s) };
    Ok(match (from, *obs) {
        // Nothing sent or nothing known yet: the first conclusive observation decides.
        (S::Intent | S::Uncertain, O::Remote { state, .. }) => {
            Some(AttemptState::from_remote(state))
        }
        (S::Intent | S::Uncertain, O::TaskCreated) => Some(S::Sent),
        (S::Intent | S::Uncertain, O::DirectReply) => Some(S::Replied),
        (S::Intent | S::Uncertain, O::Refused) => Some(S::Refused),
        (S::Intent | S::Uncertain, O::Unprovable) => to(S::Uncertain),
        (S::Uncertain, O::Resend) => Some(S::Intent),
        (S::Intent, O::Resend) => None,
        (S::Intent | S::Uncertain, O::NotFound) => return Err(err()),

        // A task is known and not finished: newer (or undated) statuses move it.
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost,
            O::Remote { state, freshness },
        ) => {
            // A terminal status is never dropped as older while the held one is not terminal:
            // agents' clocks step back, and a WORKING stamped ahead must not freeze the step.
            // A defect planted for the simulator only (`scripts/sim --plant
            // drop-terminal-as-stale`): a terminal status not strictly newer is dropped.
            #[cfg(feature = "sim")]
            let planted = crate::sim_seam::planted(crate::sim_seam::Plant::DropTerminalAsStale)
                && state.is_terminal()
                && freshness != Freshness::Newer;
            #[cfg(not(feature = "sim"))]
            let planted = false;
            if (freshness == Freshness::Older && !state.is_terminal()) || planted {
                None
            } else {
                to(AttemptState::from_remote(state))
            }
        }
        (
            S::Sent | S::Submitted | S::Working | S::InputRequired | S::AuthRequired | S::Unknown,
            O::NotFound,
        ) => Some(S::Lost),
        (S::Lost, O::NotFound) => None,
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost,
            O::TaskCreated,
        ) => None,

        // Remote terminal: nothing the agent says later changes it.
        (
            S::Completed | S::Failed | S::Canceled | S::Rejected,
            O::Remote { .. } | O::TaskCreated | O::NotFound,
        ) => None,

        // No task exists for these; only the same outcome again is accepted.
        (S::Replied, O::DirectReply) | (S::Refused, O::Refused) => None,

        // Everything else is a caller bug: a send outcome on a settled send, a resend of a
        // settled attempt, a task observation where no task can exist.
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost
            | S::Completed
            | S::Failed
            | S::Canceled
            | S::Rejected,
            O::DirectReply | O::Refused | O::Unprovable | O::Resend,
        )
        | (
            S::Replied | S::Refused,
            O::Remote { .. } | O::TaskCreated | O::NotFound | O::Unprovable | O::Resend,
        )
        | (S::Replied, O::Refused)
        | (S::Refused, O::DirectReply) => return Err(err()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_timestamp;
    use AttemptState as S;

    /// The expected table, written independently of `transition`'s match.
    fn expected(from: S, obs: Observation) -> Result<Option<S>, ()> {
        let remote_live = matches!(
            from,
            S::Sent | S::Submitted | S::Working | S::InputRequired | S::AuthRequired | S::Unknown
        );
        match obs {
            Observation::Remote { state, freshness } => {
                let target = AttemptState::from_remote(state);
                if matches!(from, S::Intent | S::Uncertain) {
                    Ok(Some(target))
                } else if remote_live || from == S::Lost {
                    if (freshness == Freshness::Older && !target.is_terminal()) || target == from {
                        Ok(None)
                    } else {
                        Ok(Some(target))
                    }
                } else if from.is_terminal() && from.has_task() {
                    Ok(None)
                } else {
                    Err(())
                }
            }
            Observation::TaskCreated => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Sent)),
                S::Replied | S::Refused => Err(()),
                _ => Ok(None),
            },
            Observation::DirectReply => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Replied)),
                S::Replied => Ok(None),
                _ => Err(()),
            },
            Observation::Refused => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Refused)),
                S::Refused => Ok(None),
                _ => Err(()),
            },
            Observation::Unprovable => match from {
                S::Intent => Ok(Some(S::Uncertain)),
                S::Uncertain => Ok(None),
                _ => Err(()),
            },
            Observation::NotFound => {
                if remote_live {
                    Ok(Some(S::Lost))
                } else if from == S::Lost || (from.is_terminal() && from.has_task()) {
                    Ok(None)
                } else {
                    Err(())
                }
            }
            Observation::Resend => match from {
                S::Uncertain => Ok(Some(S::Intent)),
                S::Intent => Ok(None),
                _ => Err(()),
            },
        }
    }

    #[test]
    fn transition_matches_the_table_for_every_pair() {
        let mut pairs = 0;
        for from in S::ALL {
            for obs in Observation::all() {
                pairs += 1;
                let got = transition(from, &obs).map_err(|_| ());
                assert_eq!(got, expected(from, obs), "{from} + {obs:?}");
            }
        }
        assert_eq!(pairs, 15 * (9 * 4 + 6));
    }

    #[test]
    fn invariants_hold_for_every_pair() {
        for from in S::ALL {
            for obs in Observation::all() {
                let Ok(result) = transition(from, &obs) else {
                    continue;
                };
                if let Some(to) = result {
                    assert_ne!(to, from, "a change must change: {from} + {obs:?}");
                    // A remote terminal state never changes again.
                    assert!(
                        !(from.is_terminal()),
                        "terminal {from} moved to {to} on {obs:?}"
                    );
                    // Only the operator's resend goes back to INTENT.
                    if to == S::Intent {
                        assert_eq!((from, obs), (S::Uncertain, Observation::Resend));
                    }
                }
                // Strictly older statuses never change a task we know, except a terminal one
                // over a state that is not terminal (which it always ends).
                if let Observation::Remote {
                    freshness: Freshness::Older,
                    state,
                } = obs
                    && from.has_task()
                {
                    let expected = (state.is_terminal() && !from.is_terminal())
                        .then(|| AttemptState::from_remote(state))
                        .filter(|to| *to != from);
                    assert_eq!(result, expected, "{from} + {obs:?}");
                }
            }
        }
    }

    #[test]
    fn intent_reaches_every_first_outcome() {
        let i = S::Intent;
        assert_eq!(transition(i, &Observation::TaskCreated), Ok(Some(S::Sent)));
        assert_eq!(
            transition(i, &Observation::DirectReply),
            Ok(Some(S::Replied))
        );
        assert_eq!(transition(i, &Observation::Refused), Ok(Some(S::Refused)));
        assert_eq!(
            transition(i, &Observation::Unprovable),
            Ok(Some(S::Uncertain))
        );
        for state in RemoteState::ALL {
            let obs = Observation::Remote {
                state,
                freshness: Freshness::Unknown,
            };
            assert_eq!(
                transition(i, &obs),
                Ok(Some(AttemptState::from_remote(state)))
            );
        }
    }

    #[test]
    fn unknown_is_not_finished() {
        assert!(!S::Unknown.is_finished());
        assert!(!S::Uncertain.is_finished());
        assert!(S::Lost.is_finished());
        let obs = Observation::Remote {
            state: RemoteState::Completed,
            freshness: Freshness::Newer,
        };
        assert_eq!(transition(S::Unknown, &obs), Ok(Some(S::Completed)));
    }

    #[test]
    fn freshness_compares_timestamps() {
        let t = |s| parse_timestamp(s);
        let a = t("2026-11-30T01:00:00.123456Z");
        let b = t("2026-11-30T01:00:00.123457Z");
        assert_eq!(Freshness::of(a, b), Freshness::Newer);
        assert_eq!(Freshness::of(b, a), Freshness::Older);
        assert_eq!(Freshness::of(a, a), Freshness::Same);
        // Different precision, same instant.
        assert_eq!(
            Freshness::of(
                t("2026-11-30T01:00:00.1Z"),
                t("2026-11-30T01:00:00.100000Z")
            ),
            Freshness::Same
        );
        assert_eq!(Freshness::of(None, a), Freshness::Unknown);
        assert_eq!(Freshness::of(a, None), Freshness::Unknown);
    }
}
