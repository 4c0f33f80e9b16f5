/**
 * hidden-content: instructions placed where a person reading the rendered issue does not see them
 * but the model reads the raw markdown.
 *
 * Regions: HTML comments (`html-comment`), markdown comments such as `[//]: # (…)`
 * (`markdown-comment`), image alt text and `<img alt/title>` (`image-alt`), link titles
 * (`link-title`), collapsed `<details>` blocks (`collapsed-details`), and elements hidden with
 * `display:none`, `hidden`, zero font size or zero opacity (`hidden-html`).
 *
 * A region is reported only when it carries an instruction (see signals.ts): an override,
 * exfiltration, credential request, role token or config change is critical; words addressed to
 * the agent plus a directive ("Note to the AI agent: run …") or a shell command with a directive is
 * high; words addressed to the agent alone are medium. Plain template boilerplate
 * (`<!-- Describe the bug -->`, `<!-- Please include steps to reproduce -->`), alt text that
 * describes a picture and logs in a `<details>` block are not reported.
 *
 * Context: regions inside code are not hidden (they render as text) and are skipped.
 */
import type { Hit, Scanner, Severity, TextView } from '../types.js';
import { instructionSignal, type Signal } from './signals.js';

interface Region {
  rule: string;
  pattern: RegExp;
}

const REGIONS: Region[] = [
  { rule: 'html-comment', pattern: /<!--([\s\S]*?)(?:-->|$)/gu },
  {
    rule: 'markdown-comment',
    pattern:
      /^[ \t]{0,3}\[(?:\/\/|comment|_|#|\s*)\]:\s*(?:#|<>|\/\/)\s*(?:\(([^\n]*)\)|"([^\n]*)"|'([^\n]*)')/gimu,
  },
  { rule: 'image-alt', pattern: /!\[([^\]]{1,600})\]\s*[([]/gu },
  { rule: 'image-alt', pattern: /<img\b[^>]*?\b(?:alt|title)\s*=\s*(?:"([^"]*)"|'([^']*)')/giu },
  {
    rule: 'link-title',
    pattern:
      /\]\(\s*<?[^\s)>]*>?\s+(?:"([^"]*)"|'([^']*)'|\(([^)]*)\))\s*\)|^[ \t]{0,3}\[[^\]\n]+\]:\s*\S+\s+(?:"([^"\n]*)"|'([^'\n]*)'|\(([^)\n]*)\))/gimu,
  },
  {
    rule: 'collapsed-details',
    pattern: /<details\b(?![^>]*\bopen\b)[^>]*>([\s\S]*?)(?:<\/details\s*>|$)/giu,
  },
  {
    rule: 'hidden-html',
    pattern:
      /<([a-z][\w-]*)\b[^>]*?(?:style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*(?:white|#fff(?:fff)?|transparent))[^"']*["']|\shidden(?:\s*=\s*["'][^"']*["'])?(?=[\s>/]))[^>]*>([\s\S]*?)<\/\1\s*>/giu,
  },
];

const SEVERITY: Record<Signal, Severity> = {
  payload: 'critical',
  'addressed-directive': 'high',
  'shell-directive': 'high',
  addressed: 'medium',
};

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  for (const { rule, pattern } of REGIONS) {
    for (const match of view.text.matchAll(pattern)) {
      if (view.inCode(match.index)) continue;
      // The region as prose: code inside it (logs in a details block) blanked, spaces collapsed.
      const content = view.prose
        .slice(match.index, match.index + match[0].length)
        .replace(/\s{2,}/g, ' ')
        .replace(/^<!--|-->$/g, '');
      const inner = match
        .slice(1)
        .filter((group) => group !== undefined)
        .join(' ');
      if (inner.trim() === '') continue;
      const signal = instructionSignal(
        rule === 'collapsed-details' || rule === 'hidden-html' ? content : inner,
      );
      if (!signal) continue;
      // Logs in a collapsed block often quote shell commands; only words to the agent count there.
      if (rule === 'collapsed-details' && signal === 'shell-directive') continue;
      const severity = SEVERITY[signal];
      hits.push({ rule, severity, offset: match.index, length: Math.min(match[0].length, 200) });
    }
  }
  return hits;
}

export const hiddenContent: Scanner = {
  id: 'hidden-content',
  summary: 'instructions in HTML or markdown comments, alt text, link titles, collapsed or hidden blocks',
  scan,
};
