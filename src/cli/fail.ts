// How the binary answers what it cannot do: one line on stderr, exit 1.

export function fail(message: string): never {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(1);
}
