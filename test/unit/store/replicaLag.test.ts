import { MAX_SAMPLES, recordPosition } from '../../../src/store/database/replica';

/*
 * The replica's lag is the age of the oldest recorded position of the primary it has not replayed
 * (src/store/database/replica.ts). The positions recorded are bounded: past MAX_SAMPLES, neighbours merge,
 * and the lag read from what is left is never less than it was.
 */
type Sample = { at: number; position: bigint };
/** How far behind a replica that replayed up to `replayed` is at `now`, read as the read router reads it. */
const lagOf = (samples: Sample[], replayed: bigint, now: number) => {
  const oldest = samples.find((s) => s.position > replayed);
  return oldest ? now - oldest.at : 0;
};

describe('the positions of the primary the replica is measured against (recordPosition)', () => {
  test('when a position is seen again, or an older one, then nothing is added; a newer one is kept with its time', () => {
    const samples: Sample[] = [];
    recordPosition(samples, 100, 10n);
    recordPosition(samples, 200, 10n);
    recordPosition(samples, 250, 9n);
    recordPosition(samples, 300, 20n);
    expect(samples).toEqual([
      { at: 100, position: 10n },
      { at: 300, position: 20n },
    ]);
  });

  test('when more than MAX_SAMPLES positions are recorded, then they are merged to at most that many, and no replayed position reads a smaller lag', () => {
    const samples: Sample[] = [];
    const all: Sample[] = [];
    for (let i = 1; i <= MAX_SAMPLES * 3 + 7; i++) {
      const sample = { at: i * 100, position: BigInt(i * 1_000) };
      all.push(sample);
      recordPosition(samples, sample.at, sample.position);
      expect(samples.length).toBeLessThanOrEqual(MAX_SAMPLES);
    }
    expect(samples.length).toBeGreaterThan(MAX_SAMPLES / 4);
    const now = (MAX_SAMPLES * 3 + 8) * 100;
    // Every replayed position, on and between the recorded ones: the merged record reads at least the whole one's lag.
    const under = [];
    for (let replayed = 0n; replayed <= BigInt((MAX_SAMPLES * 3 + 8) * 1_000); replayed += 500n)
      if (lagOf(samples, replayed, now) < lagOf(all, replayed, now)) under.push(replayed);
    expect(under).toEqual([]);
    // A replica that replayed everything is not behind.
    expect(lagOf(samples, BigInt((MAX_SAMPLES * 3 + 7) * 1_000), now)).toBe(0);
  });
});
