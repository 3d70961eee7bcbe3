// Identifiers the server uses (event ids, channel types, engine event types and
// actions) said in words on screen. The id stays what the API takes; only the
// label changes. Unknown ids still read as words: "foo_bar" → "Foo bar".

/** Notification channel types (COMPAT.md). */
const CHANNEL_TYPES: Record<string, string> = {
  smtp: 'Email (SMTP)',
  webhook: 'Webhook',
  slack: 'Slack',
  discord: 'Discord',
  mattermost: 'Mattermost',
  gotify: 'Gotify',
  ntfy: 'ntfy',
  telegram: 'Telegram',
  pushover: 'Pushover',
};

/** Notification event ids whose plain spelling would read wrong. */
const EVENT_TYPES: Record<string, string> = {
  container_oom: 'Container out of memory',
  auto_update_success: 'Auto-update succeeded',
  auto_update_failed: 'Auto-update failed',
  auto_update_blocked: 'Auto-update blocked',
  batch_update_success: 'Batch update succeeded',
  git_sync_success: 'Git sync succeeded',
  git_sync_failed: 'Git sync failed',
  git_sync_skipped: 'Git sync skipped',
  vulnerability_critical: 'Critical vulnerability found',
  vulnerability_high: 'High vulnerability found',
  vulnerability_any: 'Any vulnerability found',
  environment_offline: 'Environment went offline',
  environment_online: 'Environment back online',
  disk_space_warning: 'Disk space low',
  image_prune_success: 'Image prune succeeded',
  image_prune_failed: 'Image prune failed',
  license_expiring: 'License expiring',
  backup_success: 'Backup succeeded',
  backup_failed: 'Backup failed',
};

/** Engine event actions (Activity) whose plain spelling would read wrong. */
const ACTIONS: Record<string, string> = {
  create: 'Created',
  start: 'Started',
  stop: 'Stopped',
  restart: 'Restarted',
  kill: 'Killed',
  pause: 'Paused',
  unpause: 'Resumed',
  rename: 'Renamed',
  update: 'Updated',
  pull: 'Pulled',
  push: 'Pushed',
  delete: 'Deleted',
  remove: 'Removed',
  tag: 'Tagged',
  untag: 'Untagged',
  import: 'Imported',
  load: 'Loaded',
  save: 'Saved',
  connect: 'Connected',
  disconnect: 'Disconnected',
  mount: 'Mounted',
  unmount: 'Unmounted',
  prune: 'Pruned',
  oom: 'Out of memory',
  die: 'Exited',
  destroy: 'Removed',
  health_status: 'Health changed',
  exec_create: 'Exec created',
  exec_start: 'Exec started',
  exec_die: 'Exec ended',
};

/** "foo_bar-baz" → "Foo bar baz"; an empty id stays empty. */
export function humanize(id: string): string {
  const s = id.replace(/[_-]+/g, ' ').trim();
  return s ? s[0].toUpperCase() + s.slice(1) : '';
}

/** A notification channel type in words: "smtp" → "Email (SMTP)". */
export function channelTypeLabel(type: string): string {
  return CHANNEL_TYPES[type] ?? humanize(type);
}

/** A notification event id in words: "container_started" → "Container started". */
export function eventTypeLabel(id: string): string {
  return EVENT_TYPES[id] ?? humanize(id);
}

/** An engine event's object type in words: "container" → "Container". */
export function objectTypeLabel(type: string): string {
  return humanize(type);
}

/**
 * An engine event's action in words: "die" → "Exited",
 * "health_status: healthy" → "Health changed: healthy".
 */
export function actionLabel(action: string): string {
  const i = action.indexOf(':');
  const head = i < 0 ? action : action.slice(0, i);
  const tail = i < 0 ? '' : action.slice(i + 1).trim();
  const word = ACTIONS[head] ?? humanize(head);
  return tail ? `${word}: ${tail}` : word;
}
