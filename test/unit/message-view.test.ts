import { describe, expect, it } from 'vitest';
import type {
  DisableMode,
  InteractiveRequest,
  RecipientState,
} from '../../core/domain/interactive-request.js';
import type { MessageView } from '../../core/domain/message-view.js';
import { parseMarkdown } from '../../core/markdown/parse.js';
import { formatDuration, formatUtc } from '../../core/request/format-time.js';
import { plainView, requestView, requestViews } from '../../core/request/message-view.js';

const createdAt = Date.parse('2026-11-22T03:30:00.000Z');
const expiresAt = createdAt + 90 * 60_000; // 2026-11-22T05:00:00.000Z
const message = '*Deploy* v2.3 to _production_?\n- `api`\n- `web`';
const alice = 'alice@acme.test';
const bob = 'bob@acme.test';

const recipient = (key: string, value: string | null, expired = false): RecipientState => ({
  email: key.toUpperCase(),
  key,
  value,
  respondedAt: value === null ? null : createdAt + 60_000,
  expired,
});

function request(
  mode: DisableMode,
  status: 'pending' | 'finished',
  aliceValue: string | null,
  overrides: Partial<InteractiveRequest> = {},
): InteractiveRequest {
  const finished = status === 'finished';
  return {
    id: 'req_0123456789abcdefABCDEF01',
    organizationId: 'acme',
    version: 3,
    status,
    message,
    options: [
      { text: 'Approve ✅', value: 'approve' },
      { text: 'Reject', value: 'reject' },
    ],
    mode,
    timeoutMinutes: 90,
    createdAt,
    expiresAt,
    finishedAt: finished ? expiresAt : null,
    externalReferenceId: null,
    sender: { userId: 'u_bob', name: 'Bob Builder' },
    callback: null,
    recipients: [recipient(alice, aliceValue, finished && aliceValue === null), recipient(bob, 'reject')],
    ...overrides,
  };
}

const buttons = [
  { text: 'Approve ✅', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

interface Row {
  name: string;
  request: InteractiveRequest;
  state: MessageView['state'];
  buttonsEnabled: boolean;
  selected: string | null;
  selectedText: string | null;
  footer: string;
}

const rows: Row[] = [
  {
    name: 'onUserAction, not answered yet',
    request: request('onUserAction', 'pending', null),
    state: 'open',
    buttonsEnabled: true,
    selected: null,
    selectedText: null,
    footer: 'Please answer within 1 hour 30 minutes (until 2026-11-22 05:00 UTC) · Sent by Bob Builder',
  },
  {
    name: 'onTimeout, not answered yet',
    request: request('onTimeout', 'pending', null),
    state: 'open',
    buttonsEnabled: true,
    selected: null,
    selectedText: null,
    footer: 'Please answer within 1 hour 30 minutes (until 2026-11-22 05:00 UTC) · Sent by Bob Builder',
  },
  {
    name: 'onUserAction, answered: the choice shows and the buttons go',
    request: request('onUserAction', 'pending', 'approve'),
    state: 'answered',
    buttonsEnabled: false,
    selected: 'approve',
    selectedText: 'Approve ✅',
    footer: 'You answered “Approve ✅” · Sent by Bob Builder',
  },
  {
    name: 'onTimeout, answered: the buttons stay until the deadline',
    request: request('onTimeout', 'pending', 'approve'),
    state: 'changeable',
    buttonsEnabled: true,
    selected: 'approve',
    selectedText: 'Approve ✅',
    footer: 'Your answer: “Approve ✅”. You can change it until 2026-11-22 05:00 UTC · Sent by Bob Builder',
  },
  {
    name: 'onUserAction, expired without an answer',
    request: request('onUserAction', 'finished', null),
    state: 'expired',
    buttonsEnabled: false,
    selected: null,
    selectedText: null,
    footer: 'This request expired at 2026-11-22 05:00 UTC without your answer · Sent by Bob Builder',
  },
  {
    name: 'onTimeout, expired without an answer',
    request: request('onTimeout', 'finished', null),
    state: 'expired',
    buttonsEnabled: false,
    selected: null,
    selectedText: null,
    footer: 'This request expired at 2026-11-22 05:00 UTC without your answer · Sent by Bob Builder',
  },
  {
    name: 'onTimeout, finished with an answer',
    request: request('onTimeout', 'finished', 'reject'),
    state: 'closed',
    buttonsEnabled: false,
    selected: 'reject',
    selectedText: 'Reject',
    footer: 'Closed. Your answer: “Reject” · Sent by Bob Builder',
  },
  {
    name: 'onUserAction, finished because everyone answered',
    request: request('onUserAction', 'finished', 'approve', { finishedAt: createdAt + 120_000 }),
    state: 'closed',
    buttonsEnabled: false,
    selected: 'approve',
    selectedText: 'Approve ✅',
    footer: 'Closed. Your answer: “Approve ✅” · Sent by Bob Builder',
  },
];

describe('requestView', () => {
  it.each(rows)('$name → $state', (row) => {
    const view = requestView(row.request, alice);
    expect(view).toEqual({
      kind: 'interactive',
      sendId: 'req_0123456789abcdefABCDEF01',
      version: row.request.version,
      text: message,
      document: parseMarkdown(message),
      buttons,
      buttonsEnabled: row.buttonsEnabled,
      selected: row.selected,
      selectedText: row.selectedText,
      state: row.state,
      expiresAt,
      footer: row.footer,
    });
    // Spec 2.7: the footer always names the sender (the owner of the API key).
    expect(view.footer?.endsWith('Sent by Bob Builder')).toBe(true);
  });

  it('shows the validity period and the UTC deadline while the request is open', () => {
    const footer = requestView(request('onUserAction', 'pending', null), alice).footer ?? '';
    expect(footer).toContain('1 hour 30 minutes');
    expect(footer).toContain('2026-11-22 05:00 UTC');
    expect(footer).toContain('Sent by Bob Builder');
  });

  it('says that the request expired once it did', () => {
    const footer = requestView(request('onTimeout', 'finished', null), alice).footer ?? '';
    expect(footer).toMatch(/expired/);
    expect(footer).not.toContain('Please answer');
  });

  it('gives the deadline as when it expired, however late the timeout finished it', () => {
    const late = request('onTimeout', 'finished', null, { finishedAt: expiresAt + 61 * 60_000 });
    expect(requestView(late, alice).footer).toBe(
      'This request expired at 2026-11-22 05:00 UTC without your answer · Sent by Bob Builder',
    );
  });

  it('derives the validity period from the request, fractions of a minute included', () => {
    const short = request('onUserAction', 'pending', null, {
      timeoutMinutes: 1.5,
      expiresAt: createdAt + 90_000,
    });
    expect(requestView(short, alice).footer).toBe(
      'Please answer within 1 minute 30 seconds (until 2026-11-22 03:31 UTC) · Sent by Bob Builder',
    );
    const day = request('onUserAction', 'pending', null, {
      timeoutMinutes: 1440,
      expiresAt: createdAt + 1440 * 60_000,
    });
    expect(requestView(day, alice).footer).toBe(
      'Please answer within 24 hours (until 2026-11-23 03:30 UTC) · Sent by Bob Builder',
    );
  });

  it('gives each recipient their own view of the same request', () => {
    const r = request('onTimeout', 'pending', null);
    expect(requestView(r, alice).state).toBe('open');
    const bobView = requestView(r, bob);
    expect(bobView.state).toBe('changeable');
    expect(bobView.selected).toBe('reject');
    expect(bobView.selectedText).toBe('Reject');
  });

  it('isolates an option or a name holding a direction control, so that it cannot turn the footer around', () => {
    const spoof = 'Yes\u202E yb tneS';
    const r = request('onUserAction', 'finished', 'approve', {
      options: [
        { text: spoof, value: 'approve' },
        { text: 'Reject', value: 'reject' },
      ],
      sender: { userId: 'u_eve', name: 'Eve\u202E' },
    });
    expect(requestView(r, alice).footer).toBe(
      `Closed. Your answer: “\u2068${spoof}\u2069” · Sent by \u2068Eve\u202E\u2069`,
    );
    // Text without one reads as written, with nothing added.
    expect(requestView(request('onUserAction', 'finished', 'approve'), alice).footer).toBe(
      'Closed. Your answer: “Approve ✅” · Sent by Bob Builder',
    );
  });

  it('carries the version of the request it shows', () => {
    const r = { ...request('onTimeout', 'pending', 'approve'), version: 7 };
    expect(requestView(r, alice).version).toBe(7);
    expect(requestView(r, bob).version).toBe(7);
  });

  it('parses the message once per request version: every recipient shares one document', () => {
    const viewOf = requestViews(request('onTimeout', 'pending', null));
    expect(viewOf(alice).document).toBe(viewOf(bob).document);
  });

  it('keeps document an own enumerable property, parsed on first read: a spread copy carries it', () => {
    const view = requestView(request('onTimeout', 'pending', null), alice);
    expect(Object.keys(view)).toContain('document');
    expect({ ...view }.document).toEqual(parseMarkdown(message));
    expect(() => {
      (view as { document: unknown }).document = null;
    }).toThrow(TypeError);
  });

  it('does not change the request it renders', () => {
    const r = request('onTimeout', 'pending', 'approve');
    const before = structuredClone(r);
    const view = requestView(r, alice);
    view.buttons.pop();
    expect(r).toEqual(before);
  });
});

describe('plainView', () => {
  it('has no buttons, no selection and no footer', () => {
    expect(plainView('notif_0123456789abcdefABCDEF01', message)).toEqual({
      kind: 'plain',
      sendId: 'notif_0123456789abcdefABCDEF01',
      version: 0,
      text: message,
      document: parseMarkdown(message),
      buttons: [],
      buttonsEnabled: false,
      selected: null,
      selectedText: null,
      state: 'plain',
      expiresAt: null,
      footer: null,
    });
  });
});

describe('formatDuration', () => {
  it.each([
    [90 * 60_000, '1 hour 30 minutes'],
    [1.5 * 60_000, '1 minute 30 seconds'],
    [60_000, '1 minute'],
    [2 * 60_000, '2 minutes'],
    [60 * 60_000, '1 hour'],
    [61 * 60_000, '1 hour 1 minute'],
    [120 * 60_000 + 1_000, '2 hours 1 second'],
    [125 * 60_000 + 2_000, '2 hours 5 minutes 2 seconds'],
    [1440 * 60_000, '24 hours'],
    [1.01 * 60_000, '1 minute 1 second'], // 60.6 s rounds to 61 s
    [59_500, '1 minute'],
    [1_000, '1 second'],
    [0, '0 seconds'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatUtc', () => {
  it.each([
    ['2026-11-22T05:00:00.000Z', '2026-11-22 05:00 UTC'],
    ['2026-11-22T05:00:59.999Z', '2026-11-22 05:00 UTC'],
    ['2026-01-01T00:00:00.000Z', '2026-01-01 00:00 UTC'],
    ['2026-12-31T23:59:00.000Z', '2026-12-31 23:59 UTC'],
    // An instant written with an offset is shown in UTC.
    ['2026-03-29T02:30:00.000+02:00', '2026-03-29 00:30 UTC'],
  ])('%s → %s', (iso, text) => {
    expect(formatUtc(Date.parse(iso))).toBe(text);
  });
});
