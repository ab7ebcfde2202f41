# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_a2a_recover_global_optspecs
    string join \n journal= o/format= color= timeout= max-response-size= max-artifact-size= max-task-size= max-look-size= max-card-size= wait= q/quiet v/verbose h/help V/version
end

function __fish_a2a_recover_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_a2a_recover_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_a2a_recover_using_subcommand
    set -l cmd (__fish_a2a_recover_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -s V -l version -d 'Print version'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "delegate" -d 'Delegates a step to an agent: the intent is journaled first, then sent'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "reconcile" -d 'Runs one recovery pass over every unfinished attempt'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "follow" -d 'Follows a step\'s task stream, journaling every event'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "reply" -d 'Answers the pending question of an INPUT_REQUIRED step on the same task'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "compensate" -d 'Undoes a workflow\'s effects in reverse order and verifies them gone'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "resolve" -d 'Records an operator\'s decision on a step that needs a human'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "inspect" -d 'Shows the journal as a table (or JSON Lines)'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "prune" -d 'Deletes status refreshes older than an age, keeping every state change and decision'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "status" -d 'Shows the journal in use, its lock, steps by state and what needs a human'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "journal" -d 'Creates the journal (`journal init`); passes never create one'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "listen" -d 'Receives push notifications from agents into the journal'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "agents" -d 'Manages the registry of agents used by --skill and re-delegation'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "scripted-agent" -d 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "demo" -d 'Runs the worked example end to end with a real crash, and narrates each recovery'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "completions" -d 'Prints a shell completion script'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "man" -d 'Prints the man page (roff)'
complete -c a2a-recover -n "__fish_a2a_recover_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l agent -d 'The agent\'s base URL or Agent Card URL' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l skill -d 'Picks the first registered agent advertising this skill (`agents add`)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l token-env -d 'The environment variable holding the agent\'s bearer token or API key (placed as its card asks; only its name is journaled)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l token-cmd -d 'A command printing the agent\'s bearer token or API key on stdout, run without a shell when one is needed (the command is journaled, never what it prints)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l metadata -d 'JSON object sent as the message\'s `metadata`' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l data -d 'JSON object sent as one data part beside the text (structured input)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-attempts -d 'Attempt budget for this step, across all agents' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l compensate -d 'Compensation: a message sent to the step\'s agent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l compensate-cmd -d 'Compensation: a command run with `sh -c`' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l verify-cmd -d 'Verification: a command (exit 0 = exists, 1 = absent, else unknown)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l verify-url -d 'Verification: a URL (2xx = exists, 404 = absent, else unknown)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l plan -d 'Delegates a whole workflow from a TOML plan file' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l clock-skew -d 'How far the agent\'s clock may be behind ours when searching by time' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l command-timeout -d 'Timeout for compensation and verification commands' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l binding -d 'Forces the agent\'s binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from its card' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l protocol -d 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l card-patience -d 'How long an Agent Card that cannot be read or reached is waited out (from the attempt\'s first card failure) before the attempt needs a human' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l push -d 'Asks the agent to push each change of the task to URL (a running `listen`\'s public base; the agent posts to `URL/push/CONFIG_ID`). Default: the agent\'s registration, else `A2A_RECOVER_PUSH_URL`' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l effect -d 'The step has a side effect that `compensate` must undo and verify'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l follow -d 'Follows the task after sending, as `follow` does'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l allow-cross-origin -d 'Sends credentials to an interface on another origin than the card\'s'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -l no-push -d 'Asks the agent for no pushes, whatever the plan, the registry or the environment say'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand delegate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l concurrency -d 'Attempts in flight at once, over all agents' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l agent-concurrency -d 'Requests in flight at once to each agent (interface URL + credential), unless the registry sets the agent\'s own' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l agent-rate -d 'Requests per second to each agent, unless the registry sets the agent\'s own [default: no limit]' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l agent-failures -d 'Consecutive timeouts or connection failures after which an agent\'s remaining attempts are skipped for this pass (exit 3)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l follow-for -d 'Reattaches to running tasks and follows them for up to this long' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l deadline -d 'Ends the pass cleanly after this long (exit 3)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l clock-skew -d 'How far the agent\'s clock may be behind ours when searching by time' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l command-timeout -d 'Timeout for verification commands' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l alert -d 'Which items needing a human make the pass exit 4: `all` (every pass), or `new` (only those no earlier `--alert new` pass reported; old ones exit 3): a cron job pages once' -r -f -a "all\t'Every item, on every pass'
new\t'Only items no earlier `--alert new` pass reported'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l realert -d 'With `--alert new`: reports an old item again once it was reported this long ago' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l metrics-file -d 'Writes a Prometheus textfile (for node_exporter) here after the pass, atomically' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l card-patience -d 'How long an Agent Card that cannot be read or reached is waited out (from the attempt\'s first card failure) before the attempt needs a human' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -l dry-run -d 'Prints the actions it would take and changes nothing, locally or remotely'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reconcile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l workflow -d 'Follows every unfinished step of WORKFLOW at once, each state change on a line with its time (a bare STEP stays a step of `default`)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-reconnects -d 'Resubscriptions allowed without an event in between' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l until -d 'Stops following after this long (exit 3 if still running)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand follow" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l data -d 'Sends the answer as one data part: a JSON object (`{"rooms": "one"}`)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l data-file -d 'Sends the answer as one data part read from a file of JSON (`-` reads standard input)' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand reply" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l command-timeout -d 'Timeout for compensation and verification commands (also the longest wait for a compensation task to finish before it is verified)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l clock-skew -d 'How far an agent\'s clock may be behind ours when searching for a send by time' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l dry-run -d 'Prints the actions it would take and changes nothing'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -l force -d 'Allows compensating `default` as a whole (the workflow of every step delegated by a bare name, which are usually unrelated)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -s y -l yes -d 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand compensate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l as -d 'The decision' -r -f -a "done\t'Accept the step as finished'
abandoned\t'Give the step up; it counts as failed for compensation'
retry\t'A new attempt with fresh ids, budget permitting'
resend\t'For UNCERTAIN: send again with the same messageId, accepting the risk'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l reason -d 'Why (journaled with the decision)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l undo -d 'Takes back the step\'s standing decision while nothing was sent for it (a retry\'s new attempt is deleted, a resend goes back to UNCERTAIN, done/abandoned are cleared)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -l force -d 'Allows `--as retry|resend` of a step that COMPLETED or whose effect is verified (it would run the work again)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -s y -l yes -d 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand resolve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l state -d 'Only attempts in these states (case-insensitive; `-` and `_` alike)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l limit -d 'Most rows shown; 0 means no limit [default: 200 in tables, no limit in JSON]' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l agent -d 'Only attempts sent to this agent (its base URL or card URL)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l since -d 'Only attempts changed within this long (`30m`, `1h30m`, `1d`) or since this RFC 3339 time (`2026-12-06T03:00:00Z`)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l until -d 'Only attempts whose last change is at least this old (`30m`) or no later than this RFC 3339 time' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l artifact -d 'Prints the value of the step\'s artifact NAME (its name, else its id) as `{artifact:NAME}` gives it: raw when stdout is not a terminal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l interval -d 'How often `--watch` reads the journal again (SQLite and PostgreSQL alike)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l pending -d 'Only what needs a human, each with the command that answers it'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l events -d 'Adds the event history of the named step'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l unresolved -d 'Only steps the operator has not resolved (`resolve`)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l wide -d 'Every column: full task ids, the agent, and with --pending the command in a column'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -l watch -d 'Keeps watching: redraws the view on a terminal; on a pipe, or with `--format json`, prints the view once, then each attempt that changes. Ctrl-C ends it (exit 130)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l older-than -d 'Only events older than this: `30d`, `2w`, `12h` (units ms, s, m, h, d, w)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -l dry-run -d 'Counts what would be deleted and changes nothing'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -s y -l yes -d 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l stale -d 'Also lists what is stale: an unfinished step not needing a human with no state change and no answer from its agent for longer than DURATION, or an agent work waits on that has been failing for longer; with `--check`, either exits 4' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -l check -d 'Exits 4 when something needs a human (`inspect --pending` lists it), else 0: a probe for monitoring'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -f -a "init" -d 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -f -a "copy" -d 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and not __fish_seen_subcommand_from init copy help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l from -d 'The journal to copy: a SQLite file, or a postgres:// URL' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l to -d 'Where to copy it: a new or empty SQLite file, or a postgres:// URL whose schema holds no journal rows' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from copy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from help" -f -a "init" -d 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from help" -f -a "copy" -d 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand journal; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l bind -d 'The address pushes are received on' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l metrics-bind -d 'The address `/metrics` and `/healthz` are served on (plain HTTP)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l tls-cert -d 'The TLS certificate chain (PEM) pushes are received with; needs --tls-key' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l tls-key -d 'The TLS private key (PEM); needs --tls-cert' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l reconcile-every -d 'Runs a reconcile pass this often (the backstop for lost pushes); `0` turns it off' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-push-size -d 'The largest push body accepted, in bytes' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l agent-rate -d 'The most pushes accepted from one agent per second (more are answered 429)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand listen" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -f -a "add" -d 'Fetches, validates and stores an agent\'s card (again = refresh)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -f -a "list" -d 'Lists registered agents in the order they are tried'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -f -a "remove" -d 'Removes an agent from the registry'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -f -a "probe" -d 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and not __fish_seen_subcommand_from add list remove probe help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l token-env -d 'The environment variable holding its token or API key (only the name is stored)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l token-cmd -d 'A command printing its token or API key on stdout, run without a shell when one is needed (the command is stored, never what it prints)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l concurrency -d 'This agent\'s own limit of requests in flight at once in a pass (instead of `reconcile --agent-concurrency`); kept by a refresh without it' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l rate -d 'This agent\'s own limit of requests per second in a pass (instead of `reconcile --agent-rate`); kept by a refresh without it' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l binding -d 'Forces the binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from the card' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l protocol -d 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l push -d 'Asks the agent to push each change of its tasks to URL (a running `listen`\'s public base) when a step is delegated to it without `--push` or `--no-push`' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l trust-dedup -d 'Trusts the agent to de-duplicate by messageId: when its tasks cannot be searched (A2A v0.3 has no tasks/list), a send whose outcome is unknown is resent with the same messageId instead of waiting for a human'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -l trust-push -d 'Lets a push from this agent make a step terminal, or record its question, without reading the task back first'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l token-env -d 'The environment variable holding its token or API key (default: the one it was registered with)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l token-cmd -d 'A command printing its token or API key on stdout, run without a shell (default: the one it was registered with)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l send-test -d 'Also sends TEXT twice with one messageId and a fresh contextId (this creates one or two tasks): measures de-duplication by messageId, client context ids and history retention' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l binding -d 'Probes over this binding (`jsonrpc`, `http-json` or `grpc`) instead of the one the card would choose' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l protocol -d 'Probes over this A2A protocol version (`1.0` or `0.3`) instead of the one the card would choose' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from probe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from help" -f -a "add" -d 'Fetches, validates and stores an agent\'s card (again = refresh)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from help" -f -a "list" -d 'Lists registered agents in the order they are tried'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Removes an agent from the registry'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from help" -f -a "probe" -d 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand agents; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l port -d 'Port to listen on (0 picks a free one)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l scenario -d 'Runs this scenario for every new task, whatever the message says' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l skill -d 'A skill id on the card; repeat for more [default: echo]' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l forget-after -d 'Forgets terminal tasks this long after they finish (GetTask then answers -32001)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l fail-rate -d 'Probability (0 to 1) that a message send answers HTTP 503 with Retry-After: 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l fail-first -d 'The first N message sends answer HTTP 503, then --fail-rate applies' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l fail-mode -d 'Whether a failing send is refused before processing or processed and then refused' -r -f -a "before\t'Answers 503 without processing: nothing is created'
after\t'Processes the message (a task is created or continued), then answers 503'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l drop-stream-after -d 'Cuts every SSE stream after K events' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l drop-mode -d 'How a stream is cut: a clean end of the body, or an aborted connection' -r -f -a "eof\t'Ends the response body cleanly'
reset\t'Aborts the connection mid-body'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l tick -d 'Duration of one `work` step' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l push-fault -d 'Makes the pushes go wrong on purpose; repeat for more (implies --push)' -r -f -a "duplicate\t'Every push is posted twice'
reorder\t'Pushes are posted in swapped pairs: each after the one that follows it'
lose\t'The push that makes a task terminal or asks its question is never posted, nor any later push for that task'
forged-token\t'Pushes carry a token other than the config\'s'
other-task\t'Pushes name a task other than theirs'
oversized\t'Pushes carry a body over 1 MiB'
slow\t'Pushes send half their body, then the rest 3 s later (a slow client)'
delete-unsupported\t'Every delete of a push config is answered -32004 (`UnsupportedOperationError`)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l name -d 'The card\'s name' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l seed -d 'Seed for --fail-rate, so a run can be repeated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l binding -d 'The A2A v1.0 binding served and offered on the card: JSON-RPC at `/`, HTTP+JSON (`/message:send`, `/tasks/{id}`, …), or gRPC on the same port (offered as `127.0.0.1:PORT`)' -r -f -a "jsonrpc\t'A2A v1.0 JSON-RPC at `POST /`'
http-json\t'A2A v1.0 HTTP+JSON (REST) under `/`: the card offers only this interface'
grpc\t'A2A v1.0 gRPC (`lf.a2a.v1.A2AService`, HTTP/2 without TLS) on the same port: the card offers only this interface, as `127.0.0.1:PORT` without a scheme (as the SDKs\' cards do)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l tenant -d 'A tenant on the card\'s interface (over HTTP+JSON, the first segment of every path)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l question-in -d 'Where the question of an interrupted task goes' -r -f -a "status\t'In the status message (the spec\'s place)'
artifact\t'In an artifact named `question`; the status carries no message'
history\t'Only in the history, as the last agent message; the status carries no message'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l delay -d 'Answers every JSON-RPC request this long after it arrived (a slow agent)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l rate-limit -d 'Answers HTTP 429 with Retry-After: 1 once N requests were served in the last second' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l protocol -d 'The A2A protocol version served: `1.0`, or `0.3` (a v0.3 card, v0.3 method names and payloads, no tasks/list)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l require-token -d 'Answers HTTP 401 to every A2A request without `Authorization: Bearer TOKEN` (the card stays public)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l api-key-header -d 'Publishes an apiKey security scheme naming this header on the card, and answers HTTP 401 to every A2A request without the key of `--api-key-env` in it' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l api-key-query -d 'As `--api-key-header`, with the key in this query parameter' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l api-key-cookie -d 'As `--api-key-header`, with the key in this cookie' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l api-key-env -d 'The environment variable holding the API key expected (with `--api-key-header`, `--api-key-query` or `--api-key-cookie`)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l dedup -d 'Returns the existing task for a resend with a known messageId (neither SDK does this)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l refuse-context-id -d 'Refuses client-chosen context ids for new tasks (-32602 naming message.contextId)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l no-list-tasks -d 'Answers ListTasks with -32601, like an agent without it'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l list-ignores-filters -d 'ListTasks ignores its contextId and statusTimestampAfter filters'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l replace-context-id -d 'Files every new task under a contextId of its own, ignoring the client\'s'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l no-streaming -d 'Declares no streaming on the card and refuses streaming methods (-32004)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l push -d 'Declares push notifications on the card and pushes each change of a task to the push config its send carried (`http://` URLs)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l grpc -d 'Also serves gRPC (A2A v1.0) on the same port and offers it on the card after the --binding interface'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l naive-timestamps -d 'Sends status timestamps without a UTC offset, as some frameworks do'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l history-only -d 'Sends tasks without artifacts; their text is in the history instead'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l reply-new-task -d 'Answers a reply to a question with a new task in the same context'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l block-send -d 'Ignores returnImmediately: SendMessage answers once the task stops'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l structured-answers -d 'Takes only structured answers: asks `Agent requires input:` then `- rooms: QUESTION`, refuses a text reply (-32602) and accepts a data part `{"rooms": "…"}`'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -l black-hole -d 'Never answers a JSON-RPC request (a hung agent); the card is still served'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand scripted-agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l journal -d 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]' -r -F
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -s o -l format -d 'Output format: tables and sentences for people, or JSON Lines for programs' -r -f -a "human\t'Tables and sentences'
json\t'JSON Lines, one record per line (docs/json-output.md)'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l color -d 'When to use colors (`NO_COLOR` also turns them off in `auto`)' -r -f -a "auto\t'Colors on a terminal, unless `NO_COLOR` is set'
always\t'Always'
never\t'Never'"
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l timeout -d 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l max-response-size -d 'Largest response body or single stream event accepted, in bytes (enforced while reading)' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l max-artifact-size -d 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l max-task-size -d 'Largest all of a task\'s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l max-look-size -d 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l max-card-size -d 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -l wait -d 'How long a pass waits for a held lock (the journal\'s, or a workflow\'s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all' -r
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -s q -l quiet -d 'Print less (errors and data only)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -s v -l verbose -d 'Print more; repeat for more detail (-vvv traces HTTP)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "delegate" -d 'Delegates a step to an agent: the intent is journaled first, then sent'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "reconcile" -d 'Runs one recovery pass over every unfinished attempt'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "follow" -d 'Follows a step\'s task stream, journaling every event'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "reply" -d 'Answers the pending question of an INPUT_REQUIRED step on the same task'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "compensate" -d 'Undoes a workflow\'s effects in reverse order and verifies them gone'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "resolve" -d 'Records an operator\'s decision on a step that needs a human'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "inspect" -d 'Shows the journal as a table (or JSON Lines)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "prune" -d 'Deletes status refreshes older than an age, keeping every state change and decision'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "status" -d 'Shows the journal in use, its lock, steps by state and what needs a human'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "journal" -d 'Creates the journal (`journal init`); passes never create one'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "listen" -d 'Receives push notifications from agents into the journal'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "agents" -d 'Manages the registry of agents used by --skill and re-delegation'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "scripted-agent" -d 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "demo" -d 'Runs the worked example end to end with a real crash, and narrates each recovery'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "completions" -d 'Prints a shell completion script'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "man" -d 'Prints the man page (roff)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and not __fish_seen_subcommand_from delegate reconcile follow reply compensate resolve inspect prune status journal listen agents scripted-agent demo completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from journal" -f -a "init" -d 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from journal" -f -a "copy" -d 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from agents" -f -a "add" -d 'Fetches, validates and stores an agent\'s card (again = refresh)'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from agents" -f -a "list" -d 'Lists registered agents in the order they are tried'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from agents" -f -a "remove" -d 'Removes an agent from the registry'
complete -c a2a-recover -n "__fish_a2a_recover_using_subcommand help; and __fish_seen_subcommand_from agents" -f -a "probe" -d 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)'
