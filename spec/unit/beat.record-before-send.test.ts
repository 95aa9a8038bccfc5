/**
 * Beat records a run before it sends it, as Celery's `Scheduler.reserve` and RedBeat's `_next_instance` do: a
 * Beat killed between the two skips that run instead of the next lock holder sending it again. A send that
 * fails puts the previous state back, so the run is tried again rather than lost.
 */
import { Beat } from '../../beat/beat.js';
import { every } from '../../lib/beat/schedules.js';
import type { EntryState, ScheduleStore } from '../../beat/store.js';
import { nullLogger } from '../../lib/logger.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { waitFor } from '../support/wait.js';

class MapStore implements ScheduleStore {
  readonly description = 'memory';
  readonly state = new Map<string, EntryState>();
  load(): Promise<Map<string, EntryState>> {
    return Promise.resolve(new Map(this.state));
  }
  save(name: string, s: EntryState): Promise<void> {
    this.state.set(name, s);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A broker whose first send fails; it notes what the store said when each send was attempted. */
class FlakyBroker extends MemoryBroker {
  readonly seenAtSend: Array<EntryState | undefined> = [];
  constructor(
    mem: MemoryStore,
    private readonly schedule: MapStore,
  ) {
    super(mem);
  }
  override async send(...a: Parameters<MemoryBroker['send']>): ReturnType<MemoryBroker['send']> {
    this.seenAtSend.push(this.schedule.state.get('e'));
    if (this.seenAtSend.length === 1) throw new Error('broker gone for a moment');
    return super.send(...a);
  }
}

test('own wiring: a run is recorded before it is sent; a failed send is put back and sent once on the next tick', async () => {
  const schedule = new MapStore();
  schedule.state.set('e', { lastRunAt: 0, totalRunCount: 7 });
  const mem = new MemoryStore();
  const broker = new FlakyBroker(mem, schedule);
  const beat = new Beat({
    entries: [{ name: 'e', task: 'test.e', schedule: every(3600), args: [], kwargs: {}, options: { queue: 'q' } }],
    store: schedule,
    broker,
    lock: broker.lock('l'),
    logger: nullLogger(),
    maxLoopMs: 50,
  });
  await beat.start();
  await waitFor(() => mem.sent.length >= 1, 5000, { what: 'the send' });
  await new Promise((r) => setTimeout(r, 300));
  await beat.stop();
  expect(mem.sent).toHaveLength(1);
  // Both attempts found run 8 already recorded; the failure in between put run 7 back.
  expect(broker.seenAtSend.map((s) => s?.totalRunCount)).toEqual([8, 8]);
  expect(schedule.state.get('e')?.totalRunCount).toBe(8);
});
