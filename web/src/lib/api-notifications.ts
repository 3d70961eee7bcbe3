// Notifications: channels (secrets masked as '********' by the server; sent
// back unchanged they keep the stored value), tests, and the subscriptions of
// environments to channels.

export const MASK = '********';

export const channelTypes = ['smtp', 'webhook', 'slack', 'discord', 'mattermost', 'gotify', 'ntfy', 'telegram', 'pushover'] as const;
export type ChannelType = (typeof channelTypes)[number];

/** The event ids a channel or a subscription can take (COMPAT.md); none checked means all. */
export const eventTypes = [
  'container_started', 'container_stopped', 'container_restarted', 'container_exited', 'container_oom',
  'container_unhealthy', 'container_healthy', 'container_updated', 'image_pulled',
  'auto_update_success', 'auto_update_failed', 'auto_update_blocked', 'updates_detected', 'batch_update_success',
  'git_sync_success', 'git_sync_failed', 'git_sync_skipped',
  'stack_started', 'stack_stopped', 'stack_deployed', 'stack_deploy_failed',
  'vulnerability_critical', 'vulnerability_high', 'vulnerability_any',
  'environment_offline', 'environment_online', 'disk_space_warning',
  'image_prune_success', 'image_prune_failed', 'license_expiring',
  'backup_success', 'backup_failed',
] as const;

export interface ChannelConfig {
  host?: string;
  port?: number;
  secure?: boolean;
  username?: string;
  password?: string;
  from_email?: string;
  from_name?: string;
  to_emails?: string[];
  skipTlsVerify?: boolean;
  url?: string;
  token?: string;
  botToken?: string;
  chatId?: string;
  apiUrl?: string;
  user?: string;
}

export interface Channel {
  id: number;
  type: string;
  name: string;
  enabled: boolean;
  config: ChannelConfig;
  eventTypes: string[];
  lastError?: string;
  lastErrorAt?: string | null;
  lastSentAt?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

export interface ChannelInput {
  type: string;
  name: string;
  enabled: boolean;
  config: ChannelConfig;
  eventTypes: string[];
}

export interface Subscription {
  id: number;
  environmentId: number;
  notificationId: number;
  enabled: boolean;
  eventTypes: string[];
  channelName: string;
  channelType: string;
}

export interface TestResult {
  success: boolean;
  error?: string;
}
