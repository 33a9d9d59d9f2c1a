import { type Clock, errorResponse, type HttpResponse, type Route } from '../../../core/adapter-kit.js';
import { type BlockActions, parseInteraction } from './interaction.js';
import { verifySlackSignature } from './signature.js';

/** What the interactivity endpoint needs. */
export interface InteractivityRouteOptions {
  signingSecret: string;
  clock: Clock;
  /**
   * The 503 that says why clicks cannot be taken now, or null when they can: before the notifier
   * connected the transport they would have nowhere to go, and once it is stopping none may be
   * left unapplied.
   */
  refusal: () => HttpResponse | null;
  /** Starts applying clicks; must not wait for them (Slack wants its answer within 3 seconds). */
  accept: (clicks: BlockActions) => void;
}

/** Slack needs nothing but the status: an empty body keeps the message as it is. */
const acknowledged: HttpResponse = { status: 200, headers: {}, body: '' };

/**
 * The largest click payload read. Slack's carries the whole message, its text and its blocks, URL-
 * encoded: a message of 4,000 characters outside Latin script (9 bytes each once encoded, twice
 * over) with its buttons comes to about 100 KB, past the API's 64 KiB.
 */
const maxPayloadBytes = 512 * 1024;

/**
 * `POST /slack/interactivity`, the app's interactivity request URL. The signature is checked over
 * the raw bytes before anything else is read; a signed request is answered at once, and its clicks
 * are applied after the answer.
 */
export function interactivityRoute(options: InteractivityRouteOptions): Route {
  return {
    method: 'POST',
    path: '/slack/interactivity',
    maxBodyBytes: maxPayloadBytes,
    async handle(request) {
      const verdict = verifySlackSignature(
        options.signingSecret,
        {
          timestamp: request.headers['x-slack-request-timestamp'],
          signature: request.headers['x-slack-signature'],
          body: request.body,
        },
        options.clock.now(),
      );
      if (!verdict.ok) return errorResponse(401, verdict.details);
      const refusal = options.refusal();
      if (refusal !== null) return refusal;
      const interaction = parseInteraction(request.body);
      if (interaction.kind === 'invalid') return errorResponse(400, interaction.details);
      if (interaction.kind === 'block-actions') options.accept(interaction.clicks);
      return acknowledged;
    },
  };
}
