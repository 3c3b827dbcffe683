// The test suite's own ports (test/support/ports.ts): a port for a server that a test stops and
// starts again comes from below the kernel's ephemeral range, where no listen(0) of another test
// file can be handed it while the server is down.
import { describe, expect, it } from 'vitest';
import { ephemeralRangeStart, freePort, portOutsideEphemeralRange } from '../support/ports.ts';

const ephemeralStart = ephemeralRangeStart();

describe('test ports', () => {
  it('gives a free port below the ephemeral range, where freePort never reaches', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => portOutsideEphemeralRange()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralStart);
    }
    expect(await freePort()).toBeGreaterThanOrEqual(ephemeralStart);
  });
});
