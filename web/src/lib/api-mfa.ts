// MFA (TOTP) of local accounts: POST /api/users/{id}/mfa starts the setup
// ({} → secret and QR code) or completes it ({action: "verify", token} → the
// backup codes, shown once); DELETE turns MFA off, confirmed with the
// caller's current password or MFA code. See
// server/internal/api/mfa.go and COMPAT.md.
import { request } from './api';

/** A started setup: the secret for the authenticator app and its QR code. */
export interface MfaEnrolment {
  secret: string;
  /** A PNG data URL of the otpauth:// QR code. */
  qrDataUrl: string;
  otpauthUrl?: string;
}

/** A completed setup: the one-time backup codes, which are not shown again. */
export interface MfaEnabled {
  success: boolean;
  message?: string;
  backupCodes: string[];
}

export function beginMfa(userId: number): Promise<MfaEnrolment> {
  return request('POST', `/api/users/${userId}/mfa`, { body: {} });
}

export function verifyMfa(userId: number, token: string): Promise<MfaEnabled> {
  return request('POST', `/api/users/${userId}/mfa`, { body: { action: 'verify', token } });
}

/**
 * What confirms turning MFA off: the caller's current password, or a current
 * code of the caller's own MFA (the server tries the password first).
 */
export interface MfaConfirmation {
  password?: string;
  token?: string;
}

export function disableMfa(userId: number, confirm: MfaConfirmation): Promise<{ success: boolean; message?: string }> {
  return request('DELETE', `/api/users/${userId}/mfa`, { body: confirm });
}
