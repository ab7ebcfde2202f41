//! The operator docs against the binary: every record type and field `docs/json-output.md`
//! claims for `inspect --format json` and `reconcile --format json` appears in real output (and
//! nothing undocumented does), and `docs/exit-codes.md` lists exactly the constants of
//! `src/exit.rs` with their numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use crate::common::{TestEnv, agent, code, json_lines, stderr, stdout};

fn read(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Markdown parsing
// ---------------------------------------------------------------------------------------------

/// Returns the lines of the section that starts with the heading `heading` (exact line), up to
/// the next heading of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = text.lines();
    assert!(
        lines.by_ref().any(|l| l == heading),
        "no heading `{heading}` in the document"
    );
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// Returns the rows of the first Markdown table in `lines`, as cells (header and separator
/// skipped).
fn table_rows(lines: &[&str]) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> = lines
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect();
    assert!(rows.len() > 2, "no table in {lines:?}");
    rows.into_iter().skip(2).collect()
}

/// The words in backticks of a cell, in order.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A record's documented fields: top-level names, each with the names listed in parentheses
/// right after it (`remedy` (`what`, `command`)).
type Fields = BTreeMap<String, BTreeSet<String>>;

/// Parses a fields cell: `` `a`, `b` (`c`, `d`), `e` ``.
fn fields(cell: &str) -> Fields {
    let mut out = Fields::new();
    let mut depth = 0usize;
    let mut last: Option<String> = None;
    let mut in_tick = false;
    let mut word = String::new();
    for c in cell.chars() {
        match c {
            '`' if in_tick => {
                in_tick = false;
                let name = std::mem::take(&mut word);
                if depth == 0 {
                    out.entry(name.clone()).or_default();
                    last = Some(name);
                } else {
                    let parent = last.clone().expect("a nested field follows a field");
                    out.entry(parent).or_default().insert(name);
                }
            }
            '`' => in_tick = true,
            c if in_tick => word.push(c),
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// The `record | fields` table of a command in "## Records by command".
fn documented_records(doc: &str, command: &str) -> BTreeMap<String, Fields> {
    let records = section(doc, "## Records by command");
    let heading = format!("### `{command}`");
    let start = records
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("no `{heading}` under \"Records by command\""));
    let lines: Vec<&str> = records[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("### "))
        .copied()
        .collect();
    table_rows(&lines)
        .into_iter()
        .map(|row| {
            let record = backticked(&row[0])
                .into_iter()
                .next()
                .expect("a record type in backticks");
            (record, fields(&row[1]))
        })
        .collect()
}

/// The field names of a "## Field reference" table (first column, in backticks).
fn reference_fields(doc: &str, record: &str) -> BTreeSet<String> {
    let reference = section(doc, "## Field reference");
    let heading = format!("### `{record}`");
    let start = reference
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("no `{heading}` under \"Field reference\""));
    table_rows(&reference[start + 1..])
        .into_iter()
        .flat_map(|row| backticked(&row[0]))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Checking records against the docs
// ---------------------------------------------------------------------------------------------

/// Checks that every documented record type appears, that every record of a documented type
/// has every documented field (and, where the field is an object, its documented sub-fields),
/// that each documented sub-field is seen at least once, and that no record type or top-level
/// field is undocumented.
fn check(command: &str, documented: &BTreeMap<String, Fields>, records: &[Value]) {
    let mut seen_types = BTreeSet::new();
    let mut seen_nested: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in records {
        let ty = r["type"].as_str().expect("every record has a type");
        seen_types.insert(ty.to_owned());
        let fields = documented
            .get(ty)
            .unwrap_or_else(|| panic!("`{command}` wrote an undocumented record type: {r}"));
        let obj = r.as_object().expect("a JSON object");
        for (field, children) in fields {
            let value = obj
                .get(field)
                .unwrap_or_else(|| panic!("`{command}`: `{ty}` without `{field}`: {r}"));
            if children.is_empty() {
                continue;
            }
            if let Some(inner) = value.as_object() {
                for child in children {
                    assert!(
                        inner.contains_key(child),
                        "`{command}`: `{ty}.{field}` without `{child}`: {r}"
                    );
                }
                *seen_nested
                    .entry((ty.to_owned(), field.clone()))
                    .or_default() += 1;
            } else {
                assert!(
                    value.is_null(),
                    "`{command}`: `{ty}.{field}` is neither an object nor null: {r}"
                );
            }
        }
        for key in obj.keys() {
            assert!(
                fields.contains_key(key),
                "`{command}`: `{ty}` has the undocumented field `{key}`: {r}"
            );
        }
    }
    let documented_types: BTreeSet<String> = documented.keys().cloned().collect();
    assert_eq!(
        seen_types, documented_types,
        "`{command}`: record types seen vs documented"
    );
    for (ty, fields) in documented {
        for (field, children) in fields {
            if !children.is_empty() {
                assert!(
                    seen_nested.contains_key(&(ty.clone(), field.clone())),
                    "`{command}`: no `{ty}` record had `{field}` as an object, so its fields \
                     {children:?} were never checked"
                );
            }
        }
    }
}

fn run_json(env: &TestEnv, args: &[&str], want: i32) -> Vec<Value> {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    assert_eq!(
        code(&out),
        want,
        "{args:?}\nstdout:\n{}\nstderr:\n{}",
        stdout(&out),
        stderr(&out)
    );
    json_lines(&out)
}

#[test]
fn inspect_and_reconcile_write_exactly_the_documented_records_and_fields() {
    let doc = read("docs/json-output.md");
    let server = agent(AgentConfig {
        tick: Duration::from_millis(20),
        push: true,
        ..AgentConfig::default()
    });
    let url = server.url();
    let env = TestEnv::new();
    for (step, text) in [
        ("docs/ask", "ask book a room"),
        ("docs/done", "ask book a car"),
    ] {
        // An attempt with a push config (`push` as an object).
        let push = "http://127.0.0.1:9/hooks";
        let out = env.run(["delegate", step, "--agent", &url, text, "--push", push]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        // follow stops at INPUT_REQUIRED (exit 4): no sleeps, the question is journaled.
        let out = env.run(["follow", step]);
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    }

    // reconcile: an action with a remedy (the pending question) and the summary.
    // A dry run writes the same record types, with `would-…` outcomes.
    let mut records = run_json(&env, &["reconcile", "--dry-run"], 4);
    records.extend(run_json(&env, &["reconcile"], 4));
    check(
        "reconcile",
        &documented_records(&doc, "reconcile"),
        &records,
    );

    // inspect: a resolved attempt (resolution object), a pending one (remedy object), events.
    let out = env.run([
        "resolve",
        "docs/done",
        "--as",
        "done",
        "--reason",
        "answered by phone",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut records = run_json(&env, &["inspect"], 0);
    let events = run_json(&env, &["inspect", "docs/ask", "--events"], 0);
    assert!(
        events.iter().any(|r| r["type"] == "event"),
        "no events: {events:?}"
    );
    records.extend(events);
    // A completed step: its `artifact` records.
    let out = env.run(["delegate", "docs/book", "--agent", &url, "book a room"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["follow", "docs/book"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let step = run_json(&env, &["inspect", "docs/book"], 0);
    assert!(
        step.iter().any(|r| r["type"] == "artifact"),
        "no artifacts: {step:?}"
    );
    records.extend(step);
    check("inspect", &documented_records(&doc, "inspect"), &records);

    // prune: a dry run and a real one (the summary's fields are the same).
    let mut records = run_json(&env, &["prune", "--older-than", "0s", "--dry-run"], 0);
    records.extend(run_json(&env, &["prune", "--older-than", "0s"], 0));
    check("prune", &documented_records(&doc, "prune"), &records);
}

#[test]
fn the_field_reference_matches_the_inspect_records() {
    let doc = read("docs/json-output.md");
    let by_command = documented_records(&doc, "inspect");
    for record in ["attempt", "event", "workflow"] {
        let claimed: BTreeSet<String> = by_command[record]
            .keys()
            .filter(|f| *f != "type")
            .cloned()
            .collect();
        assert_eq!(
            reference_fields(&doc, record),
            claimed,
            "the `{record}` field reference and the `inspect` table disagree"
        );
    }
}

#[test]
fn the_markdown_parsers_read_what_they_should() {
    let f = fields("`type`, `remedy` (`what`, `command`), `exitCode`");
    assert_eq!(
        f.keys().cloned().collect::<Vec<_>>(),
        ["exitCode", "remedy", "type"]
    );
    assert_eq!(
        f["remedy"].iter().cloned().collect::<Vec<_>>(),
        ["command", "what"]
    );
    let text = "# a\n## b\nx\n### c\ny\n## d\nz\n";
    assert_eq!(section(text, "## b"), ["x", "### c", "y"]);
    assert_eq!(
        backticked("`0` and `OK` not this"),
        ["0".to_owned(), "OK".to_owned()]
    );
}

// ---------------------------------------------------------------------------------------------
// Exit codes
// ---------------------------------------------------------------------------------------------

/// `pub const NAME: u8 = N;` lines of `src/exit.rs`.
fn exit_constants() -> BTreeMap<String, u8> {
    read("src/exit.rs")
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub const ")?;
            let (name, rest) = rest.split_once(": u8 = ")?;
            let value = rest.strip_suffix(';')?.trim().parse().ok()?;
            Some((name.to_owned(), value))
        })
        .collect()
}

/// The first table of `docs/exit-codes.md`: `| code | \`CONSTANT\` | meaning |`.
fn documented_exit_codes() -> BTreeMap<String, u8> {
    let doc = read("docs/exit-codes.md");
    let lines: Vec<&str> = doc.lines().collect();
    table_rows(&lines)
        .into_iter()
        .map(|row| {
            let code: u8 = row[0]
                .parse()
                .unwrap_or_else(|e| panic!("bad code `{}`: {e}", row[0]));
            let name = backticked(&row[1])
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("no constant in `{}`", row[1]));
            (name, code)
        })
        .collect()
}

#[test]
fn the_exit_codes_doc_lists_exactly_the_constants_of_src_exit_rs() {
    use a2a_recover::exit;
    let source = exit_constants();
    // The parser reads the real values (it would miss a constant written another way).
    let compiled = BTreeMap::from(
        [
            ("OK", exit::OK),
            ("FAILURE", exit::FAILURE),
            ("USAGE", exit::USAGE),
            ("WORK_REMAINS", exit::WORK_REMAINS),
            ("NEEDS_HUMAN", exit::NEEDS_HUMAN),
            ("PANIC", exit::PANIC),
            ("SIGINT", exit::SIGINT),
            ("SIGTERM", exit::SIGTERM),
        ]
        .map(|(n, v)| (n.to_owned(), v)),
    );
    for (name, value) in &compiled {
        assert_eq!(
            source.get(name),
            Some(value),
            "src/exit.rs as parsed vs as compiled: `{name}`"
        );
    }
    assert_eq!(
        documented_exit_codes(),
        source,
        "docs/exit-codes.md vs src/exit.rs"
    );
}

/// No page says a flag the binary has "is not supported yet": every `--flag` named on such a
/// line is absent from the CLI reference (generated from the binary's own definitions).
#[test]
fn no_doc_calls_a_flag_the_binary_has_unsupported() {
    let reference = read("docs/cli-reference.md");
    let mut pages: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|p| {
            std::path::Path::new(p)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
                && p != "docs/cli-reference.md"
        })
        .collect();
    pages.push("README.md".to_owned());
    for page in pages {
        for line in read(&page)
            .lines()
            .filter(|l| l.contains("not supported yet"))
        {
            for flag in line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("--") && w.len() > 2)
            {
                assert!(
                    !reference.contains(&format!("`{flag}")),
                    "{page} says `{flag}` is not supported yet, but the binary has it:\n{line}"
                );
            }
        }
    }
}

/// The docs stand alone: no page a user reads cites a file that is not in the repository (the
/// product's design notes live outside it), and every relative link points to a file that
/// exists.
#[test]
fn the_docs_cite_nothing_outside_the_repository() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut pages = vec!["README.md".to_owned(), "CHANGELOG.md".to_owned()];
    for entry in std::fs::read_dir(format!("{root}/docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if std::path::Path::new(&name)
            .extension()
            .is_some_and(|e| e == "md")
        {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut problems = Vec::new();
    for page in &pages {
        let text = read(page);
        for outside in ["DESIGN.md", "a2a-spec.md", "STYLE.md", "../shared"] {
            if text.contains(outside) {
                problems.push(format!("{page} cites `{outside}`"));
            }
        }
        let dir = std::path::Path::new(root).join(page);
        let dir = dir.parent().unwrap();
        for link in text.split("](").skip(1) {
            let target = link.split([')', '#', ' ']).next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                problems.push(format!("{page} links to `{target}`, which does not exist"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
