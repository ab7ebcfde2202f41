//! Schema migrations: append-only SQL files embedded in the binary, versioned by
//! `PRAGMA user_version`.
//!
//! Each pending migration runs, and `user_version` is set, in ONE `BEGIN IMMEDIATE`
//! transaction: a crash leaves the journal at the old version or the new one, never between.
//! A released migration is history: it is never edited (a checksum test enforces it); a change
//! is a new file. A journal newer than [`LATEST`] is never migrated: it is opened read-only.

/// One embedded migration, in each store's SQL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    /// The schema version after it (`user_version` on SQLite, `schema_migrations` on
    /// PostgreSQL).
    pub(crate) version: i64,
    /// Its file name without `.sql`, the same in both stores.
    pub(crate) name: &'static str,
    /// Its SQLite SQL (`migrations/NAME.sql`).
    pub(crate) sql: &'static str,
    /// Its PostgreSQL SQL (`postgres/migrations/NAME.sql`).
    pub(crate) postgres: &'static str,
}

/// One entry of [`MIGRATIONS`]: both stores' files of that name, so that no migration can
/// exist for one store and not the other.
macro_rules! migration {
    ($version:literal, $name:literal) => {
        Migration {
            version: $version,
            name: $name,
            sql: include_str!(concat!("migrations/", $name, ".sql")),
            postgres: include_str!(concat!("postgres/migrations/", $name, ".sql")),
        }
    };
}

/// Every migration, in order; entry `i` has version `i + 1`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_init"),
    migration!(2, "0002_decisions"),
    migration!(3, "0003_pending_and_prune"),
    migration!(4, "0004_artifact_chunks"),
    migration!(5, "0005_send_horizon"),
    migration!(6, "0006_agent_limits"),
    migration!(7, "0007_alerts"),
    migration!(8, "0008_continuation"),
    migration!(9, "0009_agent_profile"),
    migration!(10, "0010_attempt_binding"),
    migration!(11, "0011_token_cmd"),
    migration!(12, "0012_lease_owner"),
    migration!(13, "0013_moved"),
    migration!(14, "0014_needs_human"),
    migration!(15, "0015_credential_source"),
    migration!(16, "0016_reply_data"),
    migration!(17, "0017_agent_not_before"),
    migration!(18, "0018_agent_health"),
    migration!(19, "0019_step_data"),
    migration!(20, "0020_push"),
    migration!(21, "0021_push_tidy"),
    migration!(22, "0022_reply_error_kind"),
    migration!(23, "0023_check_lists"),
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
    fn the_array_matches_the_files_on_disk_of_both_stores() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/journal");
        type SqlOf = fn(&Migration) -> &'static str;
        let stores: [(&str, SqlOf); 2] = [
            ("migrations", |m| m.sql),
            ("postgres/migrations", |m| m.postgres),
        ];
        for (sub, sql_of) in stores {
            let dir = src.join(sub);
            let mut files: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            files.sort();
            let names: Vec<String> = MIGRATIONS
                .iter()
                .map(|m| format!("{}.sql", m.name))
                .collect();
            assert_eq!(files, names, "{sub}");
            for m in MIGRATIONS {
                let on_disk = std::fs::read_to_string(dir.join(format!("{}.sql", m.name))).unwrap();
                assert_eq!(on_disk, sql_of(m), "{sub}/{}", m.name);
            }
        }
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.name);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{}",
                m.name
            );
            let code: String = m
                .postgres
                .lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .collect();
            for sqlite_only in ["STRICT", "PRAGMA", "INTEGER PRIMARY KEY"] {
                assert!(!code.contains(sqlite_only), "{}: {sqlite_only}", m.name);
            }
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
