/**
 * Check-ups a front end asks the broker for: at most MAX_INSPECTIONS at once, counted from the moment each is
 * asked for (their code loads at the first one, and those asked for meanwhile meet the bound too); a client or
 * server the check-up cannot find is the asker's mistake, said as such.
 */
import { describe, expect, test } from 'vitest';
import { Inspections, MAX_INSPECTIONS } from '../../../proxy-core/src/broker/inspections.js';

describe('check-ups', () => {
  test('asked for all at once, one more than the bound: that one is refused as busy, the others run', async () => {
    const inspections = new Inspections({ HOME: '/nonexistent-home' });
    const asked = Array.from({ length: MAX_INSPECTIONS + 1 }, () => inspections.run({ client: 'no-such-client', server: 's', timeoutSeconds: 5 }));
    const settled = await Promise.allSettled(asked);
    const codes = settled.map((s) => (s.status === 'rejected' ? (s.reason as { code?: string }).code : 'ran'));
    expect(codes.filter((c) => c === 'busy')).toHaveLength(1);
    // each of the others reached the check-up, which found no such client
    expect(codes.filter((c) => c === 'bad-request')).toHaveLength(MAX_INSPECTIONS);
    expect((settled[0] as PromiseRejectedResult).reason.message).toMatch(/unknown client "no-such-client"/);
    // and once they are over, another may run
    await expect(inspections.run({ client: 'no-such-client', server: 's', timeoutSeconds: 5 })).rejects.toMatchObject({ code: 'bad-request' });
  });
});
