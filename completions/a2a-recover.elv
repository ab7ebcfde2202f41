
use builtin;
use str;

set edit:completion:arg-completer[a2a-recover] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'a2a-recover'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'a2a-recover'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand delegate 'Delegates a step to an agent: the intent is journaled first, then sent'
            cand reconcile 'Runs one recovery pass over every unfinished attempt'
            cand follow 'Follows a step''s task stream, journaling every event'
            cand reply 'Answers the pending question of an INPUT_REQUIRED step on the same task'
            cand compensate 'Undoes a workflow''s effects in reverse order and verifies them gone'
            cand resolve 'Records an operator''s decision on a step that needs a human'
            cand inspect 'Shows the journal as a table (or JSON Lines)'
            cand prune 'Deletes status refreshes older than an age, keeping every state change and decision'
            cand status 'Shows the journal in use, its lock, steps by state and what needs a human'
            cand journal 'Creates the journal (`journal init`); passes never create one'
            cand agents 'Manages the registry of agents used by --skill and re-delegation'
            cand scripted-agent 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests'
            cand demo 'Runs the worked example end to end with a real crash, and narrates each recovery'
            cand completions 'Prints a shell completion script'
            cand man 'Prints the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;delegate'= {
            cand --agent 'The agent''s base URL or Agent Card URL'
            cand --skill 'Picks the first registered agent advertising this skill (`agents add`)'
            cand --token-env 'The environment variable holding the agent''s bearer token or API key (placed as its card asks; only its name is journaled)'
            cand --token-cmd 'A command printing the agent''s bearer token or API key on stdout, run without a shell when one is needed (the command is journaled, never what it prints)'
            cand --metadata 'JSON object sent as the message''s `metadata`'
            cand --max-attempts 'Attempt budget for this step, across all agents'
            cand --compensate 'Compensation: a message sent to the step''s agent'
            cand --compensate-cmd 'Compensation: a command run with `sh -c`'
            cand --verify-cmd 'Verification: a command (exit 0 = exists, 1 = absent, else unknown)'
            cand --verify-url 'Verification: a URL (2xx = exists, 404 = absent, else unknown)'
            cand --plan 'Delegates a whole workflow from a TOML plan file'
            cand --clock-skew 'How far the agent''s clock may be behind ours when searching by time'
            cand --command-timeout 'Timeout for compensation and verification commands'
            cand --binding 'Forces the agent''s binding (`jsonrpc` or `http-json`) instead of choosing from its card'
            cand --protocol 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card'
            cand --card-patience 'How long an Agent Card that cannot be read or reached is waited out (from the attempt''s first card failure) before the attempt needs a human'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --effect 'The step has a side effect that `compensate` must undo and verify'
            cand --follow 'Follows the task after sending, as `follow` does'
            cand --allow-cross-origin 'Sends credentials to an interface on another origin than the card''s'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;reconcile'= {
            cand --concurrency 'Attempts in flight at once, over all agents'
            cand --agent-concurrency 'Requests in flight at once to each agent (interface URL + credential), unless the registry sets the agent''s own'
            cand --agent-rate 'Requests per second to each agent, unless the registry sets the agent''s own [default: no limit]'
            cand --agent-failures 'Consecutive timeouts or connection failures after which an agent''s remaining attempts are skipped for this pass (exit 3)'
            cand --follow-for 'Reattaches to running tasks and follows them for up to this long'
            cand --deadline 'Ends the pass cleanly after this long (exit 3)'
            cand --clock-skew 'How far the agent''s clock may be behind ours when searching by time'
            cand --command-timeout 'Timeout for verification commands'
            cand --alert 'Which items needing a human make the pass exit 4: `all` (every pass), or `new` (only those no earlier `--alert new` pass reported; old ones exit 3): a cron job pages once'
            cand --realert 'With `--alert new`: reports an old item again once it was reported this long ago'
            cand --metrics-file 'Writes a Prometheus textfile (for node_exporter) here after the pass, atomically'
            cand --card-patience 'How long an Agent Card that cannot be read or reached is waited out (from the attempt''s first card failure) before the attempt needs a human'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --dry-run 'Prints the actions it would take and changes nothing, locally or remotely'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;follow'= {
            cand --max-reconnects 'Resubscriptions allowed without an event in between'
            cand --until 'Stops following after this long (exit 3 if still running)'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;reply'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;compensate'= {
            cand --command-timeout 'Timeout for compensation and verification commands (also the longest wait for a compensation task to finish before it is verified)'
            cand --clock-skew 'How far an agent''s clock may be behind ours when searching for a send by time'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --dry-run 'Prints the actions it would take and changes nothing'
            cand --force 'Allows compensating `default` as a whole (the workflow of every step delegated by a bare name, which are usually unrelated)'
            cand -y 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand --yes 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;resolve'= {
            cand --as 'The decision'
            cand --reason 'Why (journaled with the decision)'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --undo 'Takes back the step''s standing decision while nothing was sent for it (a retry''s new attempt is deleted, a resend goes back to UNCERTAIN, done/abandoned are cleared)'
            cand --force 'Allows `--as retry|resend` of a step that COMPLETED or whose effect is verified (it would run the work again)'
            cand -y 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand --yes 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;inspect'= {
            cand --state 'Only attempts in these states (case-insensitive; `-` and `_` alike)'
            cand --limit 'Most rows shown; 0 means no limit [default: 200 in tables, no limit in JSON]'
            cand --agent 'Only attempts sent to this agent (its base URL or card URL)'
            cand --since 'Only attempts changed within this long (`30m`, `1h30m`, `1d`) or since this RFC 3339 time (`2026-12-06T03:00:00Z`)'
            cand --until 'Only attempts whose last change is at least this old (`30m`) or no later than this RFC 3339 time'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --pending 'Only what needs a human, each with the command that answers it'
            cand --events 'Adds the event history of the named step'
            cand --unresolved 'Only steps the operator has not resolved (`resolve`)'
            cand --wide 'Every column: full task ids, the agent, and with --pending the command in a column'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;prune'= {
            cand --older-than 'Only events older than this: `30d`, `2w`, `12h` (units ms, s, m, h, d, w)'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --dry-run 'Counts what would be deleted and changes nothing'
            cand -y 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand --yes 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;status'= {
            cand --stale 'Also lists what is stale: an unfinished step not needing a human with no state change and no answer from its agent for longer than DURATION, or an agent work waits on that has been failing for longer; with `--check`, either exits 4'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --check 'Exits 4 when something needs a human (`inspect --pending` lists it), else 0: a probe for monitoring'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;journal'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand init 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
            cand copy 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;journal;init'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;journal;copy'= {
            cand --from 'The journal to copy: a SQLite file, or a postgres:// URL'
            cand --to 'Where to copy it: a new or empty SQLite file, or a postgres:// URL whose schema holds no journal rows'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;journal;help'= {
            cand init 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
            cand copy 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;journal;help;init'= {
        }
        &'a2a-recover;journal;help;copy'= {
        }
        &'a2a-recover;journal;help;help'= {
        }
        &'a2a-recover;agents'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand add 'Fetches, validates and stores an agent''s card (again = refresh)'
            cand list 'Lists registered agents in the order they are tried'
            cand remove 'Removes an agent from the registry'
            cand probe 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;agents;add'= {
            cand --token-env 'The environment variable holding its token or API key (only the name is stored)'
            cand --token-cmd 'A command printing its token or API key on stdout, run without a shell when one is needed (the command is stored, never what it prints)'
            cand --concurrency 'This agent''s own limit of requests in flight at once in a pass (instead of `reconcile --agent-concurrency`); kept by a refresh without it'
            cand --rate 'This agent''s own limit of requests per second in a pass (instead of `reconcile --agent-rate`); kept by a refresh without it'
            cand --binding 'Forces the binding (`jsonrpc` or `http-json`) instead of choosing from the card'
            cand --protocol 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --trust-dedup 'Trusts the agent to de-duplicate by messageId: when its tasks cannot be searched (A2A v0.3 has no tasks/list), a send whose outcome is unknown is resent with the same messageId instead of waiting for a human'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;agents;list'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;agents;remove'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;agents;probe'= {
            cand --token-env 'The environment variable holding its token or API key (default: the one it was registered with)'
            cand --token-cmd 'A command printing its token or API key on stdout, run without a shell (default: the one it was registered with)'
            cand --send-test 'Also sends TEXT twice with one messageId and a fresh contextId (this creates one or two tasks): measures de-duplication by messageId, client context ids and history retention'
            cand --binding 'Probes over this binding (`jsonrpc` or `http-json`) instead of the one the card would choose'
            cand --protocol 'Probes over this A2A protocol version (`1.0` or `0.3`) instead of the one the card would choose'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;agents;help'= {
            cand add 'Fetches, validates and stores an agent''s card (again = refresh)'
            cand list 'Lists registered agents in the order they are tried'
            cand remove 'Removes an agent from the registry'
            cand probe 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;agents;help;add'= {
        }
        &'a2a-recover;agents;help;list'= {
        }
        &'a2a-recover;agents;help;remove'= {
        }
        &'a2a-recover;agents;help;probe'= {
        }
        &'a2a-recover;agents;help;help'= {
        }
        &'a2a-recover;scripted-agent'= {
            cand --port 'Port to listen on (0 picks a free one)'
            cand --scenario 'Runs this scenario for every new task, whatever the message says'
            cand --skill 'A skill id on the card; repeat for more [default: echo]'
            cand --forget-after 'Forgets terminal tasks this long after they finish (GetTask then answers -32001)'
            cand --fail-rate 'Probability (0 to 1) that a message send answers HTTP 503 with Retry-After: 1'
            cand --fail-first 'The first N message sends answer HTTP 503, then --fail-rate applies'
            cand --fail-mode 'Whether a failing send is refused before processing or processed and then refused'
            cand --drop-stream-after 'Cuts every SSE stream after K events'
            cand --drop-mode 'How a stream is cut: a clean end of the body, or an aborted connection'
            cand --tick 'Duration of one `work` step'
            cand --name 'The card''s name'
            cand --seed 'Seed for --fail-rate, so a run can be repeated'
            cand --binding 'The A2A v1.0 binding served and offered on the card: JSON-RPC at `/`, or HTTP+JSON (`/message:send`, `/tasks/{id}`, …)'
            cand --tenant 'A tenant on the card''s interface (over HTTP+JSON, the first segment of every path)'
            cand --question-in 'Where the question of an interrupted task goes'
            cand --delay 'Answers every JSON-RPC request this long after it arrived (a slow agent)'
            cand --rate-limit 'Answers HTTP 429 with Retry-After: 1 once N requests were served in the last second'
            cand --protocol 'The A2A protocol version served: `1.0`, or `0.3` (a v0.3 card, v0.3 method names and payloads, no tasks/list)'
            cand --require-token 'Answers HTTP 401 to every A2A request without `Authorization: Bearer TOKEN` (the card stays public)'
            cand --api-key-header 'Publishes an apiKey security scheme naming this header on the card, and answers HTTP 401 to every A2A request without the key of `--api-key-env` in it'
            cand --api-key-query 'As `--api-key-header`, with the key in this query parameter'
            cand --api-key-cookie 'As `--api-key-header`, with the key in this cookie'
            cand --api-key-env 'The environment variable holding the API key expected (with `--api-key-header`, `--api-key-query` or `--api-key-cookie`)'
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand --dedup 'Returns the existing task for a resend with a known messageId (neither SDK does this)'
            cand --refuse-context-id 'Refuses client-chosen context ids for new tasks (-32602 naming message.contextId)'
            cand --no-list-tasks 'Answers ListTasks with -32601, like an agent without it'
            cand --list-ignores-filters 'ListTasks ignores its contextId and statusTimestampAfter filters'
            cand --replace-context-id 'Files every new task under a contextId of its own, ignoring the client''s'
            cand --no-streaming 'Declares no streaming on the card and refuses streaming methods (-32004)'
            cand --naive-timestamps 'Sends status timestamps without a UTC offset, as some frameworks do'
            cand --history-only 'Sends tasks without artifacts; their text is in the history instead'
            cand --reply-new-task 'Answers a reply to a question with a new task in the same context'
            cand --block-send 'Ignores returnImmediately: SendMessage answers once the task stops'
            cand --black-hole 'Never answers a JSON-RPC request (a hung agent); the card is still served'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;demo'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;completions'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;man'= {
            cand --journal 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]'
            cand -o 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --format 'Output format: tables and sentences for people, or JSON Lines for programs'
            cand --color 'When to use colors (`NO_COLOR` also turns them off in `auto`)'
            cand --timeout 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal'
            cand --max-response-size 'Largest response body or single stream event accepted, in bytes (enforced while reading)'
            cand --max-artifact-size 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-task-size 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated'
            cand --max-look-size 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent'
            cand --wait 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all'
            cand -q 'Print less (errors and data only)'
            cand --quiet 'Print less (errors and data only)'
            cand -v 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand --verbose 'Print more; repeat for more detail (-vvv traces HTTP)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'a2a-recover;help'= {
            cand delegate 'Delegates a step to an agent: the intent is journaled first, then sent'
            cand reconcile 'Runs one recovery pass over every unfinished attempt'
            cand follow 'Follows a step''s task stream, journaling every event'
            cand reply 'Answers the pending question of an INPUT_REQUIRED step on the same task'
            cand compensate 'Undoes a workflow''s effects in reverse order and verifies them gone'
            cand resolve 'Records an operator''s decision on a step that needs a human'
            cand inspect 'Shows the journal as a table (or JSON Lines)'
            cand prune 'Deletes status refreshes older than an age, keeping every state change and decision'
            cand status 'Shows the journal in use, its lock, steps by state and what needs a human'
            cand journal 'Creates the journal (`journal init`); passes never create one'
            cand agents 'Manages the registry of agents used by --skill and re-delegation'
            cand scripted-agent 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests'
            cand demo 'Runs the worked example end to end with a real crash, and narrates each recovery'
            cand completions 'Prints a shell completion script'
            cand man 'Prints the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'a2a-recover;help;delegate'= {
        }
        &'a2a-recover;help;reconcile'= {
        }
        &'a2a-recover;help;follow'= {
        }
        &'a2a-recover;help;reply'= {
        }
        &'a2a-recover;help;compensate'= {
        }
        &'a2a-recover;help;resolve'= {
        }
        &'a2a-recover;help;inspect'= {
        }
        &'a2a-recover;help;prune'= {
        }
        &'a2a-recover;help;status'= {
        }
        &'a2a-recover;help;journal'= {
            cand init 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
            cand copy 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
        }
        &'a2a-recover;help;journal;init'= {
        }
        &'a2a-recover;help;journal;copy'= {
        }
        &'a2a-recover;help;agents'= {
            cand add 'Fetches, validates and stores an agent''s card (again = refresh)'
            cand list 'Lists registered agents in the order they are tried'
            cand remove 'Removes an agent from the registry'
            cand probe 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
        }
        &'a2a-recover;help;agents;add'= {
        }
        &'a2a-recover;help;agents;list'= {
        }
        &'a2a-recover;help;agents;remove'= {
        }
        &'a2a-recover;help;agents;probe'= {
        }
        &'a2a-recover;help;scripted-agent'= {
        }
        &'a2a-recover;help;demo'= {
        }
        &'a2a-recover;help;completions'= {
        }
        &'a2a-recover;help;man'= {
        }
        &'a2a-recover;help;help'= {
        }
    ]
    $completions[$command]
}
