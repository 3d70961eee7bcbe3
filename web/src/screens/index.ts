// The screen of every route, each its own lazily loaded chunk (the shell and the
// API client are the initial bundle). A route without a screen fails type-checking.
import type { Component } from 'svelte';
import type { RouteName } from '../lib/routes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- screens take { route } or nothing
export type ScreenModule = { default: Component<any> };

export const screens: Record<RouteName, () => Promise<ScreenModule>> = {
  dashboard: () => import('./DashboardScreen.svelte'),
  dashboardAlias: () => import('./DashboardScreen.svelte'),
  containers: () => import('./ContainersScreen.svelte'),
  containerNew: () => import('./ContainerCreateScreen.svelte'),
  container: () => import('./ContainerDetailScreen.svelte'),
  containerTerminal: () => import('./TerminalScreen.svelte'),
  images: () => import('./ImagesScreen.svelte'),
  image: () => import('./ImageDetailScreen.svelte'),
  vulnerabilities: () => import('./VulnerabilitiesScreen.svelte'),
  volumes: () => import('./VolumesScreen.svelte'),
  volume: () => import('./VolumeDetailScreen.svelte'),
  networks: () => import('./NetworksScreen.svelte'),
  network: () => import('./NetworkDetailScreen.svelte'),
  logs: () => import('./LogsScreen.svelte'),
  stacks: () => import('./StacksScreen.svelte'),
  stackNew: () => import('./StackCreateScreen.svelte'),
  stack: () => import('./StackDetailScreen.svelte'),
  templates: () => import('./TemplatesScreen.svelte'),
  configSets: () => import('./ConfigSetsScreen.svelte'),
  gitStack: () => import('./GitStackScreen.svelte'),
  schedules: () => import('./SchedulesScreen.svelte'),
  activity: () => import('./ActivityScreen.svelte'),
  backups: () => import('./BackupsScreen.svelte'),
  git: () => import('./GitScreen.svelte'),
  registries: () => import('./RegistriesScreen.svelte'),
  registryBrowse: () => import('./RegistryBrowserScreen.svelte'),
  notifications: () => import('./NotificationsScreen.svelte'),
  environments: () => import('./EnvironmentsScreen.svelte'),
  environmentNew: () => import('./EnvironmentEditScreen.svelte'),
  environment: () => import('./EnvironmentEditScreen.svelte'),
  labels: () => import('./LabelsScreen.svelte'),
  users: () => import('./UsersScreen.svelte'),
  roles: () => import('./RolesScreen.svelte'),
  audit: () => import('./AuditScreen.svelte'),
  settings: () => import('./SettingsScreen.svelte'),
  license: () => import('./LicenseScreen.svelte'),
  system: () => import('./SystemScreen.svelte'),
  profile: () => import('./ProfileScreen.svelte'),
  login: () => import('./LoginScreen.svelte'),
  setup: () => import('./SetupScreen.svelte'),
  notfound: () => import('./NotFoundScreen.svelte'),
};
