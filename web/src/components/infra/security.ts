// The security settings form of an environment: the switches in the order
// the console shows them, and the allowed host directories as text.
import type { EnvironmentSecurity } from '../../lib/api-infra';

export type SecuritySwitch = Exclude<keyof EnvironmentSecurity, 'allowedBindPaths' | 'berthHost'>;

/** The switches, each with its label and what turning it off refuses. */
export const securitySwitches: { key: SecuritySwitch; label: string; refuses: string }[] = [
  { key: 'allowBindMounts', label: 'Bind mounts', refuses: 'host paths mounted into containers (also volumes of host directories and file secrets)' },
  { key: 'allowPrivileged', label: 'Privileged mode', refuses: 'privileged containers' },
  { key: 'allowHostNetwork', label: 'Host network', refuses: "the host's network namespace" },
  { key: 'allowHostPID', label: 'Host PID', refuses: "the host's process namespace" },
  { key: 'allowHostIPC', label: 'Host IPC', refuses: "the host's IPC namespace" },
  { key: 'allowDevices', label: 'Devices', refuses: 'host devices mapped into containers' },
  { key: 'allowCapAdd', label: 'Added capabilities', refuses: 'capabilities beyond the engine\'s defaults' },
  { key: 'allowSecurityOpt', label: 'Security options', refuses: 'seccomp, AppArmor or SELinux overrides (no-new-privileges stays allowed)' },
];

/** The directories of a text area, one a line (blank lines dropped). */
export function pathsOf(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The first line that is not an absolute path, or null. */
export function badPath(paths: string[]): string | null {
  return paths.find((p) => !p.startsWith('/')) ?? null;
}
