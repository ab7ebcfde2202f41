//! Where what a pass tells becomes output: the one place a recovery [`Event`] turns into a JSON
//! record for programs (`records`) or a line for people (`human`), with the words both use
//! (`vocabulary`).
//!
//! A pass hands its events to the sink its command gives it ([`crate::recovery::Sink`]); the
//! command's sink keeps what is its own (a progress bar, the `--alert new` judgement) and
//! renders each event with the functions here, so one event kind has one record and one
//! sentence whichever command ran the pass.
//!
//! [`Event`]: crate::recovery::Event

pub(crate) mod compensated;
pub(crate) mod human;
pub(crate) mod records;
pub(crate) mod vocabulary;

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::journal::{AttemptId, StepName};
use crate::output::Printer;
use crate::recovery::{Event, Sink};
use crate::sanitize::inert;

use self::records::ActionRecord;

/// The sink of `delegate`'s sends: each step of a send told before its outcome is an `action`
/// record (JSON); for people, only an agent that cannot be searched is worth a warning (the
/// outcome's line says the rest).
pub(crate) struct SendSteps<'a> {
    out: &'a Printer,
    /// The step of each attempt being sent.
    steps: HashMap<AttemptId, &'a StepName>,
}

impl<'a> SendSteps<'a> {
    /// A sink for the sends of `steps`' attempts.
    pub(crate) fn new(out: &'a Printer, steps: HashMap<AttemptId, &'a StepName>) -> Self {
        Self { out, steps }
    }
}

impl Sink for SendSteps<'_> {
    fn event(&self, event: Event<'_>) -> anyhow::Result<()> {
        let Event::Sending {
            attempt,
            action,
            outcome,
            detail,
        } = event
        else {
            return Ok(());
        };
        let Some(step) = self.steps.get(&attempt.id) else {
            return Ok(());
        };
        if !self.out.is_json() {
            if outcome == "unsearchable" {
                self.out
                    .warn(&inert(detail["reason"].as_str().unwrap_or_default()));
            }
            return Ok(());
        }
        let empty = json!({});
        let detail: &Value = if detail.is_null() { &empty } else { detail };
        let record = ActionRecord::new(
            &step.workflow,
            &step.step,
            attempt.number,
            action,
            outcome,
            detail,
        );
        // A broken pipe here shows again at the step's final line, which reports it.
        let _ = self.out.record(&record.to_value());
        Ok(())
    }
}
