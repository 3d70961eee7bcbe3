// Deleting a stack with the console's options (see deleteStackWith).
import { runStackAction, type DeleteOptions, type StackEntry } from '../../lib/api-stacks';
import { client, unwrap } from '../../lib/client';

/**
 * Deletes a stack with the console's two options on top of the API's one
 * flag (force: tear down a running stack AND remove its named volumes):
 * removing volumes is force; a forced delete that keeps the volumes takes
 * the stack down first (down keeps named volumes), then deletes it.
 * Adopted external stacks only lose Berth's records: nothing is taken down.
 */
export async function deleteStackWith(env: number, stack: Pick<StackEntry, 'name' | 'status' | 'sourceType' | 'adopted'>, opts: DeleteOptions): Promise<void> {
  const remove = (force: boolean) => unwrap(client.DELETE('/api/stacks/{name}', { params: { path: { name: stack.name }, query: { env, force } } }));
  const adoptedExternal = stack.sourceType === 'external' && stack.adopted;
  if (opts.removeVolumes && !adoptedExternal) {
    await remove(true);
    return;
  }
  const active = stack.status === 'running' || stack.status === 'partial';
  if (opts.force && active && !adoptedExternal) {
    await runStackAction(stack.name, env, 'down');
    // A compose project Berth does not manage is gone once it is down (nothing else to delete).
    if (stack.sourceType === 'external') return;
  }
  await remove(false);
}
