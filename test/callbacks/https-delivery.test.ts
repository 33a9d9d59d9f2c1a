import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { type CallbackSetup, callbackSetup, interactive, tableResolver } from './callback-setup.js';

/** A self-signed certificate for `hooks.example`, made with the system's openssl. */
function certificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tls-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=hooks.example',
      '-addext',
      'subjectAltName=DNS:hooks.example',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

describe('httpCallbacks({ ca })', () => {
  it('refuses at creation certificate authorities that are no PEM certificates, which Node would silently ignore', () => {
    const { cert } = certificate();
    expect(() => httpCallbacks({ ca: 'garbage' })).toThrow(
      'httpCallbacks: ca must hold PEM certificates (-----BEGIN CERTIFICATE-----…)',
    );
    expect(() => httpCallbacks({ ca: [cert, 5 as unknown as string] })).toThrow(
      'httpCallbacks: ca[1] must hold PEM certificates',
    );
    const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
    expect(() => httpCallbacks({ ca: broken })).toThrow(
      'httpCallbacks: ca holds a certificate that cannot be read',
    );
    expect(() => httpCallbacks({ ca: cert })).not.toThrow();
    expect(() => httpCallbacks({ ca: [cert, `${cert}${cert}`] })).not.toThrow();
    // A PEM file's bytes (readFileSync without an encoding), and a bundle with text between certificates.
    expect(() => httpCallbacks({ ca: Buffer.from(cert) })).not.toThrow();
    expect(() => httpCallbacks({ ca: [`# private CA\n${cert}\n# another\n${cert}`] })).not.toThrow();
    const trusted = cert.replaceAll('CERTIFICATE-----', 'TRUSTED CERTIFICATE-----');
    expect(() => httpCallbacks({ ca: trusted })).not.toThrow();
  });
});

describe('callback delivery over https', () => {
  const tls = certificate();
  const received: { headers: Record<string, string>; body: string; servername: string }[] = [];
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const socket = req.socket as typeof req.socket & { servername?: string };
      received.push({
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        servername: socket.servername ?? '',
      });
      res.writeHead(204).end();
    });
  });
  let port = 0;

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.close();
  });

  async function finish(setup: CallbackSetup) {
    const sent = await setup.send(interactive(`https://hooks.example:${port}/hook`));
    expect(sent.status).toBe(200);
    const requestId = String(sent.body.request_id);
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'reject');
    await setup.notifier.runDueWork();
    return { requestId, secret: String(sent.body.callback_secret) };
  }

  it('verifies the receiver certificate for the URL host (SNI) while connecting to the pinned address', async () => {
    // hooks.example resolves, through the stand-in resolver, to the loopback receiver: only the
    // development option admits a loopback target; TLS is checked as for any public host.
    const setup = await callbackSetup({
      allowInsecure: true,
      resolver: tableResolver({ 'hooks.example': ['127.0.0.1'] }),
      ca: tls.cert,
    });
    const { requestId, secret } = await finish(setup);
    expect(received).toHaveLength(1);
    expect(received[0]?.servername).toBe('hooks.example');
    const event = new Webhook(secret).verify(received[0]?.body ?? '', received[0]?.headers ?? {});
    expect(event).toMatchObject({ request_id: requestId, status: 'finished' });
    await setup.notifier.stop();
  });

  it('fails the attempt when the certificate is not trusted, and retries later', async () => {
    const before = received.length;
    const setup = await callbackSetup({
      allowInsecure: true,
      resolver: tableResolver({ 'hooks.example': ['127.0.0.1'] }),
    });
    const { requestId } = await finish(setup);
    expect(received).toHaveLength(before);
    expect(await setup.storage.dueWork.nextRunAt()).toBeGreaterThan(setup.clock.now());
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
    expect(requestId).toMatch(/^req_/);
    await setup.notifier.stop();
  });
});
