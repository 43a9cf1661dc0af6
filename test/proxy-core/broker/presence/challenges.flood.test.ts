import { expect, test } from 'vitest';
import { bindingOf, Challenges } from '../../../../proxy-core/src/broker/presence/challenges.js';

const clock = { now: () => 1_000 };

test("a front end asking for challenges in a loop pushes out its own, never another front end's open one", () => {
  const c = new Challenges(clock);
  const binding = bindingOf('approve', { id: 'T-1', remember: 'once' });
  const person = c.issue('ui:person', binding, 'Allow the held call T-1');
  // the agent: one connection, then many
  for (let i = 0; i < 1000; i++) c.issue('cli:agent', binding, 'Allow the held call T-1');
  for (let i = 0; i < 3000; i++) c.issue(`cli:agent-${i}`, binding, 'Allow the held call T-1');
  const taken = c.take(person.id, 'ui:person', binding);
  expect(typeof taken, String(taken)).toBe('object');
});

test("a front end's newest challenges stay usable however many it asked for", () => {
  const c = new Challenges(clock);
  const binding = bindingOf('estop', { on: false });
  const ids = Array.from({ length: 100 }, () => c.issue('cli:one', binding, 'Turn E-Stop off').id);
  expect(typeof c.take(ids.at(-1)!, 'cli:one', binding)).toBe('object');
  expect(c.take(ids[0]!, 'cli:one', binding)).toMatch(/unknown or was used already/);
});
