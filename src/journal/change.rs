//! Changes to one attempt: the read-decide-write cycle every observation goes through (the
//! next row built from the held one, [`super::transition`] checked, an event appended, nothing
//! written when nothing differs), and the endpoint journaled before a send.

use serde_json::{Value, json};

use super::queries::{self, NewEvent};
use super::sql::{DbError, Tx};
use super::{
    Applied, Artifact, Attempt, AttemptId, AttemptState, Journal, JournalError, JournaledEndpoint,
    Observation, transition,
};

impl Journal {
    /// Applies a change to one attempt in one transaction: `f` builds the next row from the
    /// held one; if nothing differs, nothing is written (the transaction is rolled back).
    pub(super) fn change(
        &self,
        id: AttemptId,
        action: &'static str,
        f: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<Applied, JournalError> {
        self.write_attempts_if_changed(&[id], action, |tx, e, now| {
            let (applied, _) = Self::change_in(tx, &e, now, id, Wanted::All, f)?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// The body of [`Journal::change`], inside a transaction the caller commits; returns what
    /// it did and the id of the event it appended.
    ///
    /// `wanted` says which held artifacts `f` needs: reading (and parsing) every artifact of an
    /// attempt for each stream event would cost a long stream time quadratic in its length.
    pub(super) fn change_in(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        id: AttemptId,
        wanted: Wanted<'_>,
        f: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<(Applied, Option<i64>), JournalError> {
        Self::change_in_written(tx, e, now, id, wanted, f)
            .map(|(applied, event, _)| (applied, event))
    }

    /// [`Journal::change_in`], also returning the attempt as the transaction leaves it (the row
    /// as written, or as held when nothing changed).
    pub(super) fn change_in_written(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        id: AttemptId,
        wanted: Wanted<'_>,
        f: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<(Applied, Option<i64>, Attempt), JournalError> {
        let held = queries::attempt_by_id(tx, id)
            .map_err(e)?
            .ok_or(JournalError::UnknownAttempt(id.0))?;
        let held_artifacts = match wanted {
            Wanted::All => queries::artifacts_of(tx, id).map_err(e)?,
            Wanted::Only(ids) => {
                let mut found = Vec::with_capacity(ids.len());
                for artifact_id in ids {
                    found.extend(queries::artifact_of(tx, id, artifact_id).map_err(e)?);
                }
                found
            }
        };
        let Some(change) = f(&held, &held_artifacts)? else {
            return Ok((Applied::Unchanged, None, held));
        };
        Self::apply_change(tx, e, now, &held, change)
    }

    /// Writes a change of an attempt read in the same transaction (`held`): the row, its
    /// artifacts and the event; returns what it did, the event's id and the row as written.
    pub(super) fn apply_change(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        held: &Attempt,
        change: Change,
    ) -> Result<(Applied, Option<i64>, Attempt), JournalError> {
        Self::apply_change_stamped(tx, e, now, held, change, None)
    }

    /// [`Journal::apply_change`], stamping the row with the start of a send in the same
    /// UPDATE.
    pub(super) fn apply_change_stamped(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        held: &Attempt,
        change: Change,
        send: Option<queries::SendStamp>,
    ) -> Result<(Applied, Option<i64>, Attempt), JournalError> {
        let Some(written) = Written::of(held, change, now) else {
            return Ok((Applied::Unchanged, None, held.clone()));
        };
        queries::update_attempt_from(tx, held, &written.next, send).map_err(e)?;
        for artifact in &written.artifacts {
            queries::upsert_artifact(tx, held.id, artifact, queries::ms(now)).map_err(e)?;
        }
        let event = queries::insert_event(tx, &written.event(held, now)).map_err(e)?;
        Ok((written.applied(held), Some(event), written.next))
    }

    pub(super) fn transition_of(
        held: &Attempt,
        obs: Observation,
    ) -> Result<Option<AttemptState>, JournalError> {
        transition(held.state, &obs).map_err(|source| JournalError::Transition {
            attempt: held.id.0,
            source,
        })
    }

    /// Journals the endpoint an attempt is about to be sent to; call it before every send.
    ///
    /// The first endpoint journaled wins: an attempt is always resent (and looked for) where it
    /// was first sent, so the returned attempt's `interface_url`/`tenant`/`binding` are the ones to
    /// use.
    pub fn set_endpoint(
        &self,
        id: AttemptId,
        endpoint: &JournaledEndpoint,
    ) -> Result<Attempt, JournalError> {
        self.change(id, "journal the endpoint", |held, _| {
            Ok(Self::endpoint_change(held, endpoint))
        })?;
        self.attempt(id)
    }

    /// Journals that an attempt's interface has left its agent's card and that later reads go
    /// to `to` (an `interface-moved` event naming both); nothing when `to` is already journaled.
    pub fn move_endpoint(
        &self,
        id: AttemptId,
        to: &JournaledEndpoint,
    ) -> Result<Attempt, JournalError> {
        self.change(id, "journal the moved interface", |held, _| {
            if held.interface_url.as_deref() == Some(to.interface_url.as_str())
                && held.binding == Some(to.binding)
                && held.tenant == to.tenant
            {
                return Ok(None);
            }
            let side = |url: Option<&str>, b: Option<crate::model::ProtocolBinding>| {
                json!({"interfaceUrl": url,
                       "binding": b.map(|b| b.wire().card_name()),
                       "protocolVersion": b.map(|b| b.version().as_str())})
            };
            let mut next = held.clone();
            next.interface_url = Some(to.interface_url.clone());
            next.tenant.clone_from(&to.tenant);
            next.binding = Some(to.binding);
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "interface-moved",
                detail: json!({"from": side(held.interface_url.as_deref(), held.binding),
                               "to": side(Some(&to.interface_url), Some(to.binding))}),
                force_event: true,
            }))
        })?;
        self.attempt(id)
    }

    /// What journaling an endpoint changes: nothing once one is journaled.
    pub(super) fn endpoint_change(held: &Attempt, endpoint: &JournaledEndpoint) -> Option<Change> {
        if held.interface_url.is_some() {
            return None;
        }
        let mut next = held.clone();
        next.interface_url = Some(endpoint.interface_url.clone());
        next.tenant.clone_from(&endpoint.tenant);
        next.binding = Some(endpoint.binding);
        Some(Change {
            next,
            artifacts: Vec::new(),
            kind: "endpoint",
            detail: json!({"interfaceUrl": endpoint.interface_url, "tenant": endpoint.tenant,
                           "binding": endpoint.binding.wire().card_name(),
                           "protocolVersion": endpoint.binding.version().as_str()}),
            force_event: false,
        })
    }
}

/// Which held artifacts a change reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wanted<'a> {
    /// Every artifact of the attempt.
    All,
    /// Only these artifact ids (none: no read at all).
    Only(&'a [&'a str]),
}

/// A pending change to one attempt, built by a closure in [`Journal::change`].
pub(super) struct Change {
    /// The attempt after the change.
    pub(super) next: Attempt,
    /// Artifacts to write.
    pub(super) artifacts: Vec<Artifact>,
    /// The event's kind when the state does not change but data does.
    pub(super) kind: &'static str,
    /// The event's details.
    pub(super) detail: Value,
    /// Force an event even if no column changes (failures).
    pub(super) force_event: bool,
}

impl Change {
    /// Whether applying it to `held` writes anything (the row, an artifact or an event).
    pub(super) fn writes(&self, held: &Attempt) -> bool {
        self.next != *held || !self.artifacts.is_empty() || self.force_event
    }
}

/// What a change writes: the row (stamped with the time of the write), its artifacts and its
/// event.
pub(super) struct Written {
    /// The row as written.
    pub(super) next: Attempt,
    /// The artifacts written.
    pub(super) artifacts: Vec<Artifact>,
    kind: &'static str,
    detail: Value,
}

impl Written {
    /// Returns what applying `change` to `held` at `now` writes; `None` when it writes nothing.
    pub(super) fn of(
        held: &Attempt,
        change: Change,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Self> {
        if !change.writes(held) {
            return None;
        }
        let mut next = change.next;
        next.updated_at = now;
        let kind = if next.state == held.state {
            change.kind
        } else {
            "state"
        };
        Some(Self {
            next,
            artifacts: change.artifacts,
            kind,
            detail: change.detail,
        })
    }

    /// Returns what it did to `held`.
    pub(super) fn applied(&self, held: &Attempt) -> Applied {
        Applied::Changed {
            from: held.state,
            to: self.next.state,
        }
    }

    /// Returns its event (of the change from `held`, at `now`).
    pub(super) fn event<'a>(
        &'a self,
        held: &'a Attempt,
        now: chrono::DateTime<chrono::Utc>,
    ) -> NewEvent<'a> {
        NewEvent {
            at: queries::ms(now),
            workflow: None,
            step: Some(held.step_id),
            attempt: Some(held.id),
            kind: self.kind,
            from: Some(held.state.as_str()),
            to: Some(self.next.state.as_str()),
            detail: Some(&self.detail),
        }
    }
}
