// Deleting a stack with the console's options (see deleteStackWith).
import * as stacks from '../../lib/api-stacks';
import type { DeleteOptions, StackEntry } from '../../lib/api-stacks';

/**
 * Deletes a stack with the console's two options on top of the API's one
 * flag (force: tear down a running stack AND remove its named volumes):
 * removing volumes is force; a forced delete that keeps the volumes takes
 * the stack down first (down keeps named volumes), then deletes it.
 * Adopted external stacks only lose Berth's records: nothing is taken down.
 */
export async function deleteStackWith(env: number, stack: Pick<StackEntry, 'name' | 'status' | 'sourceType' | 'adopted'>, opts: DeleteOptions): Promise<void> {
  const adoptedExternal = stack.sourceType === 'external' && stack.adopted;
  if (opts.removeVolumes && !adoptedExternal) {
    await stacks.deleteStack(env, stack.name, true);
    return;
  }
  const active = stack.status === 'running' || stack.status === 'partial';
  if (opts.force && active && !adoptedExternal) {
    await stacks.stackAction(env, stack.name, 'down');
    // A compose project Berth does not manage is gone once it is down (nothing else to delete).
    if (stack.sourceType === 'external') return;
  }
  await stacks.deleteStack(env, stack.name, false);
}
