/**
 * The command line of a script that takes no arguments (its settings, if any, are environment
 * variables): `--help` or `-h` prints its usage and exits 0, any other argument prints it on
 * stderr and exits 64 (a usage error, as scripts/smoke.ts), both before the script does anything.
 * Call it first, before any work (bench/run.ts: before it makes its temporary folder).
 */
export function answerArguments(usage: string, argv: readonly string[] = process.argv.slice(2)): void {
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(`unexpected argument${args.length > 1 ? 's' : ''}: ${args.join(' ')}\n\n${usage}`);
    process.exit(64);
  }
}
