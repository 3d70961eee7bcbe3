// Fixtures shared by the console's browser tests: a compose file whose
// service and named volume carry the run's berth.test label (so the harness's
// stop() removes them), and an enterprise license signed for the run.
import { generateKeyPairSync, sign } from 'node:crypto';
import { testImage } from './harness.mjs';

/** A one-service compose file (the test image, sleeping) with a named volume, both labelled berth.test=label. */
export const labelledCompose = (label) => `services:
  web:
    image: ${testImage}
    command: sleep 600
    labels:
      berth.test: "${label}"
    volumes:
      - data:/data
volumes:
  data:
    labels:
      berth.test: "${label}"
`;

/**
 * An enterprise license for this run (doc) and the public key that verifies it
 * (key: base64, raw 32 bytes), to pass to berth in BERTH_LICENSE_KEYS.
 */
export function makeLicense(id) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const payload = Buffer.from(
    JSON.stringify({ id, customer: 'Berth e2e', edition: 'enterprise', issuedAt: new Date(Date.now() - 3600_000).toISOString() }),
  );
  const doc = `${payload.toString('base64url')}.${sign(null, payload, privateKey).toString('base64url')}`;
  return { key: raw.toString('base64'), doc };
}
