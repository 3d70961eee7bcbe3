// The message of a failed call for display: the server's message, and its
// details when it gave some ("Volume is in use by a container: remove …").
import { ApiError } from '../../lib/api';

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.details && !e.message.includes(e.details) ? `${e.message}: ${e.details}` : e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
