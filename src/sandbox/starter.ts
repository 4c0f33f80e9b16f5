/**
 * The first process inside a sandbox: a forwarder from `127.0.0.1:PORT` (the sandbox's own
 * loopback, where `HTTPS_PROXY` and the providers' base URLs point) to the egress proxy's unix
 * socket (bound in; the sandbox has no other network), then the agent itself, started without a
 * shell with the argv it was given; its exit code (or signal) becomes the starter's. SIGTERM and
 * SIGINT are passed on to the agent.
 *
 *   node starter.cjs PORT SOCKET EXECUTABLE ARGS…
 *
 * Written into the run's folder at each run (CommonJS, no dependencies, no file in the package).
 */
import type { Duplex } from 'node:stream';

export const STARTER_SOURCE = String.raw`'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [port, socketPath, executable, ...args] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.on('error', (error) => {
  process.stderr.write('sandbox: cannot listen on 127.0.0.1:' + port + ': ' + error.message + '\n');
  process.exit(126);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(executable, args, { stdio: 'inherit', shell: false });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => { try { child.kill(signal); } catch {} });
  }
  child.on('error', (error) => {
    process.stderr.write('sandbox: cannot start ' + executable + ': ' + error.message + '\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); return; }
    process.exit(code == null ? 1 : code);
  });
});
`;

/**
 * The same starter without a Node.js start-up (about 40 ms, several times that on a loaded
 * machine): where `socat` is installed, a fixed POSIX shell script starts it as the forwarder,
 * waits on fd 4 (a socket to curupira, which reads socat's log there and answers `go` once it
 * says it listens: no polling, no extra process), then `exec`s the agent with fd 4 closed, which
 * thus gets signals and gives its exit code directly. The script is a constant; the port, the
 * socket and the agent's argv arrive as positional arguments, never as shell text.
 *
 *   sh -c SHELL_STARTER sh PORT SOCKET EXECUTABLE ARGS…
 */
export const SHELL_STARTER = [
  'port="$1"; sock="$2"; shift 2',
  'socat -d -d "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" </dev/null >/dev/null 2>&4 &',
  'read -r answer <&4',
  'if [ "$answer" != go ]; then echo "sandbox: the proxy forwarder did not start" >&2; exit 126; fi',
  'exec "$@" 4<&-',
].join('\n');

/**
 * The shell starter of a sandbox started before its agent is known (`startEarly`): the sandbox
 * starts while the run's worktree is still being filled, and the agent's environment and argv are
 * decided later. Like `SHELL_STARTER` it starts socat and waits on fd 4, but after `go` it reads
 * the launch file (in the run's read-only folder, written by curupira just before `go`: the number
 * of environment entries, the entries, the executable, its arguments, each ended by a NUL byte)
 * into an array with bash's `read -d ''`, then `exec`s `env -i` with them. Every value stays one
 * argument: nothing is parsed as shell text. bash, not `sh`, because only bash reads NUL-separated
 * fields.
 *
 *   bash -c LATE_STARTER bash PORT SOCKET LAUNCH_FILE ENV_BINARY
 */
export const LATE_STARTER = [
  'port="$1"; sock="$2"; launch="$3"; envbin="$4"',
  'socat -d -d "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" </dev/null >/dev/null 2>&4 &',
  'read -r answer <&4',
  'if [ "$answer" != go ]; then echo "sandbox: the proxy forwarder did not start" >&2; exit 126; fi',
  'f=()',
  'while IFS= read -r -d \'\' field; do f+=("$field"); done < "$launch"',
  'n="${f[0]}"',
  'if [ "${#f[@]}" -lt $((n + 2)) ]; then echo "sandbox: the launch file is incomplete" >&2; exit 126; fi',
  // Read: curupira removes the file (it holds the agent's environment) once it hears this.
  'echo launched >&4',
  'exec 4<&-',
  'exec "$envbin" -i -- "${f[@]:1:n}" "${f[@]:n+1}"',
].join('\n');

/**
 * The starter of a sandbox started early, as one Perl process instead of bash, socat and `env`
 * (three program starts on the run's path: about 3 ms of CPU and as much of the sandbox's start on
 * two busy cores, bench/README.md "sandbox"). Perl's core alone, no module loaded (`perl-base`,
 * which every Debian and Ubuntu system has). It listens on `127.0.0.1:PORT` and forks the
 * forwarder: a child per connection relays it to the egress proxy's unix socket, both ways, each
 * half closed when its side ends; the forwarder holds none of the agent's output pipes. It then
 * says `listening` on fd 4 and waits there for `go`; reads the launch file (`launchFileContent`),
 * says `launched`, closes fd 4, sets exactly the environment the file lists, and `exec`s the
 * executable with its arguments, a list, never shell text. On a failure it says `E <why>` on fd 4
 * and on stderr, stops the forwarder and exits 126 (127 when the executable cannot start). The numbers are Linux's, where bubblewrap runs: AF_UNIX 1, AF_INET 2,
 * SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2, EINTR 4, SHUT_WR 1.
 *
 *   perl -e PERL_LATE_STARTER PORT SOCKET LAUNCH_FILE
 */
export const PERL_LATE_STARTER = String.raw`my ($port, $sock, $launch) = @ARGV;
open(my $ch, '+<&=', 4) or do { print STDERR "sandbox: no channel to curupira\n"; exit 126 };
select((select($ch), $| = 1)[0]);
my $forwarder = 0;
sub fail { kill 'KILL', $forwarder if $forwarder > 0; print $ch "E $_[0]\n"; print STDERR "sandbox: $_[0]\n"; exit 126 }
socket(my $listener, 2, 1, 0) or fail("the proxy forwarder cannot open a socket: $!");
setsockopt($listener, 1, 2, pack('i', 1));
bind($listener, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) && listen($listener, 128)
  or fail("the proxy forwarder cannot listen on 127.0.0.1:$port: $!");
$forwarder = fork();
defined $forwarder or do { $forwarder = 0; fail("the proxy forwarder cannot start: $!") };
if ($forwarder == 0) {
  close $ch;
  open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
  $SIG{CHLD} = 'IGNORE';
  while (1) {
    my $client;
    if (!accept($client, $listener)) { select(undef, undef, undef, 0.01); next }
    my $relay = fork();
    if (defined $relay && $relay == 0) { close $listener; relay($client); exit 0 }
    close $client;
  }
}
close $listener;
print $ch "listening\n";
my $answer = <$ch>;
if (!defined $answer || $answer ne "go\n") { fail("the proxy forwarder did not start") }
open(my $file, '<', $launch) or fail("cannot read the launch file: $!");
my $data = do { local $/; <$file> };
close $file;
my @fields = split /\0/, $data, -1;
pop @fields;
my $count = $fields[0];
if (!defined $count || $count !~ /^[0-9]+$/ || @fields < $count + 2) { fail("the launch file is incomplete") }
%ENV = ();
for my $entry (@fields[1 .. $count]) { my ($name, $value) = split /=/, $entry, 2; $ENV{$name} = $value }
my ($executable, @args) = @fields[$count + 1 .. $#fields];
print $ch "launched\n";
close $ch;
exec { $executable } $executable, @args;
print STDERR "sandbox: cannot start $executable: $!\n";
kill 'KILL', $forwarder;
exit 127;

sub relay {
  my ($client) = @_;
  socket(my $upstream, 1, 1, 0) or return;
  connect($upstream, pack('S Z*', 1, $sock)) or return;
  my @from = ($client, $upstream);
  my @to = ($upstream, $client);
  my @open = (1, 1);
  while ($open[0] || $open[1]) {
    my $wanted = '';
    for my $i (0, 1) { vec($wanted, fileno($from[$i]), 1) = 1 if $open[$i] }
    my $ready = select(my $readable = $wanted, undef, undef, undef);
    if ($ready < 0) { next if $! == 4; return }
    for my $i (0, 1) {
      next unless $open[$i] && vec($readable, fileno($from[$i]), 1);
      my $got = sysread($from[$i], my $buffer, 65536);
      if (!$got) { return unless defined $got; shutdown($to[$i], 1); $open[$i] = 0; next }
      my $done = 0;
      while ($done < $got) {
        my $wrote = syswrite($to[$i], $buffer, $got - $done, $done);
        return unless defined $wrote;
        $done += $wrote;
      }
    }
  }
}
`;

/** The launch file's name in the run's folder (see `LATE_STARTER`). */
export const LAUNCH_FILE = 'launch';

/**
 * The launch file's content: the environment's entry count, `NAME=value` entries, the executable
 * and its arguments, each ended by NUL. Undefined when a value cannot pass this way: a NUL byte
 * (no process can receive it), an executable with `=` (`env` would read it as an entry), or an
 * entry name that is empty or holds `=`.
 */
export function launchFileContent(
  env: Readonly<Record<string, string>>,
  executable: string,
  args: readonly string[],
): string | undefined {
  const entries = Object.entries(env);
  if (executable.includes('=') || !executable.startsWith('/')) return undefined;
  if (entries.some(([name]) => name === '' || name.includes('='))) return undefined;
  const fields = [
    String(entries.length),
    ...entries.map(([name, value]) => `${name}=${value}`),
    executable,
    ...args,
  ];
  if (fields.some((field) => field.includes('\0'))) return undefined;
  return fields.map((field) => `${field}\0`).join('');
}

/**
 * curupira's side of fd 4 for `LATE_STARTER`: `ready` resolves once socat listens (rejects when
 * it reports an error, exits or takes too long); `go()` then lets the starter read its launch file.
 */
export function lateStarterChannel(): {
  channel(socket: Duplex): void;
  ready: Promise<void>;
  go(): void;
  /** Resolves once the starter has read its launch file (it says `launched` on fd 4). */
  launched: Promise<void>;
} {
  let socket: Duplex | undefined;
  let settle: (ok: boolean) => void = () => {};
  const ready = new Promise<void>((resolveReady, rejectReady) => {
    settle = (ok) => (ok ? resolveReady() : rejectReady(new Error('the proxy forwarder did not start')));
  });
  ready.catch(() => {});
  let heard: () => void = () => {};
  const launched = new Promise<void>((resolveLaunched) => {
    heard = resolveLaunched;
  });
  return {
    ready,
    launched,
    channel(channel) {
      socket = channel;
      watchForwarder(channel, settle);
      // After `go`, the starter's own line among socat's log lines.
      let seen = '';
      channel.on('data', (chunk: Buffer) => {
        seen = (seen + chunk.toString('utf8')).slice(-4096);
        if (/(^|\n)launched\n/.test(seen)) heard();
      });
    },
    go() {
      socket?.write('go\n');
    },
  };
}

/** The fd on which the shell starter waits for curupira's `go`. */
export const STARTER_CHANNEL_FD = 4;

/** How long the forwarder may take to listen before the run fails. */
const FORWARDER_START_MS = 60_000;

/**
 * curupira's side of fd 4: socat's log arrives there (`-d -d`: "N listening on …" once its port
 * listens); the answer is `go`, or the socket is closed when socat reports an error, exits or
 * takes too long (the starter then exits 126). What follows (socat's log of each connection) is
 * read and dropped.
 */
export function answerStarter(socket: Duplex): void {
  watchForwarder(socket, (ok) => {
    if (ok) socket.write('go\n');
    else socket.destroy();
  });
}

/** Reads socat's log on fd 4 and calls `settle` once: true when it listens, false otherwise. */
function watchForwarder(socket: Duplex, settle: (ok: boolean) => void): void {
  let seen = '';
  let answered = false;
  const answer = (ok: boolean): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    if (!ok) socket.destroy();
    settle(ok);
  };
  const timer = setTimeout(() => answer(false), FORWARDER_START_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    if (answered) return;
    seen = (seen + chunk.toString('utf8')).slice(-8192);
    // socat's log ("… N listening on …", "… E …") or the Perl starter's lines ("listening", "E …").
    if (/ N listening on |(^|\n)listening\n/.test(seen)) answer(true);
    else if (/ [EF] |(^|\n)E /.test(seen)) answer(false);
  });
  socket.on('error', () => answer(false));
  socket.on('close', () => answer(false));
}
