import { emailAddress, errorResponse, jsonResponse, normalizeEmail } from '../../../core/adapter-kit.js';
import { toMessageJson, toUserListJson } from './message-json.js';
import type { ConnectedHandler } from './route-context.js';

/** The page polls these; a cached answer would hide new messages and clicks. */
const noStore = { 'cache-control': 'no-store' };

const emailSchema = emailAddress();

/** `GET /inbox/api/users`: every user the core knows, sorted by address. */
export const handleListUsers: ConnectedHandler = async ({ sink }) =>
  jsonResponse(200, toUserListJson(await sink.listUsers()), noStore);

/** `GET /inbox/api/messages?email=…`: the messages of one user, in delivery order. */
export const handleListMessages: ConnectedHandler = async ({ messages }, request) => {
  const email = request.query.get('email');
  if (email === null || email.trim() === '') return errorResponse(400, 'email: is required');
  const address = normalizeEmail(email);
  if (!emailSchema.safeParse(address).success)
    return errorResponse(400, 'email: must be a valid email address');
  return jsonResponse(200, (await messages.list(address)).map(toMessageJson), noStore);
};
