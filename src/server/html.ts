/**
 * HTML with every interpolated value escaped: `html\`<b>${title}</b>\`` escapes `title`; only an
 * `Html` value (another `html` result, or `raw` for text built here) goes in as it is.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = string | number | boolean | null | undefined | Html | readonly Part[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Markup written by curupira itself (never text from GitHub or an agent). */
export function raw(text: string): Html {
  return new Html(text);
}
