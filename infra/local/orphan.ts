/**
 * Calls `stop` once the process that started this one has gone. npm runs a script under `sh -c`,
 * and when npm is sent SIGTERM it passes the signal to that shell, which dies without passing it
 * on: the server would live on, reparented, holding its ports and its emulators. (Ctrl-C reaches
 * every process of the terminal's group, so it needs none of this; `exec` in the script would
 * fix it for POSIX shells but break `npm start` under Windows' cmd.exe.) Checked once a second;
 * the timer does not keep the process alive.
 */
export function stopWhenOrphaned(stop: (reason: string) => void, everyMs = 1000): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop('parent exited');
  }, everyMs).unref();
}
