import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecipientState } from '../../core/domain/interactive-request.js';
import { statusBody, statusJson } from '../../core/request/status-body.js';
import { requestStatusSchema } from '../../core/schemas/responses.js';
import { sampleRecipientState, sampleRequest } from '../support/sample-request.js';

/** Any text a caller could give: every code unit, lone surrogates, quotes and controls included. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('"', '\\', '\n\u0000\u001f', '\u2028\u2029', '\ud800', '\udfff x', '</script>'),
);

const anyRecipient: fc.Arbitrary<RecipientState> = fc
  .record({
    email: anyText,
    value: fc.option(anyText),
    respondedAt: fc.option(fc.integer({ min: 0, max: 4_102_444_800_000 })),
    expired: fc.boolean(),
  })
  .map((r) => ({ ...r, key: r.email.toLowerCase() }));

describe('statusJson: the status answer written without JSON.stringify of the object', () => {
  it('is byte for byte the JSON.stringify of statusBody, for any recipients, reference and status', () => {
    fc.assert(
      fc.property(
        fc.array(anyRecipient, { minLength: 1, maxLength: 5 }),
        fc.option(anyText),
        fc.constantFrom('pending' as const, 'finished' as const),
        (recipients, externalReferenceId, status) => {
          const request = sampleRequest({ recipients, externalReferenceId, status });
          expect(statusJson(request)).toBe(JSON.stringify(statusBody(request)));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('answers what the status schema accepts, in the order of docs/http-api.md', () => {
    const request = sampleRequest({
      externalReferenceId: 'deploy "42"',
      status: 'finished',
      recipients: [sampleRecipientState('approve'), sampleRecipientState(null, true)],
    });
    const json = statusJson(request);
    expect(requestStatusSchema.parse(JSON.parse(json))).toEqual(statusBody(request));
    expect(json).toBe(
      '{"status":"finished","external_reference_id":"deploy \\"42\\"","responses":[' +
        '{"user_email":"bob@acme.test","option_value":"approve","timestamp":"2026-03-01T09:01:00.000Z","expired":false},' +
        '{"user_email":"bob@acme.test","option_value":null,"timestamp":null,"expired":true}]}',
    );
  });
});
