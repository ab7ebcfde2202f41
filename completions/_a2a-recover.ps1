
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'a2a-recover' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'a2a-recover'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'a2a-recover' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('delegate', 'delegate', [CompletionResultType]::ParameterValue, 'Delegates a step to an agent: the intent is journaled first, then sent')
            [CompletionResult]::new('reconcile', 'reconcile', [CompletionResultType]::ParameterValue, 'Runs one recovery pass over every unfinished attempt')
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Follows a step''s task stream, journaling every event')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Answers the pending question of an INPUT_REQUIRED step on the same task')
            [CompletionResult]::new('compensate', 'compensate', [CompletionResultType]::ParameterValue, 'Undoes a workflow''s effects in reverse order and verifies them gone')
            [CompletionResult]::new('resolve', 'resolve', [CompletionResultType]::ParameterValue, 'Records an operator''s decision on a step that needs a human')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Shows the journal as a table (or JSON Lines)')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Deletes status refreshes older than an age, keeping every state change and decision')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Shows the journal in use, its lock, steps by state and what needs a human')
            [CompletionResult]::new('journal', 'journal', [CompletionResultType]::ParameterValue, 'Creates the journal (`journal init`); passes never create one')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receives push notifications from agents into the journal')
            [CompletionResult]::new('agents', 'agents', [CompletionResultType]::ParameterValue, 'Manages the registry of agents used by --skill and re-delegation')
            [CompletionResult]::new('scripted-agent', 'scripted-agent', [CompletionResultType]::ParameterValue, 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Runs the worked example end to end with a real crash, and narrates each recovery')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Prints a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Prints the man page (roff)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;delegate' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent''s base URL or Agent Card URL')
            [CompletionResult]::new('--skill', '--skill', [CompletionResultType]::ParameterName, 'Picks the first registered agent advertising this skill (`agents add`)')
            [CompletionResult]::new('--token-env', '--token-env', [CompletionResultType]::ParameterName, 'The environment variable holding the agent''s bearer token or API key (placed as its card asks; only its name is journaled)')
            [CompletionResult]::new('--token-cmd', '--token-cmd', [CompletionResultType]::ParameterName, 'A command printing the agent''s bearer token or API key on stdout, run without a shell when one is needed (the command is journaled, never what it prints)')
            [CompletionResult]::new('--metadata', '--metadata', [CompletionResultType]::ParameterName, 'JSON object sent as the message''s `metadata`')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'JSON object sent as one data part beside the text (structured input)')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Attempt budget for this step, across all agents')
            [CompletionResult]::new('--compensate', '--compensate', [CompletionResultType]::ParameterName, 'Compensation: a message sent to the step''s agent')
            [CompletionResult]::new('--compensate-cmd', '--compensate-cmd', [CompletionResultType]::ParameterName, 'Compensation: a command run with `sh -c`')
            [CompletionResult]::new('--verify-cmd', '--verify-cmd', [CompletionResultType]::ParameterName, 'Verification: a command (exit 0 = exists, 1 = absent, else unknown)')
            [CompletionResult]::new('--verify-url', '--verify-url', [CompletionResultType]::ParameterName, 'Verification: a URL (2xx = exists, 404 = absent, else unknown)')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Delegates a whole workflow from a TOML plan file')
            [CompletionResult]::new('--clock-skew', '--clock-skew', [CompletionResultType]::ParameterName, 'How far the agent''s clock may be behind ours when searching by time')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Timeout for compensation and verification commands')
            [CompletionResult]::new('--binding', '--binding', [CompletionResultType]::ParameterName, 'Forces the agent''s binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from its card')
            [CompletionResult]::new('--protocol', '--protocol', [CompletionResultType]::ParameterName, 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card')
            [CompletionResult]::new('--card-patience', '--card-patience', [CompletionResultType]::ParameterName, 'How long an Agent Card that cannot be read or reached is waited out (from the attempt''s first card failure) before the attempt needs a human')
            [CompletionResult]::new('--push', '--push', [CompletionResultType]::ParameterName, 'Asks the agent to push each change of the task to URL (a running `listen`''s public base; the agent posts to `URL/push/CONFIG_ID`). Default: the agent''s registration, else `A2A_RECOVER_PUSH_URL`')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--effect', '--effect', [CompletionResultType]::ParameterName, 'The step has a side effect that `compensate` must undo and verify')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Follows the task after sending, as `follow` does')
            [CompletionResult]::new('--allow-cross-origin', '--allow-cross-origin', [CompletionResultType]::ParameterName, 'Sends credentials to an interface on another origin than the card''s')
            [CompletionResult]::new('--no-push', '--no-push', [CompletionResultType]::ParameterName, 'Asks the agent for no pushes, whatever the plan, the registry or the environment say')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;reconcile' {
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Attempts in flight at once, over all agents')
            [CompletionResult]::new('--agent-concurrency', '--agent-concurrency', [CompletionResultType]::ParameterName, 'Requests in flight at once to each agent (interface URL + credential), unless the registry sets the agent''s own')
            [CompletionResult]::new('--agent-rate', '--agent-rate', [CompletionResultType]::ParameterName, 'Requests per second to each agent, unless the registry sets the agent''s own [default: no limit]')
            [CompletionResult]::new('--agent-failures', '--agent-failures', [CompletionResultType]::ParameterName, 'Consecutive timeouts or connection failures after which an agent''s remaining attempts are skipped for this pass (exit 3)')
            [CompletionResult]::new('--follow-for', '--follow-for', [CompletionResultType]::ParameterName, 'Reattaches to running tasks and follows them for up to this long')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'Ends the pass cleanly after this long (exit 3)')
            [CompletionResult]::new('--clock-skew', '--clock-skew', [CompletionResultType]::ParameterName, 'How far the agent''s clock may be behind ours when searching by time')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Timeout for verification commands')
            [CompletionResult]::new('--alert', '--alert', [CompletionResultType]::ParameterName, 'Which items needing a human make the pass exit 4: `all` (every pass), or `new` (only those no earlier `--alert new` pass reported; old ones exit 3): a cron job pages once')
            [CompletionResult]::new('--realert', '--realert', [CompletionResultType]::ParameterName, 'With `--alert new`: reports an old item again once it was reported this long ago')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Writes a Prometheus textfile (for node_exporter) here after the pass, atomically')
            [CompletionResult]::new('--card-patience', '--card-patience', [CompletionResultType]::ParameterName, 'How long an Agent Card that cannot be read or reached is waited out (from the attempt''s first card failure) before the attempt needs a human')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Prints the actions it would take and changes nothing, locally or remotely')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;follow' {
            [CompletionResult]::new('--workflow', '--workflow', [CompletionResultType]::ParameterName, 'Follows every unfinished step of WORKFLOW at once, each state change on a line with its time (a bare STEP stays a step of `default`)')
            [CompletionResult]::new('--max-reconnects', '--max-reconnects', [CompletionResultType]::ParameterName, 'Resubscriptions allowed without an event in between')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Stops following after this long (exit 3 if still running)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;reply' {
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'Sends the answer as one data part: a JSON object (`{"rooms": "one"}`)')
            [CompletionResult]::new('--data-file', '--data-file', [CompletionResultType]::ParameterName, 'Sends the answer as one data part read from a file of JSON (`-` reads standard input)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;compensate' {
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Timeout for compensation and verification commands (also the longest wait for a compensation task to finish before it is verified)')
            [CompletionResult]::new('--clock-skew', '--clock-skew', [CompletionResultType]::ParameterName, 'How far an agent''s clock may be behind ours when searching for a send by time')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Prints the actions it would take and changes nothing')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Allows compensating `default` as a whole (the workflow of every step delegated by a bare name, which are usually unrelated)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;resolve' {
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The decision')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why (journaled with the decision)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--undo', '--undo', [CompletionResultType]::ParameterName, 'Takes back the step''s standing decision while nothing was sent for it (a retry''s new attempt is deleted, a resend goes back to UNCERTAIN, done/abandoned are cleared)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Allows `--as retry|resend` of a step that COMPLETED or whose effect is verified (it would run the work again)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;inspect' {
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Only attempts in these states (case-insensitive; `-` and `_` alike)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Most rows shown; 0 means no limit [default: 200 in tables, no limit in JSON]')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only attempts sent to this agent (its base URL or card URL)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only attempts changed within this long (`30m`, `1h30m`, `1d`) or since this RFC 3339 time (`2026-12-06T03:00:00Z`)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only attempts whose last change is at least this old (`30m`) or no later than this RFC 3339 time')
            [CompletionResult]::new('--artifact', '--artifact', [CompletionResultType]::ParameterName, 'Prints the value of the step''s artifact NAME (its name, else its id) as `{artifact:NAME}` gives it: raw when stdout is not a terminal')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often `--watch` reads the journal again (SQLite and PostgreSQL alike)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--pending', '--pending', [CompletionResultType]::ParameterName, 'Only what needs a human, each with the command that answers it')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Adds the event history of the named step')
            [CompletionResult]::new('--unresolved', '--unresolved', [CompletionResultType]::ParameterName, 'Only steps the operator has not resolved (`resolve`)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Every column: full task ids, the agent, and with --pending the command in a column')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keeps watching: redraws the view on a terminal; on a pipe, or with `--format json`, prints the view once, then each attempt that changes. Ctrl-C ends it (exit 130)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;prune' {
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Only events older than this: `30d`, `2w`, `12h` (units ms, s, m, h, d, w)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Counts what would be deleted and changes nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answers yes to the question asked on a terminal (without a terminal nothing is asked)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;status' {
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'Also lists what is stale: an unfinished step not needing a human with no state change and no answer from its agent for longer than DURATION, or an agent work waits on that has been failing for longer; with `--check`, either exits 4')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Exits 4 when something needs a human (`inspect --pending` lists it), else 0: a probe for monitoring')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;journal' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;journal;init' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;journal;copy' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The journal to copy: a SQLite file, or a postgres:// URL')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Where to copy it: a new or empty SQLite file, or a postgres:// URL whose schema holds no journal rows')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;journal;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;journal;help;init' {
            break
        }
        'a2a-recover;journal;help;copy' {
            break
        }
        'a2a-recover;journal;help;help' {
            break
        }
        'a2a-recover;listen' {
            [CompletionResult]::new('--bind', '--bind', [CompletionResultType]::ParameterName, 'The address pushes are received on')
            [CompletionResult]::new('--metrics-bind', '--metrics-bind', [CompletionResultType]::ParameterName, 'The address `/metrics` and `/healthz` are served on (plain HTTP)')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'The TLS certificate chain (PEM) pushes are received with; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The TLS private key (PEM); needs --tls-cert')
            [CompletionResult]::new('--reconcile-every', '--reconcile-every', [CompletionResultType]::ParameterName, 'Runs a reconcile pass this often (the backstop for lost pushes); `0` turns it off')
            [CompletionResult]::new('--max-push-size', '--max-push-size', [CompletionResultType]::ParameterName, 'The largest push body accepted, in bytes')
            [CompletionResult]::new('--agent-rate', '--agent-rate', [CompletionResultType]::ParameterName, 'The most pushes accepted from one agent per second (more are answered 429)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;agents' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Fetches, validates and stores an agent''s card (again = refresh)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Lists registered agents in the order they are tried')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Removes an agent from the registry')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;agents;add' {
            [CompletionResult]::new('--token-env', '--token-env', [CompletionResultType]::ParameterName, 'The environment variable holding its token or API key (only the name is stored)')
            [CompletionResult]::new('--token-cmd', '--token-cmd', [CompletionResultType]::ParameterName, 'A command printing its token or API key on stdout, run without a shell when one is needed (the command is stored, never what it prints)')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'This agent''s own limit of requests in flight at once in a pass (instead of `reconcile --agent-concurrency`); kept by a refresh without it')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'This agent''s own limit of requests per second in a pass (instead of `reconcile --agent-rate`); kept by a refresh without it')
            [CompletionResult]::new('--binding', '--binding', [CompletionResultType]::ParameterName, 'Forces the binding (`jsonrpc`, `http-json` or `grpc`) instead of choosing from the card')
            [CompletionResult]::new('--protocol', '--protocol', [CompletionResultType]::ParameterName, 'Forces the A2A protocol version (`1.0` or `0.3`) instead of choosing from the card')
            [CompletionResult]::new('--push', '--push', [CompletionResultType]::ParameterName, 'Asks the agent to push each change of its tasks to URL (a running `listen`''s public base) when a step is delegated to it without `--push` or `--no-push`')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--trust-dedup', '--trust-dedup', [CompletionResultType]::ParameterName, 'Trusts the agent to de-duplicate by messageId: when its tasks cannot be searched (A2A v0.3 has no tasks/list), a send whose outcome is unknown is resent with the same messageId instead of waiting for a human')
            [CompletionResult]::new('--trust-push', '--trust-push', [CompletionResultType]::ParameterName, 'Lets a push from this agent make a step terminal, or record its question, without reading the task back first')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;agents;list' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;agents;remove' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;agents;probe' {
            [CompletionResult]::new('--token-env', '--token-env', [CompletionResultType]::ParameterName, 'The environment variable holding its token or API key (default: the one it was registered with)')
            [CompletionResult]::new('--token-cmd', '--token-cmd', [CompletionResultType]::ParameterName, 'A command printing its token or API key on stdout, run without a shell (default: the one it was registered with)')
            [CompletionResult]::new('--send-test', '--send-test', [CompletionResultType]::ParameterName, 'Also sends TEXT twice with one messageId and a fresh contextId (this creates one or two tasks): measures de-duplication by messageId, client context ids and history retention')
            [CompletionResult]::new('--binding', '--binding', [CompletionResultType]::ParameterName, 'Probes over this binding (`jsonrpc`, `http-json` or `grpc`) instead of the one the card would choose')
            [CompletionResult]::new('--protocol', '--protocol', [CompletionResultType]::ParameterName, 'Probes over this A2A protocol version (`1.0` or `0.3`) instead of the one the card would choose')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;agents;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Fetches, validates and stores an agent''s card (again = refresh)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Lists registered agents in the order they are tried')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Removes an agent from the registry')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;agents;help;add' {
            break
        }
        'a2a-recover;agents;help;list' {
            break
        }
        'a2a-recover;agents;help;remove' {
            break
        }
        'a2a-recover;agents;help;probe' {
            break
        }
        'a2a-recover;agents;help;help' {
            break
        }
        'a2a-recover;scripted-agent' {
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to listen on (0 picks a free one)')
            [CompletionResult]::new('--scenario', '--scenario', [CompletionResultType]::ParameterName, 'Runs this scenario for every new task, whatever the message says')
            [CompletionResult]::new('--skill', '--skill', [CompletionResultType]::ParameterName, 'A skill id on the card; repeat for more [default: echo]')
            [CompletionResult]::new('--forget-after', '--forget-after', [CompletionResultType]::ParameterName, 'Forgets terminal tasks this long after they finish (GetTask then answers -32001)')
            [CompletionResult]::new('--fail-rate', '--fail-rate', [CompletionResultType]::ParameterName, 'Probability (0 to 1) that a message send answers HTTP 503 with Retry-After: 1')
            [CompletionResult]::new('--fail-first', '--fail-first', [CompletionResultType]::ParameterName, 'The first N message sends answer HTTP 503, then --fail-rate applies')
            [CompletionResult]::new('--fail-mode', '--fail-mode', [CompletionResultType]::ParameterName, 'Whether a failing send is refused before processing or processed and then refused')
            [CompletionResult]::new('--drop-stream-after', '--drop-stream-after', [CompletionResultType]::ParameterName, 'Cuts every SSE stream after K events')
            [CompletionResult]::new('--drop-mode', '--drop-mode', [CompletionResultType]::ParameterName, 'How a stream is cut: a clean end of the body, or an aborted connection')
            [CompletionResult]::new('--tick', '--tick', [CompletionResultType]::ParameterName, 'Duration of one `work` step')
            [CompletionResult]::new('--push-fault', '--push-fault', [CompletionResultType]::ParameterName, 'Makes the pushes go wrong on purpose; repeat for more (implies --push)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The card''s name')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for --fail-rate, so a run can be repeated')
            [CompletionResult]::new('--binding', '--binding', [CompletionResultType]::ParameterName, 'The A2A v1.0 binding served and offered on the card: JSON-RPC at `/`, HTTP+JSON (`/message:send`, `/tasks/{id}`, …), or gRPC on the same port (offered as `127.0.0.1:PORT`)')
            [CompletionResult]::new('--tenant', '--tenant', [CompletionResultType]::ParameterName, 'A tenant on the card''s interface (over HTTP+JSON, the first segment of every path)')
            [CompletionResult]::new('--question-in', '--question-in', [CompletionResultType]::ParameterName, 'Where the question of an interrupted task goes')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Answers every JSON-RPC request this long after it arrived (a slow agent)')
            [CompletionResult]::new('--rate-limit', '--rate-limit', [CompletionResultType]::ParameterName, 'Answers HTTP 429 with Retry-After: 1 once N requests were served in the last second')
            [CompletionResult]::new('--protocol', '--protocol', [CompletionResultType]::ParameterName, 'The A2A protocol version served: `1.0`, or `0.3` (a v0.3 card, v0.3 method names and payloads, no tasks/list)')
            [CompletionResult]::new('--require-token', '--require-token', [CompletionResultType]::ParameterName, 'Answers HTTP 401 to every A2A request without `Authorization: Bearer TOKEN` (the card stays public)')
            [CompletionResult]::new('--api-key-header', '--api-key-header', [CompletionResultType]::ParameterName, 'Publishes an apiKey security scheme naming this header on the card, and answers HTTP 401 to every A2A request without the key of `--api-key-env` in it')
            [CompletionResult]::new('--api-key-query', '--api-key-query', [CompletionResultType]::ParameterName, 'As `--api-key-header`, with the key in this query parameter')
            [CompletionResult]::new('--api-key-cookie', '--api-key-cookie', [CompletionResultType]::ParameterName, 'As `--api-key-header`, with the key in this cookie')
            [CompletionResult]::new('--api-key-env', '--api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key expected (with `--api-key-header`, `--api-key-query` or `--api-key-cookie`)')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('--dedup', '--dedup', [CompletionResultType]::ParameterName, 'Returns the existing task for a resend with a known messageId (neither SDK does this)')
            [CompletionResult]::new('--refuse-context-id', '--refuse-context-id', [CompletionResultType]::ParameterName, 'Refuses client-chosen context ids for new tasks (-32602 naming message.contextId)')
            [CompletionResult]::new('--no-list-tasks', '--no-list-tasks', [CompletionResultType]::ParameterName, 'Answers ListTasks with -32601, like an agent without it')
            [CompletionResult]::new('--list-ignores-filters', '--list-ignores-filters', [CompletionResultType]::ParameterName, 'ListTasks ignores its contextId and statusTimestampAfter filters')
            [CompletionResult]::new('--replace-context-id', '--replace-context-id', [CompletionResultType]::ParameterName, 'Files every new task under a contextId of its own, ignoring the client''s')
            [CompletionResult]::new('--no-streaming', '--no-streaming', [CompletionResultType]::ParameterName, 'Declares no streaming on the card and refuses streaming methods (-32004)')
            [CompletionResult]::new('--push', '--push', [CompletionResultType]::ParameterName, 'Declares push notifications on the card and pushes each change of a task to the push config its send carried (`http://` URLs)')
            [CompletionResult]::new('--grpc', '--grpc', [CompletionResultType]::ParameterName, 'Also serves gRPC (A2A v1.0) on the same port and offers it on the card after the --binding interface')
            [CompletionResult]::new('--naive-timestamps', '--naive-timestamps', [CompletionResultType]::ParameterName, 'Sends status timestamps without a UTC offset, as some frameworks do')
            [CompletionResult]::new('--history-only', '--history-only', [CompletionResultType]::ParameterName, 'Sends tasks without artifacts; their text is in the history instead')
            [CompletionResult]::new('--reply-new-task', '--reply-new-task', [CompletionResultType]::ParameterName, 'Answers a reply to a question with a new task in the same context')
            [CompletionResult]::new('--block-send', '--block-send', [CompletionResultType]::ParameterName, 'Ignores returnImmediately: SendMessage answers once the task stops')
            [CompletionResult]::new('--structured-answers', '--structured-answers', [CompletionResultType]::ParameterName, 'Takes only structured answers: asks `Agent requires input:` then `- rooms: QUESTION`, refuses a text reply (-32602) and accepts a data part `{"rooms": "…"}`')
            [CompletionResult]::new('--black-hole', '--black-hole', [CompletionResultType]::ParameterName, 'Never answers a JSON-RPC request (a hung agent); the card is still served')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;demo' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;completions' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;man' {
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME) [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and sentences for people, or JSON Lines for programs')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors (`NO_COLOR` also turns them off in `auto`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Per-request timeout; for streams the connect time, the longest wait for the next complete event (at least 60s) and the longest one event may take; also the longest wait for a busy journal')
            [CompletionResult]::new('--max-response-size', '--max-response-size', [CompletionResultType]::ParameterName, 'Largest response body or single stream event accepted, in bytes (enforced while reading)')
            [CompletionResult]::new('--max-artifact-size', '--max-artifact-size', [CompletionResultType]::ParameterName, 'Largest one artifact may grow to in the journal, its appended chunks, name, description and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-task-size', '--max-task-size', [CompletionResultType]::ParameterName, 'Largest all of a task''s artifacts may grow to in the journal together, in bytes; past it the attempt needs a human (exit 4) and is never re-delegated')
            [CompletionResult]::new('--max-look-size', '--max-look-size', [CompletionResultType]::ParameterName, 'Most bytes of `ListTasks` answers one look before a resend reads (every page of a search); past it the look cannot tell, and nothing is resent')
            [CompletionResult]::new('--max-card-size', '--max-card-size', [CompletionResultType]::ParameterName, 'Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and --max-response-size applies); a larger card is one a2a-recover cannot use: the step is REFUSED (exit 4), `agents add` exits 1')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long a pass waits for a held lock (the journal''s, or a workflow''s) before it gives up on it (exit 3, or the workflow skipped); 0 = not at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print less (errors and data only)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more; repeat for more detail (-vvv traces HTTP)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'a2a-recover;help' {
            [CompletionResult]::new('delegate', 'delegate', [CompletionResultType]::ParameterValue, 'Delegates a step to an agent: the intent is journaled first, then sent')
            [CompletionResult]::new('reconcile', 'reconcile', [CompletionResultType]::ParameterValue, 'Runs one recovery pass over every unfinished attempt')
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Follows a step''s task stream, journaling every event')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Answers the pending question of an INPUT_REQUIRED step on the same task')
            [CompletionResult]::new('compensate', 'compensate', [CompletionResultType]::ParameterValue, 'Undoes a workflow''s effects in reverse order and verifies them gone')
            [CompletionResult]::new('resolve', 'resolve', [CompletionResultType]::ParameterValue, 'Records an operator''s decision on a step that needs a human')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Shows the journal as a table (or JSON Lines)')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Deletes status refreshes older than an age, keeping every state change and decision')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Shows the journal in use, its lock, steps by state and what needs a human')
            [CompletionResult]::new('journal', 'journal', [CompletionResultType]::ParameterValue, 'Creates the journal (`journal init`); passes never create one')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receives push notifications from agents into the journal')
            [CompletionResult]::new('agents', 'agents', [CompletionResultType]::ParameterValue, 'Manages the registry of agents used by --skill and re-delegation')
            [CompletionResult]::new('scripted-agent', 'scripted-agent', [CompletionResultType]::ParameterValue, 'Runs a scripted A2A v1.0 agent on loopback, for drills and tests')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Runs the worked example end to end with a real crash, and narrates each recovery')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Prints a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Prints the man page (roff)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'a2a-recover;help;delegate' {
            break
        }
        'a2a-recover;help;reconcile' {
            break
        }
        'a2a-recover;help;follow' {
            break
        }
        'a2a-recover;help;reply' {
            break
        }
        'a2a-recover;help;compensate' {
            break
        }
        'a2a-recover;help;resolve' {
            break
        }
        'a2a-recover;help;inspect' {
            break
        }
        'a2a-recover;help;prune' {
            break
        }
        'a2a-recover;help;status' {
            break
        }
        'a2a-recover;help;journal' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema current); an existing one is left as it is (migrated when older)')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row by row, all or nothing, and marks the source as moved: every command then refuses it, naming the new location')
            break
        }
        'a2a-recover;help;journal;init' {
            break
        }
        'a2a-recover;help;journal;copy' {
            break
        }
        'a2a-recover;help;listen' {
            break
        }
        'a2a-recover;help;agents' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Fetches, validates and stores an agent''s card (again = refresh)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Lists registered agents in the order they are tried')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Removes an agent from the registry')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Measures and journals what recovery can rely on at an agent (creates no remote task unless --send-test is given)')
            break
        }
        'a2a-recover;help;agents;add' {
            break
        }
        'a2a-recover;help;agents;list' {
            break
        }
        'a2a-recover;help;agents;remove' {
            break
        }
        'a2a-recover;help;agents;probe' {
            break
        }
        'a2a-recover;help;scripted-agent' {
            break
        }
        'a2a-recover;help;demo' {
            break
        }
        'a2a-recover;help;completions' {
            break
        }
        'a2a-recover;help;man' {
            break
        }
        'a2a-recover;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
