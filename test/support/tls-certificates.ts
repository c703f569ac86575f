// Certificates for a PostgreSQL server with TLS on, made with openssl for one test run: a CA that
// signs the server's certificate (for 127.0.0.1), and a second CA that signed nothing.
import { execFileSync } from 'node:child_process';
import { chmod, chown, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { serviceTempDir, serviceUser } from '../../scripts/lib/system-tools.mjs';

export interface TlsCertificates {
  /** The CA that signed the server's certificate (PEM). */
  caFile: string;
  /** A CA that signed nothing here: verifying against it must fail. */
  otherCaFile: string;
  certFile: string;
  /** The server's key, owned by the service user with mode 0600, as PostgreSQL requires. */
  keyFile: string;
  remove(): Promise<void>;
}

const openssl = (dir: string, args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30_000 });

/** A self-signed CA with an EC P-256 key, valid one day. */
function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  ]);
}

/** A CA, and a server certificate it signs for `host` (an IP address), in a temp directory. */
export async function makeTlsCertificates(host = '127.0.0.1'): Promise<TlsCertificates> {
  const { dir, remove } = await serviceTempDir('users-service-tls-');
  try {
    makeCa(dir, 'ca');
    makeCa(dir, 'other-ca');
    openssl(dir, [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      `/CN=${host}`,
    ]);
    // verify-full checks the host name against the subjectAltName, not the CN.
    await writeFile(path.join(dir, 'server.ext'), `subjectAltName=IP:${host}\n`);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'server.ext',
      '-out',
      'server.crt',
    ]);
    const { uid, gid } = serviceUser();
    for (const file of ['server.key', 'server.crt']) {
      if (uid !== undefined && gid !== undefined) await chown(path.join(dir, file), uid, gid);
    }
    await chmod(path.join(dir, 'server.key'), 0o600);
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    caFile: path.join(dir, 'ca.crt'),
    otherCaFile: path.join(dir, 'other-ca.crt'),
    certFile: path.join(dir, 'server.crt'),
    keyFile: path.join(dir, 'server.key'),
    remove,
  };
}
