// Hands a new hawser-edge environment's token from the create form to the
// environment's page, which shows it once.
import type { HawserToken } from '../../lib/api-infra';

let pending: { envId: number; token: HawserToken } | null = null;

export function handOverHawserToken(envId: number, token: HawserToken): void {
  pending = { envId, token };
}

export function takeHawserToken(envId: number): HawserToken | null {
  const p = pending?.envId === envId ? pending.token : null;
  pending = null;
  return p;
}
