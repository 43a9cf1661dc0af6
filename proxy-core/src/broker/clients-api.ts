/** The MCP clients' configs (listed, protected, unprotected: client-configs.ts) and check-ups (inspections.ts). */
import { clientsList, inspect, protect, unprotect } from '../protocol/methods/clients.js';
import type { Bind } from './api/handlers.js';
import type { BrokerParts } from './parts.js';

export function bindClients(on: Bind, b: BrokerParts): void {
  on(clientsList, () => b.clientConfigs.list());
  on(protect, (p) => b.clientConfigs.change('protect', p));
  on(unprotect, (p) => b.clientConfigs.change('unprotect', p));
  on(inspect, (p) => b.inspections.run(p));
}
