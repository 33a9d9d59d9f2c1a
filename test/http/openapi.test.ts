import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectOk, plainBody, send } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

type Json = Record<string, unknown>;

/** Follows a local `$ref` (`#/components/schemas/X`) once, or answers the schema itself. */
function resolve(doc: Json, schema: unknown): Json {
  const ref = (schema as Json | undefined)?.$ref;
  if (typeof ref !== 'string') return schema as Json;
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, part) => (node as Json)[part], doc) as Json;
}

/** The JSON schema of a response or request body. */
function bodySchema(doc: Json, holder: unknown): Json {
  const content = (holder as Json).content as Json;
  return resolve(doc, (content['application/json'] as Json).schema);
}

describe.each(hostKinds)('GET /openapi.json (%s)', (kind) => {
  let host: TestHost;
  let doc: Json;
  beforeAll(async () => {
    host = await startTestHost(kind);
    const answer = await call(`${host.baseUrl}/openapi.json`);
    doc = expectOk<Json>(answer);
  });
  afterAll(async () => {
    await host.close();
  });

  it('is a valid OpenAPI 3.x document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
  });

  it("names the harness's mount as its server", () => {
    expect(doc.servers).toEqual([{ url: new URL(host.baseUrl).pathname }]);
  });

  it('describes both endpoints with their methods', () => {
    const paths = doc.paths as Json;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining(['/api/notify', '/api/notify/status/{request_id}']),
    );
    expect(Object.keys(paths['/api/notify'] as Json)).toContain('post');
    expect(Object.keys(paths['/api/notify/status/{request_id}'] as Json)).toContain('get');
  });

  it('documents the X-API-Key header as the security scheme of every operation', () => {
    const schemes = (doc.components as Json).securitySchemes as Json;
    const apiKeySchemes = Object.entries(schemes).filter(
      ([, scheme]) =>
        (scheme as Json).type === 'apiKey' &&
        (scheme as Json).in === 'header' &&
        String((scheme as Json).name).toLowerCase() === 'x-api-key',
    );
    expect(apiKeySchemes).toHaveLength(1);
    const [name] = apiKeySchemes[0]!;
    const paths = doc.paths as Json;
    for (const operation of [
      (paths['/api/notify'] as Json).post as Json,
      (paths['/api/notify/status/{request_id}'] as Json).get as Json,
    ]) {
      const security = (operation.security ?? doc.security) as Json[];
      expect(security.some((requirement) => name in requirement)).toBe(true);
    }
  });

  it('documents the statuses of the send endpoint, the Idempotency-Key header and the body limits', () => {
    const post = ((doc.paths as Json)['/api/notify'] as Json).post as Json;
    expect(Object.keys(post.responses as Json)).toEqual(
      expect.arrayContaining(['200', '400', '401', '409', '413', '422', '429', '500']),
    );
    const parameters = (post.parameters ?? []) as Json[];
    expect(
      parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'),
    ).toBe(true);
    const request = bodySchema(doc, post.requestBody);
    expect(request.required).toEqual(expect.arrayContaining(['user_emails', 'message']));
    expect(request.additionalProperties).toBe(false);
    const properties = request.properties as Json;
    expect(properties.user_emails).toMatchObject({ type: 'array', minItems: 1, maxItems: 50 });
    expect(properties.message).toMatchObject({ type: 'string', maxLength: 4000 });
    expect(properties.external_reference_id).toMatchObject({ type: 'string', maxLength: 200 });

    const responseRequest = resolve(doc, properties.response_request);
    expect(responseRequest.required).toEqual(expect.arrayContaining(['options', 'timeout_minutes']));
    expect(responseRequest.additionalProperties).toBe(false);
    const rr = responseRequest.properties as Json;
    expect(rr.options).toMatchObject({ type: 'array', minItems: 2, maxItems: 5 });
    expect(rr.timeout_minutes).toMatchObject({ type: 'number', minimum: 1, maximum: 1440 });
    expect((rr.disable as Json).enum).toEqual(['onUserAction', 'onTimeout']);
    const option = resolve(doc, (rr.options as Json).items);
    expect((option.properties as Json).text).toMatchObject({ type: 'string', minLength: 1, maxLength: 75 });
    expect((option.properties as Json).value).toMatchObject({ type: 'string', minLength: 1, maxLength: 100 });
  });

  it('documents the statuses of the status endpoint and the request_id format', () => {
    const get = ((doc.paths as Json)['/api/notify/status/{request_id}'] as Json).get as Json;
    expect(Object.keys(get.responses as Json)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '413', '429', '500']),
    );
    const parameter = ((get.parameters ?? []) as Json[]).find((p) => p.name === 'request_id');
    expect(parameter).toMatchObject({ in: 'path', required: true });
    expect((parameter!.schema as Json).pattern).toBe('^req_[A-Za-z0-9]{24}$');
    const status = bodySchema(doc, (get.responses as Json)['200']);
    expect(status.required).toEqual(expect.arrayContaining(['status', 'responses']));
    expect(((status.properties as Json).status as Json).enum).toEqual(['pending', 'finished']);
  });

  it('describes the Idempotency-Key as the server checks it, and the header of a replayed answer', async () => {
    const post = ((doc.paths as Json)['/api/notify'] as Json).post as Json;
    const parameter = ((post.parameters ?? []) as Json[]).find((p) => p.name === 'Idempotency-Key');
    expect(parameter).toBeDefined();
    const pattern = new RegExp(String((parameter!.schema as Json).pattern));
    for (const key of ['deploy-42 retry', 'a\tb', 'caf\u00e9', 'x'.repeat(255), 'x'.repeat(256), ' ']) {
      const answer = await send(host, plainBody(), { idempotencyKey: key });
      expect(answer.status !== 400, JSON.stringify(key)).toBe(pattern.test(key));
    }
    const replay = await send(host, plainBody(), { idempotencyKey: 'deploy-42 retry' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const responses = post.responses as Json;
    for (const status of ['200', '422']) {
      expect(Object.keys((responses[status] as Json).headers as Json), status).toContain(
        'Idempotent-Replayed',
      );
    }
  });

  it('describes user_emails entries as the server checks them, spaces at either end trimmed', async () => {
    const post = ((doc.paths as Json)['/api/notify'] as Json).post as Json;
    const entry = ((bodySchema(doc, post.requestBody).properties as Json).user_emails as Json).items as Json;
    // JSON Schema patterns are ECMA-262 regular expressions; validators such as Ajv compile them with `u`.
    const pattern = new RegExp(String(entry.pattern), 'u');
    const addresses = [
      'bob@acme.test',
      ' bob@acme.test ',
      'a&b@acme.test',
      'o/brien@acme.test',
      'a@b.c',
      'a@1.2.3.4',
      'a@x-.test',
      'first.last+tag@sub.acme.test',
      '.bob@acme.test',
      'bob@acme',
      `${'a'.repeat(64)}@acme.test`,
      `${'a'.repeat(65)}@acme.test`,
      `a@${'b'.repeat(63)}.test`,
      `a@${'b'.repeat(64)}.test`,
      `a@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(60)}.test`,
      `a@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(61)}.test`,
    ];
    // One send (the harness's rate limit allows a few): the 400 names every entry refused.
    const answer = await send(host, { user_emails: addresses, message: 'Hello' });
    expect(answer.status).toBe(400);
    const refused = [...answer.text.matchAll(/user_emails\[(\d+)\]: must be a valid email address/g)].map(
      (match) => addresses[Number(match[1])],
    );
    expect(refused).toEqual(addresses.filter((address) => !pattern.test(address)));
    expect(refused.length).toBeGreaterThan(3);
    expect(refused.length).toBeLessThan(addresses.length - 3);
  });

  it('names HEAD among what a path serves, and the challenge of a 401 as the server sends it', async () => {
    expect(((doc.paths as Json)['/api/notify/status/{request_id}'] as Json).description).toContain('HEAD');
    const get = ((doc.paths as Json)['/api/notify/status/{request_id}'] as Json).get as Json;
    const challenge = (((get.responses as Json)['401'] as Json).headers as Json)['WWW-Authenticate'] as Json;
    const answer = await call(`${host.baseUrl}/api/notify/status/req_${'A'.repeat(24)}`);
    expect(answer.status).toBe(401);
    expect((challenge.schema as Json).enum).toEqual([answer.headers.get('www-authenticate')]);
  });

  it('documents the error shape for every error status', () => {
    const paths = doc.paths as Json;
    const operations = [
      (paths['/api/notify'] as Json).post as Json,
      (paths['/api/notify/status/{request_id}'] as Json).get as Json,
    ];
    for (const operation of operations) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (!status.startsWith('4') && !status.startsWith('5')) continue;
        const schema = bodySchema(doc, response);
        expect(schema.required, `error schema of ${status}`).toEqual(
          expect.arrayContaining(['status', 'details']),
        );
        expect(Object.keys(schema.properties as Json).sort()).toEqual(['details', 'status']);
      }
      const limited = (operation.responses as Json)['429'] as Json;
      expect(Object.keys(limited.headers as Json).map((h) => h.toLowerCase())).toContain('retry-after');
    }
  });
});
