/** E-Stop's methods: a person's switch, and a wrapper's ask for tripwire places (tripwire-budget.ts). */
import { budget, estop } from '../protocol/methods/estop.js';
import { type Bind, inSession } from './api/handlers.js';
import type { BrokerParts } from './parts.js';

export function bindEstop(on: Bind, b: BrokerParts): void {
  on(estop, (p) => b.estop.set(p.on));
  on(budget, inSession((session, p) => b.estop.budget.ask(session.info.id, p)));
}
