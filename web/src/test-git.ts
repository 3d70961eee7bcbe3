// Git objects as the server answers them, shared by the git screens' tests.
import type { Schema } from './lib/client';

export const gitCredential: Schema<'api.gitCredentialJSON'> = {
  id: 9,
  name: 'deploy-token',
  authType: 'password',
  username: 'bot',
  hasPassword: true,
  hasSshKey: false,
  host: '',
  createdAt: '2026-11-27T08:00:00Z',
  updatedAt: '2026-11-27T08:00:00Z',
};
export const gitRepository: Schema<'api.gitRepositoryJSON'> = {
  id: 3,
  name: 'app',
  url: 'https://git.example.com/app.git',
  branch: 'main',
  credentialId: 9,
  webhookEnabled: false,
  hasWebhookSecret: false,
  webhookPath: '/api/git/webhook/3',
  lastSync: null,
  syncStatus: 'never',
  syncedAt: null,
  createdAt: '2026-11-27T08:00:00Z',
  updatedAt: '2026-11-27T08:00:00Z',
};
