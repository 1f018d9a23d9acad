import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** A self-signed certificate for 127.0.0.1 (openssl, one day), written as cert.pem and key.pem in `dir`. */
export function selfSignedCert(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject], { stdio: 'ignore' });
  return { cert, key };
}
