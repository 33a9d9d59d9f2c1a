import { hash } from 'node:crypto';
import { randomBase62 } from './random-id.js';

/** The recognizable start of every key, so that secret scanners can find leaked ones. */
export const apiKeyPrefix = 'cnk_';
/** How many characters of a key listings show. */
export const visiblePrefixLength = 12;

/** A new plaintext key: `cnk_` + 40 base62 characters (238 bits). */
export const generateApiKey = (): string => `${apiKeyPrefix}${randomBase62(40)}`;

/** Lowercase hex SHA-256: the only form in which keys are stored. */
export const digestApiKey = (plaintext: string): string => hash('sha256', plaintext, 'hex');

/** The part of a key shown in listings. */
export const visiblePrefix = (plaintext: string): string => plaintext.slice(0, visiblePrefixLength);
