import { createLogging } from '../../../src/ops/logger';
import { shutDown } from '../../../src/ops/shutdown';

function capture() {
  const lines: string[] = [];
  const { logger } = createLogging({ level: 'info', destination: { write: (line: string) => lines.push(line) } });
  return { logger, logged: () => lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } }) };
}

describe('the graceful stop', () => {
  test('when the steps run, then each starts after the one before it has ended, in the order given', async () => {
    const { logger, logged } = capture();
    const order: string[] = [];
    const step = (name: string, ms: number) => ({
      name,
      run: async () => {
        order.push(`${name} started`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(`${name} ended`);
      },
    });
    await shutDown([step('drain', 30), step('flush', 0), step('close', 10)], logger);
    expect(order).toEqual(['drain started', 'drain ended', 'flush started', 'flush ended', 'close started', 'close ended']);
    expect(logged()).toEqual([]);
  });

  test('when a step fails (thrown or rejected), then it is logged by name and the next steps still run', async () => {
    const { logger, logged } = capture();
    const ran: string[] = [];
    await shutDown(
      [
        {
          name: 'returning unspent reservations',
          run: () => {
            throw new Error('pool ended');
          },
        },
        { name: 'closing the database', run: () => Promise.reject(new Error('socket closed')) },
        { name: 'exporting the last spans', run: () => void ran.push('spans') },
      ],
      logger,
    );
    expect(ran).toEqual(['spans']);
    expect(logged().map((l) => [l.level, l.msg, l.err?.message])).toEqual([
      [40, 'returning unspent reservations failed', 'pool ended'],
      [40, 'closing the database failed', 'socket closed'],
    ]);
  });

  test('when a step outlasts its bound, then the next one starts at the bound, without waiting for it', async () => {
    const { logger } = capture();
    const started = Date.now();
    let next = 0;
    await shutDown(
      [
        { name: 'writing the last uses', run: () => new Promise(() => {}), withinMs: 50 },
        { name: 'closing the database', run: () => void (next = Date.now() - started) },
      ],
      logger,
    );
    expect(next).toBeGreaterThanOrEqual(45);
    expect(next).toBeLessThan(1_000);
  });
});
