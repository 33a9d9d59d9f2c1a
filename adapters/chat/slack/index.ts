/**
 * The Slack transport (`chat-notify/slack`): direct messages with Block Kit buttons through the
 * official Web API client, clicks through `POST /slack/interactivity` (docs/slack.md).
 */
export type { SlackMessage } from './blocks.js';
export { slackMessage } from './blocks.js';
export type { SlackRetryOptions } from './clients.js';
export {
  type SlackSignatureVerdict,
  type SlackSignedRequest,
  verifySlackSignature,
} from './signature.js';
export {
  type SlackInstallation,
  type SlackInstallationResolver,
  type SlackTransport,
  type SlackTransportOptions,
  slackTransport,
} from './transport.js';
