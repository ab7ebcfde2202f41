//! The last [`super::journaled_wire`] worked out, kept for the next attempt of the same agent.
//!
//! Working it out parses the agent's journaled card (twice for an attempt journaled before
//! bindings were), and a plan's steps or a pass's rows mostly share one agent and one card: a
//! 1,000-step `delegate --plan` parsed the same card 2,000 times. The answer depends only on
//! the key's fields, each compared in full, so a kept answer is the one that would be worked
//! out again; a changed card (fetched again, another agent) is a new key.

use std::cell::RefCell;

use super::JournaledWire;
use crate::model::ProtocolBinding;

/// What [`super::journaled_wire`]'s answer depends on.
pub(super) struct Key<'a> {
    pub(super) card_url: &'a str,
    pub(super) card: Option<&'a str>,
    pub(super) binding: Option<ProtocolBinding>,
    pub(super) interface_url: Option<&'a str>,
}

/// [`Key`], owned.
#[derive(PartialEq, Eq)]
struct Kept {
    card_url: String,
    card: Option<String>,
    binding: Option<ProtocolBinding>,
    interface_url: Option<String>,
}

impl Kept {
    fn is(&self, key: &Key<'_>) -> bool {
        self.card_url == key.card_url
            && self.card.as_deref() == key.card
            && self.binding == key.binding
            && self.interface_url.as_deref() == key.interface_url
    }
}

thread_local! {
    static LAST: RefCell<Option<(Kept, JournaledWire)>> = const { RefCell::new(None) };
}

/// Returns the answer kept for `key`, or works it out with `work_out` and keeps it (an error
/// is returned and not kept).
pub(super) fn memo(
    key: &Key<'_>,
    work_out: impl FnOnce() -> anyhow::Result<JournaledWire>,
) -> anyhow::Result<JournaledWire> {
    let kept = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(k, _)| k.is(key))
            .map(|(_, wire)| wire.clone())
    });
    if let Some(wire) = kept {
        return Ok(wire);
    }
    let wire = work_out()?;
    let kept = Kept {
        card_url: key.card_url.to_owned(),
        card: key.card.map(str::to_owned),
        binding: key.binding,
        interface_url: key.interface_url.map(str::to_owned),
    };
    LAST.set(Some((kept, wire.clone())));
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::Placement;

    fn key<'a>(card: Option<&'a str>, interface_url: Option<&'a str>) -> Key<'a> {
        Key {
            card_url: "http://127.0.0.1:1/.well-known/agent-card.json",
            card,
            binding: None,
            interface_url,
        }
    }

    #[test]
    fn an_answer_is_reused_only_for_the_same_key() {
        let rest = JournaledWire {
            binding: ProtocolBinding::HttpJsonV1,
            placement: Placement::Bearer,
        };
        let first = memo(&key(Some("{}"), Some("http://a/")), || Ok(rest.clone())).unwrap();
        assert_eq!(first, rest);
        let again = memo(&key(Some("{}"), Some("http://a/")), || {
            panic!("worked out again for the same key")
        });
        assert_eq!(again.unwrap(), rest);
        for other in [
            key(Some("{ }"), Some("http://a/")),
            key(None, Some("http://a/")),
            key(Some("{}"), Some("http://b/")),
            key(Some("{}"), None),
        ] {
            let fresh = memo(&other, || Ok(JournaledWire::default())).unwrap();
            assert_eq!(fresh, JournaledWire::default());
            assert_eq!(memo(&other, || unreachable!()).unwrap(), fresh);
        }
        assert!(memo(&key(Some("x"), None), || anyhow::bail!("bad card")).is_err());
        assert_eq!(
            memo(&key(Some("x"), None), || Ok(rest.clone())).unwrap(),
            rest,
            "an error is not kept"
        );
    }
}
