//! Schema migrations: append-only SQL files embedded in the binary, versioned by
//! `PRAGMA user_version`.
//!
//! Each pending migration runs, and `user_version` is set, in ONE `BEGIN IMMEDIATE`
//! transaction: a crash leaves the journal at the old version or the new one, never between.
//! A released migration is history: it is never edited (a checksum test enforces it); a change
//! is a new file. A journal newer than [`LATEST`] is never migrated: it is opened read-only.

/// One embedded migration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    /// The `user_version` after it.
    pub(crate) version: i64,
    /// Its file name without `.sql`.
    pub(crate) name: &'static str,
    /// Its SQL.
    pub(crate) sql: &'static str,
}

/// Every migration, in order; entry `i` has version `i + 1`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init",
        sql: include_str!("migrations/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_decisions",
        sql: include_str!("migrations/0002_decisions.sql"),
    },
    Migration {
        version: 3,
        name: "0003_pending_and_prune",
        sql: include_str!("migrations/0003_pending_and_prune.sql"),
    },
    Migration {
        version: 4,
        name: "0004_artifact_chunks",
        sql: include_str!("migrations/0004_artifact_chunks.sql"),
    },
    Migration {
        version: 5,
        name: "0005_send_horizon",
        sql: include_str!("migrations/0005_send_horizon.sql"),
    },
    Migration {
        version: 6,
        name: "0006_agent_limits",
        sql: include_str!("migrations/0006_agent_limits.sql"),
    },
    Migration {
        version: 7,
        name: "0007_alerts",
        sql: include_str!("migrations/0007_alerts.sql"),
    },
    Migration {
        version: 8,
        name: "0008_continuation",
        sql: include_str!("migrations/0008_continuation.sql"),
    },
    Migration {
        version: 9,
        name: "0009_agent_profile",
        sql: include_str!("migrations/0009_agent_profile.sql"),
    },
    Migration {
        version: 10,
        name: "0010_attempt_binding",
        sql: include_str!("migrations/0010_attempt_binding.sql"),
    },
    Migration {
        version: 11,
        name: "0011_token_cmd",
        sql: include_str!("migrations/0011_token_cmd.sql"),
    },
    Migration {
        version: 12,
        name: "0012_lease_owner",
        sql: include_str!("migrations/0012_lease_owner.sql"),
    },
    Migration {
        version: 13,
        name: "0013_moved",
        sql: include_str!("migrations/0013_moved.sql"),
    },
];

/// The newest schema version this binary knows.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// The `application_id` of an a2a-recover journal ('A2AR'), set by migration 1.
pub const APPLICATION_ID: i64 = 0x4132_4152;

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a, 64 bits: enough to notice an edited file.
    fn fnv1a(bytes: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// Released migrations and their checksums: editing a released file fails this test.
    const RELEASED: &[(&str, u64)] = &[("0001_init", 0x7dea_427f_da79_a118)];

    #[test]
    fn the_array_matches_the_files_on_disk() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/journal/migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let names: Vec<String> = MIGRATIONS
            .iter()
            .map(|m| format!("{}.sql", m.name))
            .collect();
        assert_eq!(files, names);
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.name);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{}",
                m.name
            );
            let on_disk = std::fs::read_to_string(dir.join(format!("{}.sql", m.name))).unwrap();
            assert_eq!(on_disk, m.sql);
        }
    }

    #[test]
    fn released_migrations_are_never_edited() {
        for (name, sum) in RELEASED {
            let m = MIGRATIONS.iter().find(|m| m.name == *name).unwrap();
            assert_eq!(
                fnv1a(m.sql.as_bytes()),
                *sum,
                "released migration {name} was edited; add a new migration instead"
            );
        }
    }
}
