//! Two facts of an attempt row that its own columns do not hold: when its state last changed
//! (what AGE measures in every view), and whether its latest reply was text the agent refused
//! as invalid parameters (its remedy then names a structured answer).

/// When attempt `a`'s state last changed, in unix milliseconds: its latest event that moved
/// the state (a read's `state`, an operator's `resolved` or `unresolved`), else its creation.
/// A read that failed, an artifact or a note moves `updated_at`, never this.
pub(super) const STATE_CHANGED_AT: &str = "COALESCE(
         (SELECT MAX(sc.at) FROM events sc
           WHERE sc.attempt_id = a.id AND sc.kind IN ('state', 'resolved', 'unresolved')
             AND sc.from_state <> sc.to_state),
         a.created_at)";

/// 1 when attempt `a` waits for an answer and its latest reply was text that the agent refused
/// as invalid parameters (its journaled kind `INVALID_PARAMS`, whichever binding said it), else
/// 0. Read only for a waiting attempt, so a pass's other rows cost no search.
pub(super) const TEXT_REPLY_REFUSED: &str =
    "CASE WHEN a.state IN ('INPUT_REQUIRED', 'AUTH_REQUIRED')
         THEN COALESCE((SELECT CASE WHEN rr.state = 'REFUSED' AND rr.data_json IS NULL
                                     AND rr.error_kind = 'INVALID_PARAMS'
                                    THEN 1 ELSE 0 END
                          FROM replies rr WHERE rr.attempt_id = a.id
                         ORDER BY rr.id DESC LIMIT 1), 0)
         ELSE 0 END";
