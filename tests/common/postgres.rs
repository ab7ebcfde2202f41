//! The PostgreSQL server of a test run: `scripts/test` starts one (`scripts/pg-test-server`) and
//! exports `A2A_RECOVER_TEST_PG_URL` (`postgres://ROLE:PASSWORD@127.0.0.1:PORT/DB`). Each test
//! gets its own schema (`schema=t_<random>`), so tests run in parallel on one server.
//!
//! A missing variable or an unreachable server fails the test, never skips it: the PostgreSQL
//! store is only proven when it runs. Also compiled into the library's unit tests
//! (`src/journal/postgres/tests.rs`), so it uses only std and the library's own dependencies.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The variable `scripts/test` exports.
pub const PG_URL_VAR: &str = "A2A_RECOVER_TEST_PG_URL";

/// What to run when the server is missing.
pub const PG_HINT: &str = "run the tests with `scripts/test`, which starts a PostgreSQL 15 for the \
                           run (or start one by hand: `eval \"$(scripts/pg-test-server start)\"`)";

/// Returns the test server's URL (no schema), after checking that it accepts connections.
pub fn pg_server_url() -> String {
    let url =
        std::env::var(PG_URL_VAR).unwrap_or_else(|_| panic!("{PG_URL_VAR} is not set: {PG_HINT}"));
    let parsed = url::Url::parse(&url).unwrap_or_else(|e| panic!("{PG_URL_VAR} is no URL ({e})"));
    let host = parsed.host_str().unwrap_or("127.0.0.1");
    let port = parsed.port().unwrap_or(5432);
    let addr = (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .unwrap_or_else(|| panic!("{PG_URL_VAR} names no address: {PG_HINT}"));
    if let Err(e) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
        panic!("the PostgreSQL test server at {host}:{port} cannot be reached ({e}): {PG_HINT}");
    }
    url
}

/// Returns a fresh schema name, `t_` and 32 hex digits.
pub fn fresh_schema() -> String {
    format!("t_{}", uuid::Uuid::new_v4().simple())
}

/// Returns the test server's URL with a fresh schema of its own.
pub fn pg_url() -> String {
    with_params(&pg_server_url(), &format!("schema={}", fresh_schema()))
}

/// Returns `url` with `params` (`k=v&…`) added to its query.
pub fn with_params(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// Returns the test server's password (the URL's), to check that no output shows it.
pub fn pg_password() -> String {
    let url = url::Url::parse(&pg_server_url()).expect("a URL");
    url.password()
        .expect("the test URL has a password")
        .to_owned()
}
