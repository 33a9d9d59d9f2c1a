/** Markup that is already safe: produced by {@link html}, never by concatenating input. */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const entities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for element content and for quoted attribute values alike. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => entities[char] ?? char);

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A template tag that escapes every interpolated value unless it is {@link SafeHtml} (the result of
 * another `html` template); lists are joined; null, undefined and false render as nothing. Names,
 * labels and emails of users therefore never become markup.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  for (const [index, value] of values.entries()) out += render(value) + (strings[index + 1] ?? '');
  return new SafeHtml(out);
}
