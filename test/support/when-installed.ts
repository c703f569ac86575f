// Suites that run Debian tools (Prometheus, promtool): where one is missing, a single test says
// so in the output, with what to install, and the suite itself is skipped; CI installs them.

/** `describe(name, suite)`, or, where `missing` names tools, a skip that says so. */
export function describeWhenInstalled(
  name: string,
  missing: string[],
  install: string,
  suite: () => void,
): void {
  if (missing.length > 0) {
    describe(name, () => {
      it(`is skipped: ${missing.join(', ')} not installed`, () => {
        console.log(`${name}: skipped, ${missing.join(', ')} not installed (${install})`);
        expect(missing.length).toBeGreaterThan(0);
      });
    });
  }
  (missing.length > 0 ? describe.skip : describe)(name, suite);
}
